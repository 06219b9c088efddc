#!/usr/bin/env python3
"""prkb's message catalogs, one workflow: the source says a message, ``prkb.pot`` lists it,
both catalogs translate it.

    python3 tests/catalog.py extract   # write templates/locales/prkb.pot from the source
    python3 tests/catalog.py check     # the problems, one a line; exit 1 when there is one

``extract`` reads what ``templates/babel.cfg`` names (the templates, and the Python files
under ``prkb/``) with Babel and writes the template catalog with each message's places
(file:line), sorted by message, with no creation date: the same source gives the same file.

``check`` extracts afresh and reports: a message in use missing from ``prkb.pot`` or from a
catalog (``templates/locales/{en,zh_CN}/LC_MESSAGES/prkb.po``); a catalog entry no template or
Python line says (an entry of ``msgctxt "commit"``, the wording of a report about a commit
without a PR, is in use when its msgid is); a stale ``prkb.pot`` (other messages or places);
the two catalogs holding different entries; a Chinese entry untranslated or with other
placeholders than the English; a rule's ``MESSAGES`` (``prkb/analyze/rules/``) rewording a
message nothing says. ``tests/test_catalog_workflow.py`` runs it.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from babel.messages import frontend
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir, extract_python
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
CONFIG = "templates/babel.cfg"
POT = "templates/locales/prkb.pot"
CATALOGS = {loc: f"templates/locales/{loc}/LC_MESSAGES/prkb.po" for loc in ("en", "zh_CN")}
SOURCES = ("templates", "prkb")  # the folders templates/babel.cfg's patterns start with
SUBJECTS = ("commit",)  # a catalog's own wording of a message (render/i18n.SubjectCatalog)
RULES = "prkb/analyze/rules"
_PLACEHOLDER = re.compile(r"%\(\w+\)[a-z]|\{\w+\}")
_GENERATED_BY = re.compile(rb'^"Generated-By: [^"]*"\n', re.M)
_CREATED = re.compile(rb'^"POT-Creation-Date: [^"]*"\n', re.M)
_HEADER = f"""\
# The messages prkb says, which templates/locales/*/LC_MESSAGES/prkb.po translate.
# Made by `python3 tests/catalog.py extract` from what {CONFIG} names: do not edit.
#"""

Key = tuple[str | None, str]  # (msgctxt, msgid: a plural message's singular)


def _key(m: Message) -> Key:
    return m.context, m.id[0] if isinstance(m.id, (list, tuple)) else str(m.id)


def _show(key: Key) -> str:
    return f"msgctxt {key[0]!r} msgid {key[1]!r}" if key[0] else repr(key[1])


def _python(fileobj: IO[bytes], keywords: Any, comment_tags: Collection[str],
            options: Any) -> Iterator[Any]:
    """Babel's Python extractor, for a file that calls a keyword at all (most of prkb's
    modules say no message: not tokenized, two thirds of the time saved)."""
    source = fileobj.read()
    call = rb"(?<!\w)(?:" + b"|".join(re.escape(k.encode()) for k in keywords) + rb")\s*\("
    if re.search(call, source):
        yield from extract_python(io.BytesIO(source), keywords, comment_tags, options)


def extract(root: Path = ROOT) -> Catalog:
    """Every message the source under ``root`` says, with its places (paths from ``root``)."""
    parse = getattr(frontend, "parse_mapping_cfg", None) or frontend.parse_mapping
    with (root / CONFIG).open(encoding="utf-8") as fh:
        method_map, options_map = parse(fh, CONFIG)
    method_map = [(pattern, _python if method == "python" else method)
                  for pattern, method in method_map]

    def wanted(path: str) -> bool:  # not .git, __pycache__, or a folder outside SOURCES
        return not os.path.basename(path).startswith((".", "_")) and \
            Path(path).relative_to(root).parts[0] in SOURCES

    with (root / "pyproject.toml").open("rb") as project:
        version = tomllib.load(project)["project"]["version"]
    catalog = Catalog(project="prkb", version=version, header_comment=_HEADER,
                      charset="utf-8", fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
            root, method_map, options_map, directory_filter=wanted):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments,
                    context=context)
    return catalog


def pot_bytes(catalog: Catalog) -> bytes:
    """The ``.pot`` text: sorted by message, each with its places (``#: file:line``), a
    message on one line (as the catalogs write them), without the date and the Babel
    version that would change every time it is made."""
    buf = io.BytesIO()
    write_po(buf, catalog, width=0, sort_output=True, include_lineno=True)
    text = _CREATED.sub(b"", buf.getvalue())
    return _GENERATED_BY.sub(lambda _m: b'"Generated-By: tests/catalog.py\\n"\n', text)


def write_pot(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pot_bytes(catalog))


def _read(path: Path) -> Catalog:
    with path.open("rb") as fh:
        return read_po(fh, abort_invalid=True)


def _entries(catalog: Catalog) -> dict[Key, Message]:
    return {_key(m): m for m in catalog if m.id}


def _places(m: Message) -> list[tuple[str, int]]:
    return sorted((str(f), int(n or 0)) for f, n in m.locations)


def _where(m: Message) -> str:
    return " ".join(f"{f}:{n}" for f, n in _places(m)[:2])


def _stale_pot(root: Path, fresh: dict[Key, Message]) -> list[str]:
    path = root / POT
    if not path.exists():
        return [f"{POT}: missing (python3 tests/catalog.py extract)"]
    committed = _entries(_read(path))
    found = [f"{POT}: lacks {_show(k)} ({_where(m)})" for k, m in fresh.items()
             if k not in committed]
    found += [f"{POT}: holds {_show(k)}, which nothing says now" for k in committed
              if k not in fresh]
    found += [f"{POT}: other places for {_show(k)}: {_where(m)}" for k, m in fresh.items()
              if k in committed and (_places(m) != _places(committed[k])
                                     or m.id != committed[k].id)]
    if found:
        found.append(f"{POT}: stale, run python3 tests/catalog.py extract")
    return found


def _catalog_problems(name: str, entries: dict[Key, Message],
                      fresh: dict[Key, Message]) -> list[str]:
    found = [f"{name}: lacks {_show(k)} ({_where(m)})" for k, m in fresh.items()
             if k not in entries]
    used = {msgid for ctx, msgid in fresh if ctx is None}
    for (ctx, msgid), m in entries.items():
        if (ctx, msgid) in fresh:
            if m.pluralizable != fresh[ctx, msgid].pluralizable or \
                    (m.pluralizable and m.id != fresh[ctx, msgid].id):
                found.append(f"{name}: {_show((ctx, msgid))} is said as {fresh[ctx, msgid].id!r}")
        elif ctx is None:
            found.append(f"{name}: {_show((ctx, msgid))} is not in use")
        elif ctx not in SUBJECTS:
            found.append(f"{name}: {_show((ctx, msgid))}: unknown msgctxt")
        elif msgid not in used:
            found.append(f"{name}: {_show((ctx, msgid))}: its msgid is not in use")
    return found


def _texts(m: Message) -> list[str]:
    return [str(s) for s in (m.string if isinstance(m.string, (list, tuple)) else [m.string])]


def _translation_problems(en: dict[Key, Message], zh: dict[Key, Message]) -> list[str]:
    name = CATALOGS["zh_CN"]
    found = [f"{name}: lacks {_show(k)}, which {CATALOGS['en']} holds" for k in en if k not in zh]
    for k, m in zh.items():
        if k not in en:
            found.append(f"{name}: holds {_show(k)}, which {CATALOGS['en']} does not")
            continue
        english = [t for t in _texts(en[k]) if t] or [k[1]]
        want = Counter(_PLACEHOLDER.findall(english[0]))
        for text in _texts(m):
            if not text:
                found.append(f"{name}: {_show(k)} is not translated")
            elif Counter(_PLACEHOLDER.findall(text)) != want:
                found.append(f"{name}: {_show(k)}: placeholders {sorted(want.elements())} "
                             f"in English, {sorted(_PLACEHOLDER.findall(text))} in Chinese")
    return found


def rule_messages(root: Path = ROOT) -> dict[str, list[str]]:
    """The generic msgids each rule module's ``MESSAGES`` rewords (a dict of string keys),
    by module path: read from the source, nothing imported."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / RULES).rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and \
                len(node.targets) == 1 else getattr(node, "target", None)
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and target.id == "MESSAGES" and \
                    isinstance(value, ast.Dict):
                found[path.relative_to(root).as_posix()] = [
                    k.value for k in value.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return found


def problems(root: Path = ROOT, fresh: Catalog | None = None) -> list[str]:
    """What :func:`check` reports for the tree at ``root`` (``fresh``: its extraction, when
    made already), one line a problem; empty when all is well."""
    messages = _entries(fresh if fresh is not None else extract(root))
    found = _stale_pot(root, messages)
    cats = {loc: _entries(_read(root / path)) for loc, path in CATALOGS.items()}
    for loc, entries in cats.items():
        found += _catalog_problems(CATALOGS[loc], entries, messages)
    found += _translation_problems(cats["en"], cats["zh_CN"])
    for path, msgids in rule_messages(root).items():
        found += [f"{path}: MESSAGES rewords {msgid!r}, which nothing says" for msgid in msgids
                  if (None, msgid) not in messages]
    return found


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("extract", "check"))
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (default: %(default)s)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    root = args.root.resolve()
    catalog = extract(root)
    if args.command == "extract":
        write_pot(catalog, root / POT)
        print(f"{POT}: {len(catalog)} messages")
        return 0
    found = problems(root, catalog)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} problems", file=sys.stderr)
        return 1
    print(f"catalogs OK: {len(catalog)} messages in use, in {POT} and both catalogs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
