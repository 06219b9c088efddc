"""A cheap text key of everything a file's declarations can depend on, to skip parsing.

``declaration_key(text, profile)`` keeps, whitespace removed: every class header line, and for
each line naming a family spelling or a dynamic-support method, the whole statement it starts
(bracket-balanced continuation lines, or a method's indented body) and the lines above it with
less indentation (the ``if``/``else``/``class`` lines it sits in). Two texts with equal keys
have equal declarations; unequal keys only mean "parse both and compare as ASTs". The key is
conservative by design: a comment or a string that names the symbol costs a parse, never a
missed change.
"""

from __future__ import annotations

import re

from ..profile import Profile

_CLASS = re.compile(r"^[ \t]*class[ \t]+[A-Za-z_]\w*", re.MULTILINE)
_OPEN = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _depth_change(line: str) -> int:
    code = line.split("#", 1)[0]
    return sum(_OPEN.get(ch, 0) for ch in code)


def declaration_key(text: str, profile: Profile) -> str:
    """The text key of ``text``'s declarations (empty when it names no watched identifier)."""
    rx = profile.watch_regex
    if not rx.search(text):
        return ""
    lines = text.split("\n")
    keep: set[int] = set()
    starts = {text.count("\n", 0, m.start()) for m in rx.finditer(text)}
    for i in sorted(starts):
        line = lines[i]
        keep.add(i)
        # the statement it starts: continuation lines until brackets balance
        depth = _depth_change(line)
        j = i
        cont = line.rstrip().endswith("\\")
        while (depth > 0 or cont) and j + 1 < len(lines):
            j += 1
            keep.add(j)
            depth += _depth_change(lines[j])
            cont = lines[j].rstrip().endswith("\\")
        # a method definition: its indented body
        if line.lstrip().startswith(("def ", "async def ", "@")):
            base = _indent(line)
            k = j + 1
            while k < len(lines) and (not lines[k].strip() or _indent(lines[k]) > base):
                keep.add(k)
                k += 1
        # the blocks it sits in
        level = _indent(line)
        k = i - 1
        while k >= 0 and level > 0:
            up = lines[k]
            if up.strip() and not up.lstrip().startswith("#") and _indent(up) < level:
                keep.add(k)
                level = _indent(up)
            k -= 1
    parts = ["".join(lines[i].split()) for i in sorted(keep)]
    parts.extend("".join(m.group(0).split()) for m in _CLASS.finditer(text))
    return "\n".join(parts)
