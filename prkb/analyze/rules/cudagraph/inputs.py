"""What the report's key code says of this rule's inputs: the decode-threshold mechanism of a
builder, read from the code an excerpt shows (``prkb.analyze.excerpt``) and from the state
model's reading stored with the builder (``prkb.render.sections.key_code``).

The mechanism's names are the profile's ``[audit]``: ``query_len_attr`` and ``threshold_attr``
declared in the class body, ``reorder_call`` calls (with the flag ``reorder_flag``, keyword or
at ``reorder_flag_position``) and ``self.<threshold_attr>`` assignments in its methods. Each
note is a fact for the template (``templates/report/sections/key_code.j2`` words the
``input-*`` codes), with ``meets``: ``yes``/``no``/``unknown``, read literally from the values
shown. The audit's stored reading stays the authority on whether a builder meets the rule;
these notes only say what the shown code reads.

- ``input-declares``: ``query_len_attr`` declared; ``meets`` ``no`` when it is the profile's
  ``query_len_default``, else ``yes``.
- ``input-call``: a ``reorder_call`` call (``flag_name``: its flag, as passed: ``flag``);
  ``meets`` ``yes`` for a ``True`` flag, ``no`` for ``False`` or none passed, else
  ``unknown``.
- ``input-sets``: ``threshold_attr`` declared in the class body or set on ``self``; ``meets``
  ``yes`` when the value names one of the profile's ``spec_markers``, else ``unknown`` (a
  constant above 1 is a different mechanism the audit reads).
- ``input-none``: none of these in the class (it inherits its parent's; only from a whole
  file); ``input-not-shown``: the patch shows none (unknown, not absent).
- From the state model: ``input-state`` (what the class's own settings leave) and
  ``input-root`` (the root builder base itself).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ....profile import AUDIT_DEFAULTS, Profile
from ...excerpt import literal_value
from ...hierarchy import ClassRef, Hierarchy
from ...notes import Note
from ...state import Tracked, declared_value, instance_value
from ...symbols import ClassFacts, call_argument, call_fact
from .. import InputNames


def _names(profile: Profile) -> tuple[str, str, str]:
    a = profile.audit
    return (str(a.get("query_len_attr") or ""), str(a.get("threshold_attr") or ""),
            str(a.get("reorder_call") or ""))


class Inputs:
    """The rule's inputs as the audit reads them and the report shows them
    (``prkb.analyze.rules.RuleInputs``)."""

    def audit_names(self, profile: Profile) -> InputNames:
        """What the audit reads: the query-length and threshold class attributes, the
        helper call, and the threshold and split thresholds (``split_attrs``) set on
        ``self``."""
        qattr, tattr, call = _names(profile)
        split = [str(a) for a in profile.audit.get("split_attrs", [])]
        return InputNames(
            class_attrs=tuple(x for x in (qattr, tattr) if x),
            calls=(call,) if call else (),
            instance_attrs=tuple(dict.fromkeys(x for x in (tattr, *split) if x)),
            watched=tuple(dict.fromkeys(x for x in (tattr, call, qattr, *split) if x)),
        )

    def tracked(
        self, hier: Hierarchy, ref: ClassRef, mro: Sequence[ClassRef], roots: set[str],
        profile: Profile,
    ) -> dict[str, Tracked]:
        """The decode threshold (set by the helper call too), each split threshold the
        builder has, and the query-length attribute, in force (the state model's values).
        A split threshold written from the public one (``self.<threshold_attr>``) has the
        public value in its place when that is a literal: a private threshold that grows
        while the public one stays at 1 reads as such."""
        qattr, main, call = _names(profile)
        out: dict[str, Tracked] = {}
        public: str | None = None  # the decode threshold's value, when it is a literal
        for attr in [main, *(str(a) for a in profile.audit.get("split_attrs", []))]:
            if not attr:
                continue
            got = instance_value(hier, ref, mro, attr, call if attr == main else "", roots)
            if attr == main and got.value is not None and got.value.isdigit():
                public = got.value
            elif attr != main and got.value is not None and public is not None:
                own = re.compile(rf"\bself\.{re.escape(main)}\b")
                # (the value as it is: no group reference is read in it)
                got = replace(got, value=own.sub(public.replace("\\", "\\\\"), got.value))
            if got.value is not None or attr == main:
                out[attr] = got
        if qattr:
            q = declared_value(hier, ref, mro, qattr)
            if q is not None:
                out[qattr] = q
        return out

    def names(self, profile: Profile) -> InputNames:
        """What the report's key code reads: the query-length and threshold class
        attributes, the helper call and the threshold set on ``self``; the helper call and
        the query-length attribute are its related code."""
        qattr, tattr, call = _names(profile)
        return InputNames(
            class_attrs=tuple(x for x in (qattr, tattr) if x),
            calls=(call,) if call else (),
            instance_attrs=(tattr,) if tattr else (),
            related=tuple(x for x in (call, qattr) if x),
        )

    def anchors(self, node: ast.ClassDef, profile: Profile) -> list[tuple[int, int]]:
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

    def class_notes(self, facts: ClassFacts, profile: Profile) -> list[Note]:
        """The mechanism the class itself shows, read literally (see the module's text)."""
        qattr, tattr, call = _names(profile)
        if not (qattr or tattr or call):
            return []  # the profile names no threshold mechanism: nothing to read
        a = profile.audit
        out: list[Note] = []
        if qattr and qattr in facts.values:
            out.append(_query_len_note(qattr, facts.values[qattr], profile))
        if tattr and tattr in facts.values:
            v = facts.values[tattr]
            out.append(Note("input-sets", {"attr": tattr, "value": v, "where": "class",
                                           "meets": "yes" if _has_spec_marker(v, profile)
                                           else "unknown"}))
        flag_name, pos = _reorder_flag(profile)
        for t in facts.sets:
            if t.kind == "call" and t.call is not None:
                flag = call_argument(t.call, flag_name, pos)
                meets = "no" if flag in (None, "False") else "yes" if flag == "True" else (
                    "unknown")
                value = t.value or str(a.get("reorder_threshold_default", ""))
                out.append(Note("input-call", {"call": t.attr, "threshold": value,
                                               "flag_name": flag_name, "flag": flag or "",
                                               "meets": meets}))
            elif t.kind in ("assign", "augassign") and t.value is not None:
                out.append(Note("input-sets", {
                    "attr": t.attr, "value": t.value, "op": t.op or "=", "where": "method",
                    "meets": "yes" if _has_spec_marker(t.value, profile) else "unknown"}))
        if not out:
            out.append(Note("input-none"))
        return out

    def patch_notes(self, lines: list[str], profile: Profile) -> list[Note]:
        """What the shown lines of a class say of the mechanism (``input-not-shown`` when
        nothing: the rest of the class is not in the patch, so nothing is known of it)."""
        qattr, tattr, call = _names(profile)
        if not (qattr or tattr or call):
            return []  # the profile names no threshold mechanism: nothing to read
        out: list[Note] = []
        for text in lines:
            if qattr:
                v = literal_value(text, qattr, profile)
                if v is not None:
                    out.append(_query_len_note(qattr, v, profile))
            at = re.search(rf"(?<![A-Za-z0-9_]){re.escape(call)}\s*\(", text) if call else None
            if at is not None:
                flag = _line_call_flag(text[at.start():], profile)
                meets = "unknown" if flag is None else "yes" if flag == "True" else (
                    "no" if flag == "False" else "unknown")
                out.append(Note("input-call", {"call": call, "flag_name": _reorder_flag(profile)[0],
                                               "flag": flag or "", "meets": meets}))
            if tattr and re.search(rf"\bself\.{re.escape(tattr)}\s*[-+*/]?=", text):
                value = text.split("=", 1)[1].strip()
                out.append(Note("input-sets", {
                    "attr": tattr, "value": value, "where": "method",
                    "meets": "yes" if _has_spec_marker(value, profile) else "unknown"}))
        return out or [Note("input-not-shown")]

    def state_notes(
        self, ex: dict[str, Any], row: dict[str, Any] | None, profile: Profile,
    ) -> list[dict[str, Any]]:
        """An excerpt's notes told what the state model read at the PR's commit (``row``: the
        builder's stored row, with its ``values`` and the audit's ``meets_rule``):
        ``input-none`` (the class sets no threshold itself) says where the threshold comes
        from (``from``: a class, ``default`` or ``absent``; ``value``; ``origin_file``), the
        root builder base itself is ``input-root``, and the class's own settings read
        together replace each statement read alone (``input-state``, with the value's stored
        ``raises``). Without a reading the notes say only what the class shows."""
        attr = str(profile.audit.get("threshold_attr") or "")
        got = (row or {}).get("values", {}).get(attr) if attr else None
        out = []
        own = isinstance(got, dict) and got.get("source") in ("init", "declared")
        if own and any(n["code"] == "input-sets" for n in ex["notes"]):
            # what the class's own settings leave, as the state model reads them (a ``+=`` on
            # the value before it, the raises before it)
            assert isinstance(got, dict)
            ready = (row or {}).get("meets_rule")
            value = str(got.get("value") or "")
            out.append({"code": "input-state", "attr": attr, "value": got.get("value"),
                        "where": got.get("source"),
                        # a constant does not change with the speculative tokens
                        "constant": int(value) if value.isdigit() else None,
                        "meets": "yes" if ready is True else "no" if ready is False else "",
                        "raises": got.get("raises")})
        for note in ex["notes"]:
            if note["code"] == "input-sets" and out and out[0]["code"] == "input-state":
                continue
            if note["code"] == "input-none" and (
                    ex["class"].rsplit(".", 1)[-1] in profile.builder_bases):
                note = {"code": "input-root"}
            elif note["code"] == "input-none" and isinstance(got, dict) and str(
                    got.get("source") or "").startswith(("inherited:", "default", "absent")):
                kind, _, origin = str(got.get("source") or "").partition(":")
                note = {**note, "from": origin if kind == "inherited" else kind,
                        "value": got.get("value"), "origin_file": got.get("origin_file")}
            out.append(note)
        return out


def _query_len_note(attr: str, value: str, profile: Profile) -> Note:
    """``value`` as written (``QueryLen.X`` or ``X``); it meets the rule unless it is the
    default."""
    default = str(profile.audit.get("query_len_default") or "")
    member = value.rsplit(".", 1)[-1]
    meets = "no" if member == default else "yes" if member.isidentifier() else "unknown"
    return Note("input-declares", {"attr": attr, "value": member if member.isidentifier()
                                   else value, "default": default, "meets": meets})


def _has_spec_marker(text: str, profile: Profile) -> bool:
    return any(m in text for m in profile.audit.get("spec_markers", []))


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


INPUTS = Inputs()
