"""The zh style measure of issue 16: what in a rendered Chinese report breaks the zh style.

``measure(text, names)`` returns the offending spans of a zh report (Markdown or text), by
category:

- ``latin``: a Latin word (``_*[A-Za-z][A-Za-z0-9_]*``, joined by ``-`` or ``'``) that is not
  inside a code span or block, a quote, a URL, and is not a proper name. Code: fenced blocks
  (``````` or ``~~~``), lines indented by four spaces or a tab after a blank line (text
  output), and inline code spans. Quotes: blockquote lines (``>``), and text between
  ``“”``, ``「」``, ``『』`` or a pair of ``"`` on one line. URLs: ``scheme://...``, ``www.``,
  ``<...>`` autolinks and ``](...)`` link targets. Proper names: ``names`` (see
  :func:`proper_names`), ``@login`` mentions, and the names a report's own header gives for
  people (the value of a ``作者`` / ``评审者`` line).
- ``punct``: a half-width ``, : ; ( ) ! ?`` (outside code, quotes and URLs) whose nearest
  non-space character on the left or on the right, markup (``* _ ` \\``) skipped, is a CJK
  character: Chinese takes ``，：；（）！？`` there.
- ``list-sep``: a half-width ``,`` on a line holding CJK text, with no CJK character as the
  nearest neighbour on either side (``MTP, EAGLE``; ```a`, `b```): a Chinese list takes ``、``.
  A person's name after ``作者``/``评审者`` is data as written (a git author "Li, Jiang"): its
  punctuation is checked by neither this nor ``punct``.
- ``entity``: an HTML character reference (``&gt;``, ``&#39;``) anywhere in the text (the
  reader sees it raw in Markdown and text outputs).
- ``fragment``: a relation phrase joined from fragments, in two shapes:

  1. a clause that ends with a bare PR reference ``#N`` (then only spaces, a parenthesised
     title, ``:``/``：``, ``。``/``；`` or the line's end) where the two CJK characters just
     before the reference do not end with a linking word of :data:`LINKERS` (a verb that takes
     the PR as its object, or a preposition): "本 PR 后续工作 #20059" is one ("工作" is a
     noun: the words are in the wrong order), "本 PR 依赖 #47766" is not;
  2. a line (after a list marker) that starts with a PR reference ``#N`` and whose clause ends
     with ``本 PR``/``此 PR`` right after CJK text that ends with neither a word of
     :data:`LINKERS` nor a character of :data:`LINK_CHARS`: "#47144 修复其引入的问题本 PR"
     (the subject came first, the object was appended); "#20059 的后续工作是本 PR" is a
     sentence.

Script mode: ``python3 tests/zhstyle.py REPORT...`` prints, per report, the count of each
category, then the totals (``-v`` lists the spans). Names come from the default profile and
``data/glossary.toml``.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CATEGORIES = ("latin", "punct", "list-sep", "entity", "fragment")

# Names that are not in the profile: the tool's own vocabulary, the hosting service, the version
# control tool and the time standard (Chinese technical prose writes them in Latin letters).
BASE_NAMES = ("PR", "GitHub", "CUDA", "Graph", "CI", "GPU", "vLLM", "Python", "prkb", "Git",
              "UTC")

# Words before a bare ``#N`` that make it an object or a complement (verbs taking a PR, and
# prepositions); a clause ending "<noun> #N" is a fragment.
LINKERS = (
    "依赖", "提及", "取代", "回滚", "修复", "替代", "参见", "见", "于", "在", "与", "和", "及",
    "由", "被", "对", "自", "从", "为", "是", "即", "同", "如", "比", "向", "给", "将", "把",
    "了", "过", "撤销", "引用", "跟进", "关闭", "合并", "沿用", "延续", "补充", "指向", "早于",
    "晚于", "之于", "等同于", "重复", "覆盖", "修改", "回退", "包含", "需要", "基于",
)
LINK_CHARS = "被由对给与和及于在为是将把"

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK}]")
_WORD = re.compile(r"(?<![A-Za-z0-9_@])_*[A-Za-z][A-Za-z0-9_]*(?:['-][A-Za-z0-9_]+)*")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s<>)\]]+|www\.[^\s<>)\]]+|<[^<>\s]+>|\]\([^)\s]*\)",
                  re.I)
_QUOTE = re.compile(r"“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|\"[^\"\n]*\"")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_MENTION = re.compile(r"@[A-Za-z0-9][A-Za-z0-9-]*")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_PEOPLE = re.compile(r"^\s*[-*•]?\s*(?:作者|评审者|评审人)\s*[:：]\s*(.+)$")
_END = r"[ \t]*(?:\([^()\n]*\)|（[^（）\n]*）)?[ \t]*(?:[:：。；;]|$)"
_FRAG_REF = re.compile(rf"([{_CJK}]{{1,2}})[ \t]*#\d+(?=(?:\\?\]|[*_])*{_END})", re.M)
_FRAG_PR = re.compile(
    rf"^\s*(?:[-*•]\s*)?\\?#\d+[^。；\n]*?([{_CJK}])[ \t]*(?:本|此)[ \t]*PR(?={_END})", re.M
)
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")
_SKIP = set(" \t*_`\\")


@dataclass(frozen=True)
class Span:
    category: str
    line: int      # 1-based
    col: int       # 0-based, in the line
    text: str


def _glossary_zh_words() -> set[str]:
    path = ROOT / "data" / "glossary.toml"
    if not path.exists():
        return set()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "zh" and isinstance(x, str):
                    out.update(m.group(0) for m in _WORD.finditer(x))
                else:
                    walk(x)

    walk(data)
    return out


def proper_names(profile: Any = None) -> set[str]:
    """Words a zh report may hold outside code and quotes: :data:`BASE_NAMES`; from the
    profile its levels and their old names, the symbol family, methods, enum and display
    name, the audit's names (builder bases, attributes, calls, flags, markers), platform names
    and title tags, feature names and their terms that hold a capital letter (``DeepSeek``,
    not ``speculative``); and the Latin words the profile's and the glossary's own zh texts
    use (their chosen terms, e.g. ``decode``)."""
    if profile is None:
        sys.path.insert(0, str(ROOT))
        from prkb.profile import load_profile

        profile = load_profile()
    names: set[str] = set(BASE_NAMES)
    names.update(profile.levels, profile.level_aliases, profile.family, profile.methods)
    names.update((profile.enum, profile.display))
    for v in profile.audit.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, str):
                names.update(m.group(0) for m in _WORD.finditer(x))
    for p in profile.platforms:
        names.update(w for w in _WORD.findall(p.en) if any(c.isupper() for c in w))
        names.update(p.title_tags)
    for feat, terms in profile.features.items():
        for t in (feat, *terms):
            names.update(w for w in _WORD.findall(t) if any(c.isupper() for c in w))
    zh_texts: list[str] = [profile.title_zh, str(profile.core_rule.get("zh") or "")]
    zh_texts += list(profile.level_meaning.get("zh", {}).values())
    zh_texts += [p.zh for p in profile.platforms]
    zh_texts += [t for t in profile.words("zh").values() if t]  # its [wording]
    for t in zh_texts:
        names.update(m.group(0) for m in _WORD.finditer(t))
    names.update(_glossary_zh_words())
    return names


def _masks(lines: list[str]) -> list[list[bool]]:
    """Per line, per character: whether it is code, a quote or a URL (not measured)."""
    out: list[list[bool]] = []
    fence: str | None = None
    prev_blank = True
    indented = False
    for line in lines:
        mask = [False] * len(line)
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence is not None:
            out.append([True] * len(line))
            if marker == fence:
                fence = None
            continue
        if marker in ("```", "~~~"):
            fence = marker
            out.append([True] * len(line))
            continue
        # an indented block starts after a blank line, not at a list item; once started, every
        # indented line is code (a diff's removed line "-    x" is not a list item)
        if line.startswith(("    ", "\t")) and stripped and (indented or (
                prev_blank and not re.match(r"\s*(?:[-*+•]|\d+[.)])\s", line))):
            indented = True
            out.append([True] * len(line))
            continue
        indented = False if stripped else indented
        prev_blank = not stripped
        if stripped.startswith(">"):
            out.append([True] * len(line))
            continue
        for rx in (_CODE_SPAN, _URL, _QUOTE):
            for m in rx.finditer(line):
                if rx is not _CODE_SPAN and all(mask[m.start():m.end()]):
                    continue
                for i in range(m.start(), m.end()):
                    mask[i] = True
        out.append(mask)
    return out


def _neighbour(line: str, mask: list[bool], i: int, step: int) -> str:
    j = i + step
    while 0 <= j < len(line) and line[j] in _SKIP:
        j += step
    return line[j] if 0 <= j < len(line) else ""


def _report_people(lines: list[str]) -> set[str]:
    out: set[str] = set()
    for line in lines:
        m = _PEOPLE.match(line)
        if m:
            out.update(_WORD.findall(m.group(1)))
    return out


def measure(text: str, names: Iterable[str] = ()) -> dict[str, list[Span]]:
    """The offending spans of one zh report, by category (see the module's docstring).
    Markdown's backslash escapes (``\\_``, ``\\[``) are undone first, so an escaped
    identifier is one word; columns are those of the unescaped line."""
    lines = _ESCAPE.sub(r"\1", text).split("\n")
    masks = _masks(lines)
    allowed = set(names) | _report_people(lines)
    found: dict[str, list[Span]] = {c: [] for c in CATEGORIES}
    for no, (line, mask) in enumerate(zip(lines, masks, strict=True), start=1):
        for m in _ENTITY.finditer(line):
            found["entity"].append(Span("entity", no, m.start(), m.group(0)))
        mentions = {i for m in _MENTION.finditer(line) for i in range(m.start(), m.end())}
        for m in _WORD.finditer(line):
            if any(mask[m.start():m.end()]) or m.start() in mentions:
                continue
            if line[max(0, m.start() - 1):m.start()] == "&":
                continue  # an entity, counted above
            if m.group(0) in allowed:
                continue
            found["latin"].append(Span("latin", no, m.start(), m.group(0)))
        has_cjk = _CJK_RE.search(line) is not None
        # a person's name is data as written ("Li, Jiang" is one git author name)
        person = _PEOPLE.match(line)
        name_span = range(person.start(1), person.end(1)) if person else range(0)
        for i, ch in enumerate(line):
            if ch not in ",:;()!?" or mask[i] or i in name_span:
                continue
            if ch in "!?" and i + 1 < len(line) and line[i + 1] not in " \t":
                continue
            left = _neighbour(line, mask, i, -1)
            right = _neighbour(line, mask, i, 1)
            cjk_side = bool(_CJK_RE.match(left or "x")) or bool(_CJK_RE.match(right or "x"))
            if cjk_side:
                found["punct"].append(Span("punct", no, i, ch))
            elif ch == "," and has_cjk:
                found["list-sep"].append(Span("list-sep", no, i, ch))
        for m in _FRAG_REF.finditer(line):
            if any(mask[m.start():m.end()]):
                continue
            before = line[:m.start(1) + len(m.group(1))].rstrip()
            if not before.endswith(LINKERS):
                found["fragment"].append(Span("fragment", no, m.start(), m.group(0)))
        for m in _FRAG_PR.finditer(line):
            before = line[:m.end(1)]
            if any(mask[m.start(1):m.end()]) or before.endswith((*LINKERS, *LINK_CHARS)):
                continue
            found["fragment"].append(Span("fragment", no, m.start(1), m.group(0).strip()))
    return found


def counts(found: dict[str, list[Span]]) -> dict[str, int]:
    return {c: len(found.get(c, [])) for c in CATEGORIES}


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"]
    if not paths:
        print("usage: python3 tests/zhstyle.py [-v] REPORT...", file=sys.stderr)
        return 2
    names = proper_names()
    total = dict.fromkeys(CATEGORIES, 0)
    width = max(len(p) for p in paths)
    print(f"{'report':<{width}}  " + "  ".join(f"{c:>8}" for c in CATEGORIES))
    for p in paths:
        found = measure(Path(p).read_text(encoding="utf-8"), names)
        n = counts(found)
        for c in CATEGORIES:
            total[c] += n[c]
        print(f"{p:<{width}}  " + "  ".join(f"{n[c]:>8}" for c in CATEGORIES))
        if verbose:
            for c in CATEGORIES:
                for s in found[c]:
                    print(f"    {c} {s.line}:{s.col} {s.text!r}")
    print(f"{'total':<{width}}  " + "  ".join(f"{total[c]:>8}" for c in CATEGORIES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
