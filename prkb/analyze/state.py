"""The code's effective state at a revision, and a PR's change of it.

One reading of the code that every output repeats. For each builder (a class below the
profile's ``audit.builder_bases``, by file and class) and each *tracked value* of the profile
(the symbol under the profile's display name, then the inputs of the audit rule, which its
module tracks: for the CUDA-graph rule the decode threshold, the split thresholds and the
query-length attribute), the value in force
at that revision and where it comes from (:class:`Tracked`):

==================  ==========================================================================
``declared``        the class's own class-body assignment
``inherited:<C>``   the nearest class ``C`` of the MRO that sets it (``origin_file`` its file)
``init``            set by the class's own ``__init__`` (an assignment, ``+=`` or the
                    profile's helper call); the value is the expression as written, a ``+=``
                    applied to the value before it (``1 + self.num_spec_tokens``), with the
                    ``if <test>: raise E`` that come before it (``raises``)
``method``          decided at run time by an overriding method (``dynamic: <returns>``)
``stale``           the class declares a spelling the code at that revision no longer reads
                    (the root builder base declares another one), so the value is what it
                    falls back to
``default``         the root builder base's own value (or the profile's default level)
``absent``          nothing sets it (``value`` None)
==================  ==========================================================================

A value is text: today's level name for a level (``written`` keeps an older name as the source
spells it), a literal, or an expression as written. :func:`state_changes` compares two
readings (a PR's first parent and its commit) and lists each tracked value of each builder
whose value changed, in the shape ``prkb show --json`` prints as ``state_changes``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .symbols import UNKNOWN_TEST, InstanceSet

if TYPE_CHECKING:
    from .hierarchy import ClassRef, Hierarchy

DECLARED, INIT, METHOD, STALE, DEFAULT, ABSENT, UNKNOWN = (
    "declared", "init", "method", "stale", "default", "absent", "unknown")
INHERITED = "inherited:"
# bases from outside the scanned code that cannot set a tracked value (Python's own)
EXTERNAL_BASES = frozenset({"ABC", "Generic", "Protocol", "object"})


@dataclass(frozen=True)
class Tracked:
    """One tracked value of one builder at one revision."""

    value: str | None  # None: absent
    source: str  # declared, inherited:<Class>, init, method, stale, default, absent
    origin_file: str | None = None  # the file of the class the value comes from
    written: str | None = None  # the value as the source spells it, when it differs
    stale: tuple[str, ...] = ()  # ``Class.attr`` declarations the code does not read
    # where the ``__init__`` that sets it raises before setting it: ``E when <test>``
    raises: tuple[str, ...] = ()
    reason: str | None = None  # why the value is unknown (source ``unknown``)
    # how an ``__init__`` sets it: the setter call (``symbol.setters``) whose argument the
    # value is, as written; ``__init__`` for an ancestor's own assignment (source
    # ``inherited:<C>`` then means "set by the ``__init__`` of C", not its class attribute)
    via: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "source": self.source}
        if self.origin_file:
            out["origin_file"] = self.origin_file
        if self.written and self.written != self.value:
            out["written"] = self.written
        if self.stale:
            out["stale"] = list(self.stale)
        if self.raises:
            out["raises"] = list(self.raises)
        if self.reason:
            out["reason"] = self.reason
        if self.via:
            out["via"] = self.via
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> Tracked:
        return Tracked(
            d.get("value"), str(d.get("source") or ABSENT), d.get("origin_file"),
            d.get("written"), tuple(d.get("stale") or ()), tuple(d.get("raises") or ()),
            d.get("reason"), d.get("via"),
        )


def unseen(mro: Sequence[ClassRef], got: Tracked) -> Tracked:
    """``got``, or unknown when a base the scan could not read (defined outside the scanned
    code, not one of Python's own) comes before the class the value was read from in the
    MRO (before every class for a default or an absent value): that base may set it."""
    owner = (got.source.removeprefix(INHERITED) if got.source.startswith(INHERITED)
             else None)
    for i, c in enumerate(mro):
        if i and owner is not None and c.qual == owner:
            return got
        if i == 0 and got.source in (DECLARED, INIT, METHOD) and owner is None:
            return got  # the class's own setting comes first
        if not c.resolved and c.name not in EXTERNAL_BASES:
            return Tracked(None, UNKNOWN, reason=(
                f"{c.qual} is a base the scanned code does not define, and it may set the value"))
    return got


def _source(owner: ClassRef, ref: ClassRef, own: str) -> str:
    return own if owner == ref else f"{INHERITED}{owner.qual}"


class Reading(Protocol):
    """What the audit read of one builder's symbol (``audit.BuilderInfo``)."""

    class_name: str
    file: str
    effective: str
    declared_in: str | None
    declared_spelled: str | None
    decided_by: str | None
    support: str | None
    unread: list[str]
    values: dict[str, dict[str, Any]]


def symbol_value(ref: ClassRef, mro: Sequence[ClassRef], b: Reading) -> Tracked:
    """The symbol's value in force for builder ``ref`` (the audit's reading of it)."""
    by_qual = {c.qual: c for c in mro}
    stale = tuple(b.unread)
    if b.decided_by is not None:
        owner = by_qual.get(b.decided_by)
        return Tracked(f"dynamic: {b.support or 'unknown'}", METHOD,
                       owner.file if owner is not None else None, None, stale)
    if b.declared_in is None:
        return Tracked(b.effective, STALE if stale else DEFAULT, None, None, stale)
    owner = by_qual.get(b.declared_in)
    file = owner.file if owner is not None else None
    written = b.declared_spelled
    if stale:
        return Tracked(b.effective, STALE, file, written, stale)
    src = DECLARED if b.declared_in == ref.qual else f"{INHERITED}{b.declared_in}"
    return Tracked(b.effective, src, file, written)


_NAME = re.compile(r"[A-Za-z_]\w*")
_NOT_NAMES = frozenset({"self", "cls", "and", "or", "not", "if", "else", "is", "in", "None",
                        "True", "False", "min", "max", "int", "len"})


def _names(text: str) -> set[str]:
    """The identifiers an expression's text is made of (``self`` and keywords left out)."""
    return set(_NAME.findall(text)) - _NOT_NAMES


def _wrap(text: str) -> str:
    return f"({text})" if any(op in text for op in (" + ", " - ", " if ", " or ", " and ")) \
        else text


def _call_text(ts: InstanceSet) -> str:
    call = ts.call
    if call is None:
        return f"{ts.attr}()"
    args = [*call.args, *(f"{k}={v}" for k, v in call.keywords.items())]
    return f"{ts.attr}({', '.join(args)})"


def _put(pattern: re.Pattern[str], text: str, value: str) -> str:
    """``text`` with every match of ``pattern`` replaced by ``value`` as it is."""
    return pattern.sub(lambda _m: value, text)


def _arg_text(ts: InstanceSet, arg: int | str) -> str | None:
    """The argument ``arg`` (a position or a keyword's name) of a setter call, as written."""
    call = ts.call
    if call is None:
        return None
    if isinstance(arg, int):
        return call.args[arg] if 0 <= arg < len(call.args) else call.keywords.get(str(arg))
    return call.keywords.get(arg)


_EITHER = re.compile(rf"^\((.*)\) if {UNKNOWN_TEST} else \((.*)\)$")


def _local_text(text: str) -> str:
    """A local's value as :func:`~.symbols.instance_sets` keeps it: one set in a block that
    may not run reads ``A (when its condition holds; else B)``."""
    m = _EITHER.match(text)
    return f"{m.group(1)} (when its condition holds; else {m.group(2)})" if m else text


def _apply(prev: str | None, sets: Iterable[InstanceSet], attrs: Collection[str],
           calls: Mapping[str, int | str | None] | None = None) -> tuple[str | None, str | None]:
    """The value the statements leave, written out, and the setter call that set it last
    (None when a statement of its own did): ``=`` replaces, ``op=`` applies the operator to
    the value before it, a call stands as written, or, for a setter whose argument carries the
    value (``calls[name]``), is that argument; ``self.<attr>`` in a value or a call's arguments
    reads the value before it (written in its place when known); a statement that may not run
    keeps the value before it possible."""
    calls = calls or {}
    value, via = prev, None
    alts = "|".join(re.escape(a) for a in sorted(attrs, key=len, reverse=True)) or "(?!)"
    own = re.compile(rf"\bself\.(?:{alts})\b")
    # the value is what a helper call set: no expression to write in its place
    from_call = prev is not None and any(
        prev.startswith(f"{c}(") for c, arg in calls.items() if arg is None)
    for ts in sets:
        if ts.kind == "raise":
            continue  # a bound on the value, not a setting (instance_value says it)
        before = _wrap(value) if value is not None and not from_call else None
        this_via = None
        if ts.kind == "call":
            new = _call_text(ts)
            if before is not None:
                name, _, args = new.partition("(")
                new = f"{name}({_put(own, args, before)}"
            arg = calls.get(ts.attr)
            carried = _arg_text(ts, arg) if arg is not None else None
            local = dict(ts.bound)
            if carried is not None and carried in local:
                carried = _local_text(local[carried])  # a local set before the call
            if carried is not None:  # (the call named as written)
                new, this_via = (_put(own, carried, before) if before is not None
                                 else carried), _call_text(ts)
        elif ts.kind == "augassign":
            base = before if before is not None else f"self.{ts.attr}"
            new = f"{base} {ts.op} {_wrap(ts.value or '')}"
        else:
            new = ts.value or ""
            if before is not None:
                new = _put(own, new, before)
        if ts.conditional and value is not None:
            new = f"{new} (when its condition holds; else {value})"
            this_via = None if via is None and this_via is None else this_via or via
        value, via = new, this_via
        from_call = ts.kind == "call" and this_via is None
    return value, via


def init_value(
    hier: Hierarchy,
    ref: ClassRef,
    mro: Sequence[ClassRef],
    attrs: Collection[str],
    calls: Mapping[str, int | str | None],
    roots: set[str],
    class_value: str | None,
) -> Tracked | None:
    """What the ``__init__`` of builder ``ref`` leaves in its instance attribute (any of
    ``attrs``, the spellings of one value): the nearest ``__init__`` of the MRO (below the
    root bases) that sets it (an assignment, an augmented one, or a call of ``calls``: name ->
    the argument that carries the value, None for "the call as written"), parents'
    ``__init__`` run first unless one does not call its parent's, applied to ``class_value``
    (the class attribute in force). None when no ``__init__`` of the chain sets it."""
    links: list[ClassRef] = []
    for c in mro:
        if c.name in roots:
            break
        links.append(c)

    def sets_of(c: ClassRef) -> list[InstanceSet]:
        facts = hier.facts(c)
        if facts is None:
            return []
        return [t for t in facts.sets
                if (t.kind == "call" and t.attr in calls)
                or (t.kind not in ("call", "raise") and t.attr in attrs)]

    def raises_of(c: ClassRef, value: str | None) -> tuple[str, ...]:
        """``E when <test>`` of each ``if <test>: raise E`` (or ``assert``) of the class's
        ``__init__`` written before its last setting of the value, whose test names something
        the value is made of (``self.num_spec_tokens > 1`` bounds ``1 + self.num_spec_tokens``;
        a check of another setting, ``self.max_cudagraph_size > 992``, does not)."""
        facts = hier.facts(c)
        if facts is None:
            return ()
        made_of = _names(value or "") | set(attrs)
        sets = sets_of(c)
        out: list[str] = []
        pending: list[str] = []
        for t in facts.sets:
            if t.kind == "raise" and _names(t.value or "") & made_of:
                pending.append(f"{t.op} when {t.value}")
            elif t in sets:
                out += pending
                pending = []
        return tuple(out)

    def from_init(start: int) -> tuple[str | None, str | None, ClassRef] | None:
        for j in range(start, len(links)):
            facts = hier.facts(links[j])
            if facts is None:
                return None
            sets = sets_of(links[j])
            if sets:
                before: str | None = None
                if facts.init_calls_super is not False:
                    got = from_init(j + 1)
                    before = got[0] if got is not None else None
                if before is None:
                    before = class_value
                value, via = _apply(before, sets, attrs, calls)
                return value, via, links[j]
            if facts.init_calls_super is False:
                return None
        return None

    got = from_init(0)
    if got is None:
        return None
    value, via, owner = got
    if via is None and owner != ref:
        via = "__init__"  # an ancestor's ``__init__`` sets it, not its class attribute
    return Tracked(value, _source(owner, ref, INIT), owner.file,
                   raises=raises_of(owner, value), via=via)


def instance_value(
    hier: Hierarchy,
    ref: ClassRef,
    mro: Sequence[ClassRef],
    attr: str,
    call: str,
    roots: set[str],
) -> Tracked:
    """Where builder ``ref``'s instance attribute ``attr`` comes from: the nearest
    ``__init__`` that sets it (an assignment, an augmented one, or the helper ``call``, whose
    text stands as the value; :func:`init_value`), applied to the class attribute in force
    before it; else the class attribute along the MRO."""
    fallback = Tracked(None, ABSENT)
    for c in mro:
        facts = hier.facts(c)
        if facts is not None and attr in facts.values:
            src = DEFAULT if c.name in roots else _source(c, ref, DECLARED)
            fallback = Tracked(facts.values[attr], src, c.file)
            break
    got = init_value(hier, ref, mro, (attr,), {call: None} if call else {}, roots,
                     fallback.value)
    return got if got is not None else fallback


def declared_value(
    hier: Hierarchy, ref: ClassRef, mro: Sequence[ClassRef], attr: str
) -> Tracked | None:
    """The class attribute ``attr`` in force; None when no class of the MRO declares it (a
    revision before the attribute existed: not tracked there)."""
    for c in mro:
        facts = hier.facts(c)
        if facts is not None and attr in facts.values:
            return Tracked(facts.values[attr], _source(c, ref, DECLARED), c.file)
    return None


# --- a PR's change ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StateChange:
    """One tracked value of one builder whose value differs between two revisions."""

    file: str
    class_name: str
    value: str  # the tracked value's name
    before: Tracked | None  # None: the class does not exist at the first revision
    after: Tracked | None
    previous_file: str | None = None  # a class whose file was renamed by the change

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "class": self.class_name,
            "value": self.value,
            "before": self.before.value if self.before else None,
            "after": self.after.value if self.after else None,
            "before_source": self.before.source if self.before else None,
            "after_source": self.after.source if self.after else None,
        }
        for side, t in (("before", self.before), ("after", self.after)):
            # the side's optional facts (origin file, old spelling, stale, raises), prefixed
            for k, v in (t.to_json() if t is not None else {}).items():
                if k not in ("value", "source"):
                    out[f"{side}_{k}"] = v
        if self.previous_file:
            out["previous_file"] = self.previous_file
        return out


def _values(b: Reading) -> dict[str, Tracked]:
    return {k: Tracked.from_json(v) for k, v in (b.values or {}).items()}


def state_changes(
    before: Iterable[Reading] | None,
    after: Iterable[Reading],
    renamed: dict[str, str] | None = None,
) -> list[StateChange]:
    """Every tracked value of every builder whose value differs from ``before`` (the first
    parent's builders; None for a root commit) to ``after``. ``renamed``: old path -> new path
    of the files the change renamed; a class that only moved with its file is compared with
    itself at the old path (and listed with ``previous_file`` only when a value changed)."""
    old = {(b.file, b.class_name): b for b in before or []}
    new = {(b.file, b.class_name): b for b in after}
    moves = {new_path: old_path for old_path, new_path in (renamed or {}).items()}
    out: list[StateChange] = []
    seen_old: set[tuple[str, str]] = set()
    for key in sorted(new):
        file, cls = key
        b_new = new[key]
        prev_key = key if key in old else None
        previous_file = None
        if prev_key is None and file in moves and (moves[file], cls) in old:
            prev_key, previous_file = (moves[file], cls), moves[file]
        b_old = old.get(prev_key) if prev_key is not None else None
        if prev_key is not None:
            seen_old.add(prev_key)
        out += _diff(file, cls, b_old, b_new, previous_file)
    for key in sorted(set(old) - seen_old):
        out += _diff(key[0], key[1], old[key], None, None)
    return out


def _diff(file: str, cls: str, b_old: Reading | None, b_new: Reading | None,
          previous_file: str | None) -> list[StateChange]:
    va = _values(b_old) if b_old is not None else {}
    vb = _values(b_new) if b_new is not None else {}
    out = []
    for name in list(dict.fromkeys([*vb, *va])):
        ta = va.get(name) if b_old is not None else None
        tb = vb.get(name) if b_new is not None else None
        a_val = (ta.value, ta.raises) if ta is not None else (None, ())
        b_val = (tb.value, tb.raises) if tb is not None else (None, ())
        if a_val == b_val:
            continue
        if b_old is not None and ta is None:
            ta = Tracked(None, ABSENT)
        if b_new is not None and tb is None:
            tb = Tracked(None, ABSENT)
        out.append(StateChange(file, cls, name, ta, tb, previous_file))
    return out


def changes_json(changes: Iterable[StateChange]) -> list[dict[str, Any]]:
    return [c.to_json() for c in changes]


def after_sources(
    state_changes: Iterable[dict[str, Any]] | None, value: str,
) -> dict[tuple[str, str], str | None]:
    """(class, file) -> where ``value`` comes from at the second revision, for each class
    whose ``value`` a PR's stored state changes (:func:`changes_json`) list as changed (None:
    the class no longer exists there; ``absent``: nothing sets it); empty when the state was
    not read."""
    return {(str(s["class"]), str(s["file"])): s.get("after_source")
            for s in state_changes or [] if s.get("value") == value}
