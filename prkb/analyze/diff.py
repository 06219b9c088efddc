"""Declarations read from a unified-diff patch when the whole files are not at hand.

GitHub gives a PR's files as patches. When only the patch exists, the class of each changed
line is taken from the hunk's section header (``@@ ... @@ class Foo(Base):``) or from the last
``class`` line seen in the hunk, and values are read from the changed lines themselves.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

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
    for pf in ps:
        for hunk in pf:
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
                out.append(PatchLine(kind, value, cls))
    return out


def _loose_lines(patch: str) -> list[PatchLine]:
    """Fallback for patches unidiff rejects (truncated hunks, wrong counts)."""
    out: list[PatchLine] = []
    cls: str | None = None
    for raw in patch.replace("\r\n", "\n").split("\n"):
        if raw.startswith("@@"):
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
        out.append(PatchLine(kind, value, cls))
    return out


def _value_text(lines: list[PatchLine], i: int) -> str:
    """The assignment's right-hand side, continued over lines until brackets balance."""
    first = lines[i].text.split("=", 1)[1].strip()
    text = first
    depth = text.count("(") - text.count(")") + text.count("[") - text.count("]")
    j = i + 1
    while depth > 0 and j < len(lines) and lines[j].kind in (lines[i].kind, " "):
        nxt = lines[j].text.strip()
        text += " " + nxt
        depth += nxt.count("(") - nxt.count(")") + nxt.count("[") - nxt.count("]")
        j += 1
    return text


def changes_from_patch(path: str, patch: str, profile: Profile) -> list[SymbolChange]:
    """Declaration changes that the patch shows, per class; best effort, never raises."""
    alts = "|".join(re.escape(s) for s in sorted(profile.family, key=len, reverse=True))
    decl = re.compile(rf"^\s+({alts})\s*(?::[^=]+)?=(?!=)")
    mdef = set(profile.methods)
    lines = iter_patch_lines(patch)
    before: dict[tuple[str, str], str] = {}
    after: dict[tuple[str, str], str] = {}
    meth_b: set[tuple[str, str]] = set()
    meth_a: set[tuple[str, str]] = set()
    for i, pl in enumerate(lines):
        if pl.kind == " " or pl.cls is None:
            continue
        m = decl.match(pl.text)
        if m:
            raw = _value_text(lines, i)
            try:
                value = normalize_value(ast.parse(raw, mode="eval").body, profile)
            except (SyntaxError, ValueError, RecursionError):
                value = " ".join(raw.split())
            (before if pl.kind == "-" else after)[(pl.cls, m.group(1))] = value
            continue
        md = _DEF_RE.match(pl.text)
        if md and md.group(1) in mdef:
            (meth_b if pl.kind == "-" else meth_a).add((pl.cls, md.group(1)))
    out: list[SymbolChange] = []
    classes = sorted({c for c, _ in before} | {c for c, _ in after})
    for cls in classes:
        bk = {a: v for (c, a), v in before.items() if c == cls}
        ak = {a: v for (c, a), v in after.items() if c == cls}
        gone = [k for k in bk if k not in ak]
        new = [k for k in ak if k not in bk]
        if len(gone) == 1 and len(new) == 1:
            bv, av = bk[gone[0]], ak[new[0]]
            d = "renamed" if bv == av else direction_of(bv, av, profile)
            d = "renamed" if d == "unchanged" else d
            out.append(SymbolChange(path, cls, new[0], bv, av, d, before_attr=gone[0]))
            continue
        for attr in sorted(set(bk) | set(ak)):
            bo, ao = bk.get(attr), ak.get(attr)
            if bo == ao:
                continue
            d = direction_of(bo, ao, profile)
            out.append(SymbolChange(path, cls, attr, bo, ao, "changed" if d == "unchanged" else d))
    for cls, meth in sorted(meth_a - meth_b):
        out.append(SymbolChange(path, cls, meth, None, "overridden", "dynamic-added"))
    for cls, meth in sorted(meth_b - meth_a):
        out.append(SymbolChange(path, cls, meth, "overridden", None, "dynamic-removed"))
    return out


def trim_patch(patch: str, profile: Profile) -> str:
    """Keep only the hunk lines that mention the tracked symbol (family spellings, methods,
    value markers), each hunk's ``@@`` header, and the ``class`` line that encloses them.

    This is what the bundled snapshot stores: never whole files or whole patches.
    """
    out: list[str] = []
    header: str | None = None
    cls_line: str | None = None
    for raw in patch.replace("\r\n", "\n").split("\n"):
        if raw.startswith("@@"):
            header, cls_line = raw, None
            continue
        if _CLASS_RE.match(raw[1:]) and raw[:1] in ("+", "-", " "):
            cls_line = raw
            continue
        if raw[:1] in ("+", "-") and profile.matches_line(raw[1:]):
            if header is not None:
                out.append(header)
                header = None
            if cls_line is not None:
                out.append(cls_line)
                cls_line = None
            out.append(raw)
    return "\n".join(out)
