"""Explained code: the changed class as it reads after the change, bounded, with notes as facts.

Two inputs:

- :func:`excerpt_from_source`: the file's whole text after the change (a blob). The class is
  found with :func:`prkb.analyze.symbols.parse_classes` and ``ast``; the excerpt holds the
  class's first line, the declaration of the changed attribute, the threshold mechanism of the
  profile's ``[audit]`` names (``query_len_attr`` and ``threshold_attr`` declared in the class
  body, ``reorder_call`` calls and ``self.<threshold_attr>`` assignments in its methods, with
  the ``def`` line of that method) and the first lines of an overridden dynamic-support method.
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
it), ``dynamic`` (it overrides a dynamic-support method), ``threshold-query-len``,
``threshold-call``, ``threshold-assign`` (the mechanism, with its values as written and
``grows``: ``yes``/``no``/``unknown`` read literally from those values, see
:func:`_threshold_notes`), ``threshold-none`` (the whole class sets no threshold: it inherits
one; only from a whole file) and ``threshold-not-shown`` (the patch shows none: unknown, not
absent); no threshold note at all when the profile's ``[audit]`` names no mechanism. The
consistency audit's stored verdict stays the authority on whether a builder can take
speculative decoding; these notes only say what the shown code reads.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..profile import AUDIT_DEFAULTS, Profile
from .symbols import (
    ClassFacts,
    SourceError,
    call_argument,
    call_fact,
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
class Note:
    code: str
    args: dict[str, str] = field(default_factory=dict)


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


def _names(profile: Profile) -> tuple[str, str, str]:
    a = profile.audit
    return (str(a.get("query_len_attr") or ""), str(a.get("threshold_attr") or ""),
            str(a.get("reorder_call") or ""))


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


def _query_len_note(attr: str, value: str, profile: Profile) -> Note:
    """``value`` as written (``QueryLen.X`` or ``X``); it grows unless it is the default."""
    default = str(profile.audit.get("query_len_default") or "")
    member = value.rsplit(".", 1)[-1]
    grows = "no" if member == default else "yes" if member.isidentifier() else "unknown"
    return Note("threshold-query-len", {"attr": attr, "value": member if member.isidentifier()
                                        else value, "default": default, "grows": grows})


def _has_spec_marker(text: str, profile: Profile) -> bool:
    return any(m in text for m in profile.audit.get("spec_markers", []))


def _threshold_notes(facts: ClassFacts, profile: Profile) -> list[Note]:
    """The threshold mechanism the class itself shows, read literally:

    - ``threshold-query-len``: ``query_len_attr`` declared; ``grows`` ``no`` when it is the
      profile's ``query_len_default``, else ``yes``.
    - ``threshold-call``: a ``reorder_call`` call; ``grows`` from its ``reorder_flag``
      (keyword, or the positional argument at ``reorder_flag_position``): ``yes`` for
      ``True``, ``no`` for ``False`` or when not passed, ``unknown`` for anything else.
    - ``threshold-assign``: ``threshold_attr`` declared in the class body or set on ``self``;
      ``grows`` ``yes`` when the value names one of the profile's ``spec_markers``, else
      ``unknown`` (a constant above 1 is a different mechanism the audit reads).
    - ``threshold-none``: none of these in the class (it inherits its parent's).
    """
    qattr, tattr, call = _names(profile)
    if not (qattr or tattr or call):
        return []  # the profile names no threshold mechanism: nothing to read
    a = profile.audit
    out: list[Note] = []
    if qattr and qattr in facts.values:
        out.append(_query_len_note(qattr, facts.values[qattr], profile))
    if tattr and tattr in facts.values:
        v = facts.values[tattr]
        out.append(Note("threshold-assign", {"attr": tattr, "value": v, "where": "class",
                                             "grows": "yes" if _has_spec_marker(v, profile)
                                             else "unknown"}))
    flag_name, pos = _reorder_flag(profile)
    for t in facts.threshold:
        if t.kind == "call" and t.call is not None:
            flag = call_argument(t.call, flag_name, pos)
            grows = "no" if flag in (None, "False") else "yes" if flag == "True" else "unknown"
            value = t.value or str(a.get("reorder_threshold_default", ""))
            out.append(Note("threshold-call", {"call": t.attr, "threshold": value,
                                               "flag": flag or "", "grows": grows}))
        elif t.kind in ("assign", "augassign") and t.value is not None:
            out.append(Note("threshold-assign", {
                "attr": t.attr, "value": t.value, "op": t.op or "=", "where": "method",
                "grows": "yes" if _has_spec_marker(t.value, profile) else "unknown"}))
    if not out:
        out.append(Note("threshold-none"))
    return out


def _mechanism_lines(node: ast.ClassDef, profile: Profile) -> list[tuple[int, int]]:
    """Spans of the threshold mechanism in the class's methods, each after its ``def``."""
    _, tattr, call = _names(profile)
    out: list[tuple[int, int]] = []
    for fn in node.body:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        hits: list[tuple[int, int]] = []
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Call):
                f = sub.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if call and name == call:
                    hits.append((sub.lineno, sub.end_lineno or sub.lineno))
            targets: list[ast.expr] = []
            if isinstance(sub, ast.Assign):
                targets = list(sub.targets)
            elif isinstance(sub, ast.AugAssign | ast.AnnAssign):
                targets = [sub.target]
            for tgt in targets:
                if (isinstance(tgt, ast.Attribute) and tgt.attr == tattr
                        and isinstance(tgt.value, ast.Name) and tgt.value.id == "self"):
                    hits.append((tgt.lineno, getattr(sub, "end_lineno", None) or tgt.lineno))
        if hits:
            out.append((fn.lineno, fn.lineno))
            out += sorted(set(hits))
    return out


def excerpt_from_source(
    text: str, file: str, class_name: str, attr: str, profile: Profile,
    changed: set[int] | frozenset[int] = frozenset(),
) -> Excerpt | None:
    """The excerpt of ``class_name`` in ``text`` (the file after the change); ``changed``: the
    new-side line numbers the change added (:func:`changed_lines`). None when the text does
    not parse or has no such class."""
    qattr, tattr, call = _names(profile)
    try:
        tree = parse_source(text, file)
        facts = parse_classes(
            text, profile, extra_attrs=tuple(x for x in (qattr, tattr) if x),
            calls=(call,) if call else (), tree=tree,
            threshold_attrs=(tattr,) if tattr else (),
        )
    except SourceError:
        return None
    fc = facts.get(class_name)
    node = _class_node(tree, class_name)
    if fc is None or node is None:
        return None
    lo, hi = node.lineno, node.end_lineno or node.lineno
    anchors: list[tuple[int, int]] = [(lo, node.body[0].lineno - 1 if node.body else lo)]
    for name in (attr, qattr, tattr):
        if name and name in fc.spans:
            anchors.append(fc.spans[name])
    anchors += _mechanism_lines(node, profile)
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
    notes = _level_notes(fc.values.get(attr), fc, profile) + _threshold_notes(fc, profile)
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


def _literal(line: str, name: str, profile: Profile) -> str | None:
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
    qattr, tattr, call = _names(profile)
    watch = [x for x in (attr, qattr, tattr, call, *profile.methods, *profile.family) if x]
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
        value = next((v for _, t, _, _ in mine if (v := _literal(t, attr, profile))), None)
    if value is None:
        notes.append(Note("level-not-shown"))
    elif not profile.has_levels:
        notes.append(Note("value", {"value": value}))
    elif profile.level_rank(value) is not None:
        notes.append(Note("level", {"level": profile.normalize_level(value)}))
    else:
        notes.append(Note("level-expression", {"value": value}))
    notes += _patch_threshold(mine, profile)
    return Excerpt(file, class_name, attr, "patch", tuple(blocks), tuple(notes), truncated)


def _reorder_flag(profile: Profile) -> tuple[str, int]:
    """The reorder call's flag: its keyword name and its position (0 is the first argument:
    only a missing key takes the default)."""
    given = profile.audit.get("reorder_flag_position")
    return (str(profile.audit.get("reorder_flag") or ""),
            int(AUDIT_DEFAULTS["reorder_flag_position"] if given is None else given))


def _line_call_flag(text: str, profile: Profile) -> str | None:
    """The reorder flag a call on one shown line passes (``text``: from the call's name on),
    by keyword or at its position, as written; None when the line does not tell (the call
    goes on to the next line, or ``*args``/``**kwargs`` may pass it)."""
    name, pos = _reorder_flag(profile)
    head = text.strip().rstrip(",;")
    try:
        node = ast.parse(head, mode="eval").body
    except SyntaxError:  # not a whole call on this line: look for the keyword alone
        m = re.search(rf"{re.escape(name)}\s*=\s*(\w+)", text) if name else None
        return m.group(1) if m else None
    if not isinstance(node, ast.Call):
        return None
    fact = call_fact(node)
    if name and name in fact.keywords:
        return fact.keywords[name]
    if any(isinstance(x, ast.Starred) for x in node.args) or any(
            kw.arg is None for kw in node.keywords):
        return None  # *args or **kwargs may pass it
    # the whole call is shown: the flag at its position, else the default (no flag)
    return call_argument(fact, name, pos) or "False"


def _patch_threshold(mine: list[tuple[int, str, bool, int]], profile: Profile) -> list[Note]:
    """What the shown lines say of the threshold mechanism (``threshold-not-shown`` when
    nothing: the rest of the class is not in the patch, so nothing is known of it)."""
    qattr, tattr, call = _names(profile)
    if not (qattr or tattr or call):
        return []  # the profile names no threshold mechanism: nothing to read
    out: list[Note] = []
    for _, text, _, _ in mine:
        if qattr:
            v = _literal(text, qattr, profile)
            if v is not None:
                out.append(_query_len_note(qattr, v, profile))
        at = re.search(rf"(?<![A-Za-z0-9_]){re.escape(call)}\s*\(", text) if call else None
        if at is not None:
            flag = _line_call_flag(text[at.start():], profile)
            grows = "unknown" if flag is None else "yes" if flag == "True" else (
                "no" if flag == "False" else "unknown")
            out.append(Note("threshold-call", {"call": call, "flag": flag or "",
                                               "grows": grows}))
        if tattr and re.search(rf"\bself\.{re.escape(tattr)}\s*[-+*/]?=", text):
            value = text.split("=", 1)[1].strip()
            out.append(Note("threshold-assign", {
                "attr": tattr, "value": value, "where": "method",
                "grows": "yes" if _has_spec_marker(value, profile) else "unknown"}))
    return out or [Note("threshold-not-shown")]
