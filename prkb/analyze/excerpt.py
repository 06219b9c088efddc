"""Explained code: the changed class as it reads after the change, bounded, with notes as facts.

Two inputs:

- :func:`excerpt_from_source`: the file's whole text after the change (a blob). The class is
  found with :func:`prkb.analyze.symbols.parse_classes` and ``ast``; the excerpt holds the
  class's first line, the declaration of the changed attribute, the lines of the audit rule's
  inputs (what the profile's rule module shows, ``prkb.analyze.rules.RuleInputs``: for the
  CUDA-graph rule, its decode-threshold mechanism) and the first lines of an overridden
  dynamic-support method.
- :func:`excerpt_from_patch`: one file's unified diff (GitHub's ``patch``). Only the lines the
  patch shows on its new side (context and added lines) can be used; a line is the class's
  when the hunk header or the last top-level ``class`` line above it in the hunk names it.

Each anchor gets :data:`CONTEXT` lines either side (inside the class); overlapping windows
merge into one :class:`Block`. The excerpt **never holds more than** :data:`MAX_LINES` lines:
windows are taken in the order above and the one that does not fit is cut
(``Excerpt.truncated``). Changed lines are marked (``Line.changed``).

Notes (:class:`Note`) are facts for a template, never sentences: ``level`` (the level the
class declares: its meaning is the profile's ``[levels.meaning]`` entry), ``level-expression``
(a value that is not one level, kept as written), ``level-not-declared`` (the class inherits
it), ``dynamic`` (it overrides a dynamic-support method), then the rule's ``input-*`` notes
(none without a rule module that shows its inputs).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..profile import Profile
from .notes import Note as Note  # what an excerpt's notes are
from .rules import InputNames, rule_inputs
from .symbols import (
    ClassFacts,
    SourceError,
    normalize_value,
    parse_classes,
    parse_source,
)

CONTEXT = 2
MAX_LINES = 40


@dataclass(frozen=True)
class Line:
    number: int | None   # line number in the file after the change
    text: str
    changed: bool


@dataclass(frozen=True)
class Block:
    """Consecutive lines; lines are left out between two blocks."""

    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Excerpt:
    file: str
    class_name: str
    attr: str
    source: str              # blob or patch
    blocks: tuple[Block, ...]
    notes: tuple[Note, ...]
    truncated: bool

    @property
    def line_count(self) -> int:
        return sum(len(b.lines) for b in self.blocks)


def _windows(anchors: list[tuple[int, int]], lo: int, hi: int) -> tuple[list[tuple[int, int]],
                                                                         bool]:
    """Anchor spans widened by CONTEXT (within lo..hi), taken in order up to MAX_LINES, then
    merged in line order."""
    taken: list[tuple[int, int]] = []
    used: set[int] = set()
    for a, b in anchors:
        new = [n for n in range(max(lo, a - CONTEXT), min(hi, b + CONTEXT) + 1) if n not in used]
        used.update(new[: MAX_LINES - len(used)])
    truncated = any(
        n not in used for a, b in anchors for n in range(max(lo, a), min(hi, b) + 1)
    )
    rows = sorted(used)
    for n in rows:
        if taken and taken[-1][1] == n - 1:
            taken[-1] = (taken[-1][0], n)
        else:
            taken.append((n, n))
    return taken, truncated


def _class_node(tree: ast.Module, qual: str) -> ast.ClassDef | None:
    parts = qual.split(".")
    body: list[ast.stmt] = tree.body
    node: ast.ClassDef | None = None
    for part in parts:
        node = next((s for s in body if isinstance(s, ast.ClassDef) and s.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _level_notes(value: str | None, facts: ClassFacts, profile: Profile) -> list[Note]:
    out: list[Note] = []
    if value is None:
        out.append(Note("level-not-declared"))
    elif not profile.has_levels:  # a number, a bool, a string: no level to read into it
        out.append(Note("value", {"value": value}))
    elif profile.level_rank(value) is not None:
        out.append(Note("level", {"level": profile.normalize_level(value)}))
    else:
        out.append(Note("level-expression", {"value": value}))
    out += [Note("dynamic", {"method": m}) for m in profile.methods if m in facts.methods]
    return out


def excerpt_from_source(
    text: str, file: str, class_name: str, attr: str, profile: Profile,
    changed: set[int] | frozenset[int] = frozenset(),
) -> Excerpt | None:
    """The excerpt of ``class_name`` in ``text`` (the file after the change); ``changed``: the
    new-side line numbers the change added (:func:`changed_lines`). None when the text does
    not parse or has no such class."""
    inputs = rule_inputs(profile.rules)
    names = inputs.names(profile) if inputs is not None else InputNames()
    try:
        tree = parse_source(text, file)
        facts = parse_classes(
            text, profile, extra_attrs=names.class_attrs, calls=names.calls, tree=tree,
            instance_attrs=names.instance_attrs,
        )
    except SourceError:
        return None
    fc = facts.get(class_name)
    node = _class_node(tree, class_name)
    if fc is None or node is None:
        return None
    lo, hi = node.lineno, node.end_lineno or node.lineno
    anchors: list[tuple[int, int]] = [(lo, node.body[0].lineno - 1 if node.body else lo)]
    for name in (attr, *names.class_attrs):
        if name and name in fc.spans:
            anchors.append(fc.spans[name])
    if inputs is not None:
        anchors += inputs.anchors(node, profile)
    for m in profile.methods:
        if m in fc.spans:
            first, last = fc.spans[m]
            anchors.append((first, min(last, first + CONTEXT)))
    anchors += [(n, n) for n in sorted(changed) if lo <= n <= hi]
    spans, truncated = _windows(anchors, lo, hi)
    rows = text.splitlines()
    blocks = tuple(
        Block(tuple(Line(n, rows[n - 1], n in changed) for n in range(a, b + 1)))
        for a, b in spans
    )
    notes = _level_notes(fc.values.get(attr), fc, profile)
    if inputs is not None:
        notes += inputs.class_notes(fc, profile)
    return Excerpt(file, class_name, attr, "blob", blocks, tuple(notes), truncated)


def changed_lines(patch: str) -> set[int]:
    """The new-side line numbers of the lines a patch adds."""
    return {n for n, _, added, _ in _new_side(patch) if added and n is not None}


_CLASS_RE = re.compile(r"^class\s+([A-Za-z_][A-Za-z0-9_]*)")


_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")


def _new_side(patch: str) -> list[tuple[int | None, str, bool, int]]:
    """(new line number, text, added, hunk index) of each line on the patch's new side; each
    hunk starts with a row (None, section header, False, -index). Read line by line from the
    ``@@`` headers (a truncated hunk keeps the lines it has)."""
    out: list[tuple[int | None, str, bool, int]] = []
    n = 0
    num: int | None = None
    for raw in patch.replace("\r\n", "\n").split("\n"):
        m = _HUNK_RE.match(raw)
        if m:
            n += 1
            num = int(m.group(1))
            out.append((None, m.group(2).strip(), False, -n))
            continue
        if num is None or not raw or raw[0] not in "+ ":
            continue  # removed lines, "\ No newline", file headers
        if raw.startswith("+++ "):
            continue
        out.append((num, raw[1:], raw[0] == "+", n))
        num += 1
    return out


def literal_value(line: str, name: str, profile: Profile) -> str | None:
    """The value of ``name = ...`` (or ``name: T = ...``) on one line, as the profile reads it."""
    try:
        stmt = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError, ValueError):
        return None
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
        return normalize_value(stmt.value, profile) if stmt.target.id == name else None
    if isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in stmt.targets
    ):
        return normalize_value(stmt.value, profile)
    return None


def excerpt_from_patch(
    patch: str, file: str, class_name: str, attr: str, profile: Profile,
    level: str | None = None,
) -> Excerpt | None:
    """The excerpt of ``class_name`` from the lines a patch shows on its new side. ``level``:
    the value after the change as the symbol change has it (a hunk may show only part of a
    declaration). None when the patch shows no line of the class."""
    inputs = rule_inputs(profile.rules)
    names = inputs.names(profile) if inputs is not None else InputNames()
    watch = [x for x in (attr, *names.class_attrs, *names.calls, *profile.methods,
                         *profile.family) if x]
    pattern = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(map(re.escape, watch)) + r")"
                         r"(?![A-Za-z0-9_])")
    mine: list[tuple[int, str, bool, int]] = []
    current: str | None = None
    for num, text, added, hunk in _new_side(patch):
        if num is None:
            m = _CLASS_RE.match(text)
            current = m.group(1) if m else None
            continue
        m = _CLASS_RE.match(text)
        if m:
            current = m.group(1)
        elif text and not text[0].isspace() and not text.startswith(("#", ")", "]", "@")):
            current = None
        if current == class_name.split(".")[-1]:
            mine.append((num, text, added, hunk))
    if not mine:
        return None
    by_num = {num: (text, added, hunk) for num, text, added, hunk in mine}
    anchors: list[tuple[int, int]] = [(num, num) for num, text, _, _ in mine
                                      if _CLASS_RE.match(text)]
    anchors += [(num, num) for num, text, _, _ in mine if pattern.search(text)]
    anchors += [(num, num) for num, _, added, _ in mine if added]
    spans, truncated = _windows(anchors, min(by_num), max(by_num))
    blocks: list[Block] = []
    for a, b in spans:
        run: list[Line] = []
        for n in range(a, b + 1):
            if n not in by_num:  # a line the patch does not show: a gap
                if run:
                    blocks.append(Block(tuple(run)))
                run = []
                continue
            if run and by_num[n][2] != by_num[run[-1].number or 0][2]:
                blocks.append(Block(tuple(run)))
                run = []
            run.append(Line(n, by_num[n][0], by_num[n][1]))
        if run:
            blocks.append(Block(tuple(run)))
    notes: list[Note] = []
    value = level
    if value is None:
        value = next((v for _, t, _, _ in mine if (v := literal_value(t, attr, profile))), None)
    if value is None:
        notes.append(Note("level-not-shown"))
    elif not profile.has_levels:
        notes.append(Note("value", {"value": value}))
    elif profile.level_rank(value) is not None:
        notes.append(Note("level", {"level": profile.normalize_level(value)}))
    else:
        notes.append(Note("level-expression", {"value": value}))
    if inputs is not None:
        notes += inputs.patch_notes([text for _, text, _, _ in mine], profile)
    return Excerpt(file, class_name, attr, "patch", tuple(blocks), tuple(notes), truncated)
