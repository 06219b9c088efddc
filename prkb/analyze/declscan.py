"""A cheap text key of everything a file's declarations can depend on, to skip parsing.

``declaration_key(text, profile)`` keeps, whitespace removed, for each line naming a family
spelling or a dynamic-support method: the whole statement it starts (bracket-balanced
continuation lines, or a method's indented body), the header of the class it sits in, and the
lines between them with less indentation (a class-body ``if``/``else``, their conditions
whole). A line inside a method's body (a use, not a declaration) is left out, unless the
method is a dynamic-support one, whose whole body is kept. Two texts with equal keys have
equal declarations; unequal keys only mean "parse both and compare as ASTs". The key is
conservative by design: a comment or a string that names the symbol costs a parse, never a
missed change. It is made with ``str.find``, ``str.count`` and a literal-prefix regex, so
keying a large file costs far less than parsing it.
"""

from __future__ import annotations

import bisect
import re

from ..profile import Profile

_LITERALS: dict[tuple[str, ...], re.Pattern[str]] = {}
_OPENERS, _CLOSERS = "([{", ")]}"


def _literals(names: tuple[str, ...]) -> re.Pattern[str]:
    """The names as a plain alternation (longest first): no look-behind, so the regex engine
    can skip ahead by literal prefix; identifier boundaries are checked by the caller."""
    if names not in _LITERALS:
        alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        _LITERALS[names] = re.compile(alts)
    return _LITERALS[names]


def _is_ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def depth_change(line: str) -> int:
    code = line.split("#", 1)[0]
    return sum(code.count(c) for c in _OPENERS) - sum(code.count(c) for c in _CLOSERS)


def _statement_end(lines: list[str], i: int) -> int:
    """The last line of the statement that starts on line ``i`` (brackets balanced, no
    trailing backslash)."""
    depth = depth_change(lines[i])
    cont = lines[i].rstrip().endswith("\\")
    j = i
    while (depth > 0 or cont) and j + 1 < len(lines):
        j += 1
        depth += depth_change(lines[j])
        cont = lines[j].rstrip().endswith("\\")
    return j


def class_rows(text: str) -> list[tuple[int, int]]:
    """(line, indentation) of every ``class`` statement (0-based lines), found with
    ``str.find``: the word ``class`` with only blanks before it on its line and a blank after
    it."""
    out: list[tuple[int, int]] = []
    row, pos, at = 0, 0, text.find("class")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip(" \t") and text[at + 5: at + 6] in (" ", "\t"):
            row += text.count("\n", pos, start)
            pos = start
            out.append((row, at - start))
        at = text.find("class", at + 5)
    return out


def _body_indent(lines: list[str], k: int, default: int) -> int:
    """The indentation of the first statement at or after line ``k`` (a class's body)."""
    while k < len(lines):
        body = lines[k].lstrip(" \t")
        if body and not body.startswith("#"):
            return len(lines[k]) - len(body)
        k += 1
    return default


def _blocks(lines: list[str], k: int, stop: int, level: int, floor: int) -> list[int]:
    """From line ``k`` up to (not including) ``stop``: each statement with less indentation
    than the last one found, while deeper than ``floor`` (the blocks a line sits in)."""
    rows: list[int] = []
    while level > floor and k > stop:
        up = lines[k]
        body = up.lstrip(" \t")
        if body and not body.startswith("#") and len(up) - len(body) < level:
            level = len(up) - len(body)
            rows.append(k)
        k -= 1
    return rows


def _keep(lines: list[str], rows: list[int], keep: set[int]) -> None:
    for row in rows:
        keep.update(range(row, _statement_end(lines, row) + 1))


def _start_rows(text: str, names: tuple[str, ...]) -> list[int]:
    """Lines (0-based, ascending) where a name occurs as a whole identifier."""
    rows: list[int] = []
    row, pos = 0, 0
    for m in _literals(names).finditer(text):
        a, b = m.start(), m.end()
        if (a and _is_ident(text[a - 1])) or (b < len(text) and _is_ident(text[b])):
            continue  # inside a longer identifier
        row += text.count("\n", pos, a)
        pos = a
        if not rows or rows[-1] != row:
            rows.append(row)
    return rows


def declaration_key(text: str, profile: Profile) -> str:
    """The text key of ``text``'s declarations (empty when it names no watched identifier)."""
    names = (*profile.family, *profile.methods)
    if not any(n in text for n in names):  # a substring test first: most versions say nothing
        return ""
    starts = _start_rows(text, names)
    if not starts:
        return ""
    lines = text.split("\n")
    classes = class_rows(text)
    class_starts = [c[0] for c in classes]
    keep: set[int] = set()
    for i in starts:
        if i in keep:
            continue  # inside a statement or a method body already kept
        line = lines[i]
        # the class it sits in, and the blocks between (lines with less indentation than it)
        level = indent_of(line)
        top, floor = -1, 0
        for row, ind in reversed(classes[: bisect.bisect_left(class_starts, i)]):
            if ind < level:
                top, floor = row, _body_indent(lines, _statement_end(lines, row) + 1, level)
                break
        blocks = _blocks(lines, i - 1, top, level, floor)
        if any(lines[b].lstrip().startswith(("def ", "async def ")) for b in blocks):
            continue  # a use inside a method's body declares nothing
        j = _statement_end(lines, i)
        keep.update(range(i, j + 1))
        if line.lstrip().startswith(("def ", "async def ", "@")):  # a method: its body
            base = indent_of(line)
            k = j + 1
            while k < len(lines) and (not lines[k].strip() or indent_of(lines[k]) > base):
                keep.add(k)
                k += 1
        _keep(lines, [*blocks, *([top] if top >= 0 else [])], keep)
        if top > 0 and indent_of(lines[top]):  # a nested class: the blocks it sits in
            _keep(lines, _blocks(lines, top - 1, -1, indent_of(lines[top]), 0), keep)
    return "\n".join("".join(lines[i].split()) for i in sorted(keep))
