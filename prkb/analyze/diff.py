"""Declarations read from a unified-diff patch when the whole files are not at hand.

GitHub gives a PR's files as patches. When only the patch exists, the class of each changed
line is taken from the hunk's section header (``@@ ... @@ class Foo(Base):``) or from the last
``class`` line seen in the hunk, and values are read from the changed lines themselves. A
declaration whose first line is unchanged context but whose value, continued over lines in
brackets, has changed lines (``x = (`` / ``-    A.OLD`` / ``+    A.NEW`` / ``)``) is read on
both sides when its brackets (or backslashes) close inside the hunk; when the hunk does not
show the declaration's first line, the patch cannot tell which declaration changed: nothing is
read, and :func:`read_patch` says that only whole files can tell.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from ..models import SymbolChange
from ..profile import Profile
from .symbols import direction_of, normalize_value

_CLASS_RE = re.compile(r"^class\s+([A-Za-z_][A-Za-z0-9_]*)")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class PatchLine:
    kind: str  # "+", "-", " "
    text: str
    cls: str | None
    hunk: int = 0  # index of the hunk the line is in


def iter_patch_lines(patch: str) -> list[PatchLine]:
    """Lines of one file's patch (GitHub's ``patch`` field: hunks without file headers)."""
    text = patch.replace("\r\n", "\n")
    if not text.endswith("\n"):
        text += "\n"
    if not text.startswith("---"):
        text = "--- a/f\n+++ b/f\n" + text
    out: list[PatchLine] = []
    try:
        ps = PatchSet(text)
    except UnidiffParseError:
        return _loose_lines(patch)
    n = 0
    for pf in ps:
        for hunk in pf:
            n += 1
            cls: str | None = None
            m = _CLASS_RE.match(hunk.section_header or "")
            if m:
                cls = m.group(1)
            for line in hunk:
                value = line.value.rstrip("\n")
                mc = _CLASS_RE.match(value)
                if mc:
                    cls = mc.group(1)
                elif value and not value[0].isspace() and not value.startswith(("#", ")", "]")):
                    cls = None if not value.startswith("@") else cls
                kind = "+" if line.is_added else "-" if line.is_removed else " "
                out.append(PatchLine(kind, value, cls, n))
    return out


def _loose_lines(patch: str) -> list[PatchLine]:
    """Fallback for patches unidiff rejects (truncated hunks, wrong counts)."""
    out: list[PatchLine] = []
    cls: str | None = None
    n = 0
    for raw in patch.replace("\r\n", "\n").split("\n"):
        if raw.startswith("@@"):
            n += 1
            header = raw.split("@@", 2)[-1].strip()
            m = _CLASS_RE.match(header)
            cls = m.group(1) if m else None
            continue
        if not raw or raw[0] not in "+- ":
            continue
        kind, value = raw[0], raw[1:]
        mc = _CLASS_RE.match(value)
        if mc:
            cls = mc.group(1)
        out.append(PatchLine(kind, value, cls, n))
    return out


def _depth(text: str) -> int:
    code = text.split("#", 1)[0]  # a comment's brackets do not count
    return code.count("(") - code.count(")") + code.count("[") - code.count("]")


def _open(text: str, depth: int) -> bool:
    return depth > 0 or text.endswith("\\")


def _value_span(
    lines: list[PatchLine], i: int, kinds: tuple[str, ...]
) -> tuple[str, bool, bool, int]:
    """The assignment's right-hand side on the side made of ``kinds``, continued over the
    hunk's lines while brackets are open or a line ends with a backslash: (text, whether it
    closed inside the hunk, whether a changed line was read after the first, the index after
    the span). Lines are joined with newlines, so a comment ends where it ends in the file."""
    text = lines[i].text.split("=", 1)[1].strip()
    depth = _depth(text)
    changed = False
    j = i + 1
    while _open(text, depth) and j < len(lines) and lines[j].hunk == lines[i].hunk:
        if lines[j].kind in kinds:
            nxt = lines[j].text.strip()
            text += "\n" + nxt
            depth += _depth(nxt)
            changed = changed or lines[j].kind != " "
        j += 1
    return text, not _open(text, depth), changed, j


def _parse_value(raw: str, profile: Profile) -> str:
    try:
        return normalize_value(ast.parse(raw, mode="eval").body, profile)
    except (SyntaxError, ValueError, RecursionError):
        return " ".join(raw.split())


def changes_from_patch(
    path: str, patch: str, profile: Profile, old_path: str | None = None
) -> list[SymbolChange]:
    """Declaration changes that the patch shows, per class; best effort, never raises."""
    return read_patch(path, patch, profile, old_path)[0]


def read_patch(
    path: str, patch: str, profile: Profile, old_path: str | None = None
) -> tuple[list[SymbolChange], bool]:
    """:func:`changes_from_patch`, and whether the patch leaves a changed line unexplained: a
    line that :meth:`Profile.matches_line` accepts (comments aside) but that is not part of a
    declaration read whole from its hunk or of a watched method's definition (a continuation
    line whose declaration starts above the hunk, a value the hunk cuts off, a line in an
    override's body, a class the hunk does not name). Then only whole files can tell.

    ``old_path``: the file's previous path when the change renamed it (as
    :func:`~prkb.analyze.symbols.diff_declarations` takes it): a class whose ``class`` line
    the patch removes and does not add again is filed there; a change of a class that stays
    names it as ``before_file``."""
    alts = "|".join(re.escape(s) for s in sorted(profile.family, key=len, reverse=True))
    decl = re.compile(rf"^\s+({alts})\s*(?::[^=]+)?=(?!=)")
    mdef = set(profile.methods)
    lines = iter_patch_lines(patch)
    before: dict[tuple[str, str], str] = {}
    after: dict[tuple[str, str], str] = {}
    meth_b: set[tuple[str, str]] = set()
    meth_a: set[tuple[str, str]] = set()
    explained: set[int] = set()
    for i, pl in enumerate(lines):
        if pl.cls is None:
            continue
        m = decl.match(pl.text)
        if m and pl.kind == " ":
            # an unchanged first line: the value changed on its continuation lines, if at all
            b_raw, old_ok, old_changed, old_end = _value_span(lines, i, (" ", "-"))
            a_raw, new_ok, new_changed, new_end = _value_span(lines, i, (" ", "+"))
            if old_ok and new_ok:
                explained.update(range(i, max(old_end, new_end)))
            if old_ok and new_ok and (old_changed or new_changed):
                key = (pl.cls, m.group(1))
                bv, av = _parse_value(b_raw, profile), _parse_value(a_raw, profile)
                if bv != av and key not in before and key not in after:
                    before[key], after[key] = bv, av
            continue
        if pl.kind == " ":
            continue
        if m:
            raw, ok, _changed, end = _value_span(lines, i, (pl.kind, " "))
            if ok:
                explained.update(range(i, end))
            (before if pl.kind == "-" else after)[(pl.cls, m.group(1))] = _parse_value(
                raw, profile
            )
            continue
        md = _DEF_RE.match(pl.text)
        if md and md.group(1) in mdef:
            (meth_b if pl.kind == "-" else meth_a).add((pl.cls, md.group(1)))
            # the method's body goes with it: the deeper changed lines that follow
            indent = len(pl.text) - len(pl.text.lstrip())
            j = i + 1
            while j < len(lines) and lines[j].hunk == pl.hunk and (
                lines[j].kind != " " and (
                    not lines[j].text.strip()
                    or len(lines[j].text) - len(lines[j].text.lstrip()) > indent
                )
            ):
                j += 1
            explained.update(range(i, j))
    unexplained = any(
        pl.kind != " "
        and i not in explained
        and not pl.text.lstrip().startswith("#")
        and profile.matches_line(pl.text)
        for i, pl in enumerate(lines)
    )
    out: list[SymbolChange] = []
    classes = sorted({c for c, _ in before} | {c for c, _ in after})
    for cls in classes:
        bk = {a: v for (c, a), v in before.items() if c == cls}
        ak = {a: v for (c, a), v in after.items() if c == cls}
        gone = [k for k in bk if k not in ak]
        new = [k for k in ak if k not in bk]
        if len(gone) == 1 and len(new) == 1:
            bv, av = bk[gone[0]], ak[new[0]]
            d = "renamed" if bv == av else direction_of(bv, av, profile, new[0])
            d = "renamed" if d == "unchanged" else d
            out.append(SymbolChange(path, cls, new[0], bv, av, d, before_attr=gone[0]))
            continue
        for attr in sorted(set(bk) | set(ak)):
            bo, ao = bk.get(attr), ak.get(attr)
            if bo == ao:
                continue
            d = direction_of(bo, ao, profile, attr)
            out.append(SymbolChange(path, cls, attr, bo, ao, "changed" if d == "unchanged" else d))
    for cls, meth in sorted(meth_a - meth_b):
        out.append(SymbolChange(path, cls, meth, None, "overridden", "dynamic-added"))
    for cls, meth in sorted(meth_b - meth_a):
        out.append(SymbolChange(path, cls, meth, "overridden", None, "dynamic-removed"))
    if old_path is not None and old_path != path:
        heads = {(pl.kind, pl.cls) for pl in lines if pl.kind != " " and _CLASS_RE.match(pl.text)}
        removed = {c for k, c in heads if k == "-"} - {c for k, c in heads if k == "+"}
        added = {c for k, c in heads if k == "+"} - {c for k, c in heads if k == "-"}
        out = [replace(c, file=old_path) if c.class_name in removed
               else c if c.class_name in added else replace(c, before_file=old_path)
               for c in out]
    return out, unexplained


_HUNK_HEAD = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$")


def trim_patch(patch: str, profile: Profile) -> str:
    """Keep only the hunk lines that mention the tracked symbol (family spellings, methods,
    value markers) and the ``class`` line that encloses them, under ``@@`` headers that give
    their true line numbers.

    This is what the bundled snapshot stores: never whole files or whole patches. Each run of
    kept lines that were next to each other in the patch becomes a hunk of its own, its header
    numbered from the original hunk's and counting only what it keeps, so a line of the trimmed
    patch has the number it has in the file (the key code shows it). The header's section
    text is the enclosing class line kept last in that hunk (what git's function context
    shows), else the original hunk's. A hunk whose header cannot be read keeps no line.
    """
    out: list[str] = []
    old = new = 0  # the next line numbers on each side; 0: not in a readable hunk
    section = ""
    cls_line: tuple[int, int, str] | None = None  # the class line not yet emitted
    run: list[str] = []  # the hunk being written: kept lines
    run_head: list[int] = []  # its [old start, new start]
    run_next: tuple[int, int] = (0, 0)  # the numbers a line continuing it would have
    run_section = ""  # its header's section text

    def flush() -> None:
        if not run:
            return
        o_count = sum(1 for ln in run if ln[:1] in ("-", " "))
        n_count = sum(1 for ln in run if ln[:1] in ("+", " "))
        # an empty side names the line before the hunk (0 in a new or deleted file)
        o_start = max(0, run_head[0] - (1 if o_count == 0 else 0))
        n_start = max(0, run_head[1] - (1 if n_count == 0 else 0))
        tail = f" {run_section}" if run_section else ""
        out.append(f"@@ -{o_start},{o_count} +{n_start},{n_count} @@{tail}")
        out.extend(run)
        run.clear()

    def keep(o: int, n: int, raw: str) -> None:
        nonlocal run_next, run_head, run_section
        if run and (o, n) != run_next:
            flush()
        if not run:
            run_head, run_section = [o, n], section
        run.append(raw)
        run_next = (o + (raw[:1] != "+"), n + (raw[:1] != "-"))

    for raw in patch.replace("\r\n", "\n").split("\n"):
        if raw.startswith("@@"):
            flush()
            m = _HUNK_HEAD.match(raw)
            old, new = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
            section = m.group(3).strip() if m else ""
            cls_line = None
            continue
        kind = raw[:1]
        if kind not in ("+", "-", " ") or (not old and not new):
            continue  # "\\ No newline", file headers, lines outside a readable hunk
        here = (old, new)
        old += kind != "+"
        new += kind != "-"
        if _CLASS_RE.match(raw[1:]):
            cls_line = (*here, raw)
            continue
        if kind in ("+", "-") and profile.matches_line(raw[1:]):
            if cls_line is not None:
                flush()
                keep(*cls_line)
                section = cls_line[2][1:].strip()
                cls_line = None
            keep(*here, raw)
    flush()
    return "\n".join(out)
