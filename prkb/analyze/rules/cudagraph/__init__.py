"""Rule ``cg-uniform-without-spec-decode``: a builder that claims uniform-batch graphs while its
decode threshold cannot grow under speculative decoding.

Names of classes, attributes, calls and markers come from the profile's ``[audit]`` table; the
code names no symbol of the audited project.

Spec-decode readiness ("can the decode threshold grow?") is read with the mechanism the code
has at the audited revision. The project changed it several times: a class attribute holding
the threshold (``audit.threshold_attr``), an assignment to it in ``__init__`` (also ``+=``), a
call (``audit.reorder_call``) with a flag, and, for MLA builders, a query-length attribute
(``audit.query_len_attr``). Only the links of the MRO below the root base are read.

* MLA builders (below a class of the ``mla`` group of ``audit.base_groups``) whose chain declares
  ``audit.query_len_attr`` somewhere: ready when the effective value (declared or inherited) is
  not ``audit.query_len_default``, or when a class below the MLA base sets the threshold itself
  in ``__init__`` (a call or an assignment, read as below) so that it can grow. When no class of
  the chain declares the attribute (an older revision), the default is *not* assumed: the
  threshold mechanisms below decide, as for any builder.
* Other builders: the threshold the instance ends up with decides.

  - The nearest class whose ``__init__`` sets the threshold (an assignment ``self.<attr> =``,
    an augmented assignment, or the call) decides: an ``__init__`` assignment replaces any
    class attribute at run time, so a class attribute decides only when no ``__init__`` of
    the chain sets the threshold. ``__init__`` of a parent is assumed to run first (the usual
    ``super().__init__(...)`` at the top); a class whose ``__init__`` does not call the
    parent's hides the parents' settings. A setting inside an ``if``, loop or ``except`` may
    not run: the value before it stays possible.
  - Otherwise the nearest class attribute decides.
  - A value that involves the number of speculative tokens (an identifier listed in
    ``audit.spec_markers``) or that is an int greater than 1 lets the threshold grow: ready.
    A literal 1 (or less) pins it: not ready. ``None`` means the builder does not reorder
    batches. A reference to the threshold itself (``self.<attr>``, ``+=``) reads the value
    set before. Int arithmetic and ``max``/``min`` of known values are computed. A conditional
    value is ready when one of its branches is.
  - The call: the threshold grows when its flag (keyword ``audit.reorder_flag`` or positional
    ``audit.reorder_flag_position``; absent means ``audit.reorder_flag_default``, false) is not
    literally false, or when its first argument (default ``audit.reorder_threshold_default``)
    can exceed 1. A flag that is a local name bound earlier in ``__init__``, or ``self.<name>``
    bound to a literal in a class body of the chain, is read through.
  - Any other expression (a call, a local variable, a configuration value) counts as ready,
    with the reason "unknown expression": the audit reads code, not configurations, and it can
    exceed 1 at run time. A finding is only raised on a threshold the code pins.
* A builder whose chain sets no threshold at all (below the root) has no reordering: the model
  runner does not split its batches into decode and prefill parts, so there is no decode-only
  capture path whose assertion (query length within the threshold) could fail. Its readiness
  is *not applicable* (None) and the rule does not flag it, whatever its level.

The rule flags a builder that is not ready and that can report a level of
``audit.flag_levels`` (any branch of a conditional value or any return of an overriding
method; the message names the condition).

Each reason is said in English and in Chinese (:class:`Why`): the code it quotes (names,
expressions, values) is the same in both, the words around it are not.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ....models import Finding
from ....profile import Profile
from ...symbols import UNKNOWN_TEST, CallFact, InstanceSet, call_argument
from .. import Link
from .inputs import INPUTS as INPUTS  # what reports show of the rule's inputs
from .words import COLUMN as COLUMN  # the rule's words in the matrix and reports
from .words import MESSAGES as MESSAGES

if TYPE_CHECKING:
    from ...audit import BuilderInfo

RULE = "cg-uniform-without-spec-decode"
# the base group (``[audit] base_groups``) of the MLA builders, read by their query length
MLA_GROUP = "mla"
FALSE_LITERALS = {"False", "0", "None"}
TRUE_LITERALS = {"True"}
_INHERITED = "__inherited__"  # how a class-body ``x += ...`` names the value before it


@dataclass(frozen=True)
class Why:
    """A reason in English and in Chinese; what it quotes of the code is the same in both."""

    en: str
    zh: str


def _code(text: str) -> Why:
    """Code as a reason: the same text in every language."""
    return Why(text, text)


def _unknown(text: str) -> Why:
    return Why(f"unknown expression {text}", f"无法求值的表达式 {text}")


@dataclass(frozen=True)
class Reading:
    """What a threshold can be: ``grows`` (can exceed 1), ``pinned`` (at most 1), ``unknown``
    (an expression prkb does not evaluate), ``none`` (no threshold: no reordering)."""

    state: str
    why: Why
    value: int | None = None  # the value when it is one known int


def _cfg(profile: Profile, key: str, default: Any) -> Any:
    return profile.audit.get(key, default)


def _either(a: Reading, b: Reading, why: Why) -> Reading:
    """A value that may be ``a`` or ``b``: it grows when one of them does."""
    for state in ("grows", "unknown", "pinned", "none"):
        if state in (a.state, b.state):
            value = a.value if a.value == b.value else None
            return Reading(state, why, value)
    return Reading("unknown", why)


def _of_int(n: int, why: Why) -> Reading:
    return Reading("grows" if n > 1 else "pinned", why, n)


class _Evaluator:
    """Reads a threshold expression (text) given what the threshold was before it."""

    def __init__(self, profile: Profile, attr: str, prev: Callable[[], Reading],
                 bound: dict[str, str], in_class_body: bool) -> None:
        self.markers = {str(m) for m in _cfg(profile, "spec_markers", [])}
        self.attr = attr
        self.prev = prev
        self.bound = bound
        self.in_class_body = in_class_body
        self._prev: Reading | None = None

    def previous(self) -> Reading:
        if self._prev is None:
            self._prev = self.prev()
        return self._prev

    def text(self, text: str) -> Reading:
        try:
            node = ast.parse(text.replace("<inherited>", _INHERITED), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return Reading("unknown", _unknown(text))
        return self.node(node, 0)

    def _is_self_ref(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id == _INHERITED or (self.in_class_body and node.id == self.attr)
        return (
            isinstance(node, ast.Attribute)
            and node.attr == self.attr
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        )

    def _marker(self, node: ast.expr) -> str | None:
        for sub in ast.walk(node):
            name = (
                sub.id if isinstance(sub, ast.Name)
                else sub.attr if isinstance(sub, ast.Attribute)
                else None
            )
            if name in self.markers:
                return name
        return None

    def node(self, node: ast.expr, depth: int) -> Reading:
        text = " ".join(ast.unparse(node).split()).replace(UNKNOWN_TEST, "...")
        if depth > 8:
            return Reading("unknown", _unknown(text))
        if isinstance(node, ast.Constant):
            if node.value is None:
                return Reading("none", _code("None"))
            if isinstance(node.value, int) and not isinstance(node.value, bool):
                return _of_int(node.value, _code(text))
            return Reading("unknown", _unknown(text))
        marker = self._marker(node)
        if marker is not None:
            return Reading("grows", Why(f"{text} (involves {marker})", f"{text}（含 {marker}）"))
        if self._is_self_ref(node):
            before = self.previous()
            return Reading(before.state, before.why, before.value)
        if isinstance(node, ast.Name) and node.id in self.bound and depth < 8:
            got = self.text(self.bound[node.id])
            return Reading(got.state, Why(f"{node.id} = {got.why.en}", f"{node.id} = {got.why.zh}"),
                           got.value)
        if isinstance(node, ast.IfExp):
            yes = self.node(node.body, depth + 1)
            no = self.node(node.orelse, depth + 1)
            return _either(yes, no, _code(text))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.node(node.operand, depth + 1)
            if inner.value is not None:
                return _of_int(-inner.value, _code(text))
        if isinstance(node, ast.BinOp):
            left = self.node(node.left, depth + 1)
            right = self.node(node.right, depth + 1)
            if left.value is not None and right.value is not None:
                ops: dict[type[ast.operator], Callable[[int, int], int]] = {
                    ast.Add: lambda a, b: a + b,
                    ast.Sub: lambda a, b: a - b,
                    ast.Mult: lambda a, b: a * b,
                }
                fn = ops.get(type(node.op))
                if fn is not None:
                    return _of_int(fn(left.value, right.value), _code(text))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("max", "min")
            and node.args
            and not node.keywords
        ):
            parts = [self.node(a, depth + 1) for a in node.args]
            values = [p.value for p in parts]
            if all(v is not None for v in values):
                known = [int(v) for v in values if v is not None]
                return _of_int(max(known) if node.func.id == "max" else min(known), _code(text))
            if node.func.id == "max" and any(p.state == "grows" for p in parts):
                return Reading("grows", _code(text))
        return Reading("unknown", _unknown(text))


def _flag_of(call: CallFact, profile: Profile) -> str | None:
    return call_argument(call, str(_cfg(profile, "reorder_flag", "")),
                         int(_cfg(profile, "reorder_flag_position", 1)))


def _const(chain: list[Link], name: str) -> str | None:
    """The literal a class body of the chain binds ``name`` to (nearest first)."""
    for link in chain:
        if link.facts is not None and name in link.facts.consts:
            return link.facts.consts[name]
    return None


def _flag_value(flag: str, bound: dict[str, str], chain: list[Link]) -> str:
    """The flag's text, read through a local binding and a class-body literal."""
    text = bound.get(flag, flag)
    for prefix in ("self.", "cls."):
        if text.startswith(prefix) and text[len(prefix):].isidentifier():
            got = _const(chain, text[len(prefix):])
            if got is not None:
                return got
    return text


def _call_effect(
    ts: InstanceSet, link: Link, chain: list[Link], profile: Profile, ev: _Evaluator
) -> Reading:
    call_name = ts.attr
    flag_name = str(_cfg(profile, "reorder_flag", "flag"))
    call = ts.call or CallFact([], {})
    flag = _flag_of(call, profile)
    if flag is None:
        default = bool(_cfg(profile, "reorder_flag_default", False))
        shown = Why(f"{flag_name} not passed (default {default})",
                    f"未传 {flag_name}，默认 {default}")
        flag_ready = default
    else:
        value = _flag_value(flag, ev.bound, chain)
        shown = Why(f"{flag_name}={flag}" + (f" ({value})" if value != flag else ""),
                    f"{flag_name}={flag}" + (f"（即 {value}）" if value != flag else ""))
        flag_ready = value not in FALSE_LITERALS
    where = Why(f"{link.name} calls {call_name}({shown.en})",
                f"{link.name} 调用 {call_name}({shown.zh})")
    first = ts.value if ts.value is not None else str(_cfg(profile, "reorder_threshold_default", 1))
    base = ev.text(first)
    if base.state == "none":
        return Reading("none", Why(f"{where.en}: threshold None", f"{where.zh}：阈值为 None"))
    if flag_ready:
        return Reading("grows", where)
    threshold = Why(f"{where.en}, threshold {base.why.en}", f"{where.zh}，阈值 {base.why.zh}")
    if base.state == "grows":
        return Reading("grows", threshold, base.value)
    if base.state == "unknown":
        return Reading("unknown", threshold)
    return Reading("pinned", where, base.value)


class _Chain:
    """The links of one builder below the root base, and the threshold they give it."""

    def __init__(self, chain: list[Link], profile: Profile) -> None:
        self.all = chain
        self.links: list[Link] = []
        for link in chain:
            if link.role == "root":
                break
            self.links.append(link)
        self.profile = profile
        self.attr = str(_cfg(profile, "threshold_attr", ""))
        self.call = str(_cfg(profile, "reorder_call", ""))

    def sets(self, link: Link) -> list[InstanceSet]:
        if link.facts is None:
            return []
        return [
            t for t in link.facts.sets
            if (t.kind == "call" and t.attr == self.call and self.call)
            or (t.kind != "call" and t.attr == self.attr and self.attr)
        ]

    def class_attr(self, start: int = 0) -> Reading | None:
        """The nearest class attribute from ``links[start]`` up."""
        if not self.attr:
            return None
        for i in range(start, len(self.links)):
            facts = self.links[i].facts
            if facts is not None and self.attr in facts.values:
                text = facts.values[self.attr]

                def before(i: int = i) -> Reading:
                    return self.class_attr(i + 1) or Reading(
                        "none", Why("no value before", "此前没有取值"))

                got = _Evaluator(self.profile, self.attr, before, {}, True).text(text)
                name = self.links[i].name
                more = got.why.en not in (text, f"unknown expression {text}")
                return Reading(
                    got.state,
                    Why(f"{name} sets {self.attr} = {text} (class attribute)"
                        + (f": {got.why.en}" if more else ""),
                        f"{name} 把类属性 {self.attr} 设为 {text}"
                        + (f"：{got.why.zh}" if more else "")),
                    got.value,
                )
        return None

    def init_from(self, start: int) -> Reading | None:
        """The threshold the ``__init__`` methods from ``links[start]`` up leave."""
        for j in range(start, len(self.links)):
            facts = self.links[j].facts
            if facts is None:
                return None
            sets = self.sets(self.links[j])
            if sets:
                return self.run(j, sets)
            if facts.init_calls_super is False:
                return None  # an __init__ that does not run its parents'
        return None

    def before_init(self, j: int) -> Reading:
        facts = self.links[j].facts
        got = None
        if facts is None or facts.init_calls_super is not False:
            got = self.init_from(j + 1)
        if got is None:
            got = self.class_attr(0)
        return got or Reading("none", Why(f"no {self.attr} before", f"此前没有 {self.attr}"))

    def run(self, j: int, sets: list[InstanceSet], prev: Reading | None = None) -> Reading:
        link = self.links[j]
        current: Reading | None = prev

        def before() -> Reading:
            nonlocal current
            if current is None:
                current = self.before_init(j)
            return current

        for ts in sets:
            ev = _Evaluator(self.profile, self.attr, before, dict(ts.bound), False)
            if ts.kind == "call":
                new = _call_effect(ts, link, self.all, self.profile, ev)
            else:
                rhs = ts.value or ""
                text = rhs if ts.kind == "assign" else f"self.{self.attr} {ts.op} ({rhs})"
                got = ev.text(text)
                op = "=" if ts.kind == "assign" else f"{ts.op}="
                statement = f"self.{self.attr} {op} {rhs}"
                shown = Why(f"{link.name} sets {statement} in __init__",
                            f"{link.name} 在 __init__ 中执行 {statement}")
                if got.why.en not in (text, f"unknown expression {text}", rhs):
                    shown = Why(f"{shown.en}: {got.why.en}", f"{shown.zh}：{got.why.zh}")
                new = Reading(got.state, shown, got.value)
            if ts.conditional:
                old = before()
                new = _either(old, new, Why(
                    f"{new.why.en} (conditionally; else {old.why.en})",
                    f"{new.why.zh}（仅在条件成立时；否则为 {old.why.zh}）"))
            current = new
        return current if current is not None else before()


_STAYS = Why(": the decode threshold stays 1", "：decode 阈值保持为 1")
_NOT_REORDERED = Why(": batches are not reordered, so the rule does not apply",
                     "：批次不会重排，本规则不适用")


def _then(why: Why, tail: Why) -> Why:
    return Why(why.en + tail.en, why.zh + tail.zh)


def _verdict(reading: Reading, profile: Profile) -> tuple[bool | None, Why]:
    if reading.state == "none":
        return None, _then(reading.why, _NOT_REORDERED)
    if reading.state == "grows":
        return True, reading.why
    if reading.state == "unknown":
        return True, _then(reading.why, Why(": unknown expression, counted as able to grow",
                                            "：表达式无法求值，按可增大计"))
    return False, _then(reading.why, _STAYS)


def _not_applicable(profile: Profile) -> tuple[None, Why]:
    names = [n for n in (str(_cfg(profile, k, "")) for k in ("threshold_attr", "reorder_call"))
             if n]
    what = Why(" or ".join(names) or "threshold", " 或 ".join(names) or "阈值")
    return None, Why(
        f"no {what.en} below the base: batches are not reordered, so the rule does not apply",
        f"基类之下没有 {what.zh}：批次不会重排，本规则不适用")


def _source(holder: str, chain: list[Link]) -> Why:
    """Where a query-length value comes from, as ``(declared)`` / ``(from X)``."""
    if holder == chain[0].name:
        return Why("(declared)", "（本类声明）")
    if holder == "default":
        return Why("(from default)", "（默认值）")
    return Why(f"(from {holder})", f"（来自 {holder}）")


def rule_reading(
    chain: list[Link], profile: Profile, values: dict[str, dict[str, Any]] | None = None,
) -> tuple[bool | None, str, str]:
    """(ready, reason in English, reason in Chinese): ready True/False, or None when the
    builder has no reorder threshold. An MLA builder is one below a base of the group
    :data:`MLA_GROUP` (the profile's ``[audit] base_groups``). ``values`` (the state model's
    values in force) is not read: this rule reads the threshold's mechanism along the chain
    itself, per era of the code (the module's text)."""
    is_mla = any(MLA_GROUP in link.groups for link in chain)
    ready, why = _readiness(chain, is_mla, profile)
    return ready, why.en, why.zh


def _readiness(chain: list[Link], is_mla: bool, profile: Profile) -> tuple[bool | None, Why]:
    below = _Chain(chain, profile)
    attr = str(_cfg(profile, "query_len_attr", ""))
    has_query_len = bool(attr) and any(
        link.facts is not None and attr in link.facts.values for link in chain
    )
    if is_mla and has_query_len:
        default = str(_cfg(profile, "query_len_default", ""))
        value, holder = default, "default"
        for link in chain:
            if link.facts is not None and attr in link.facts.values:
                value, holder = link.facts.values[attr], link.name
                break
        if value.rsplit(".", 1)[-1] != default:
            src = _source(holder, chain)
            return True, Why(f"{attr} = {value} {src.en}", f"{attr} = {value}{src.zh}")
        pinned = Reading("pinned", _code(f"{attr} = {default}"), 1)
        for j, link in enumerate(below.links):
            if link.role != "builder":
                break
            sets = below.sets(link)
            if sets:
                got = below.run(j, sets, prev=pinned)
                if got.state in ("grows", "unknown"):
                    return _verdict(got, profile)
        src = _source(holder, chain)
        return False, _then(Why(f"{attr} = {default} {src.en}", f"{attr} = {default}{src.zh}"),
                            _STAYS)
    reading = below.init_from(0) or below.class_attr(0)
    if reading is None:
        return _not_applicable(profile)
    ready, why = _verdict(reading, profile)
    if ready is False:
        split = _own_split(chain, profile)
        if split is not None:
            return True, Why(f"{reading.why.en}, but {split.en}", f"{reading.why.zh}，但{split.zh}")
    return ready, why


def _own_split(chain: list[Link], profile: Profile) -> Why | None:
    """How a builder splits decodes by a threshold of its own (``audit.split_attrs``, set in
    ``__init__``) that grows with the speculative tokens; None when none does."""
    for attr in (str(a) for a in _cfg(profile, "split_attrs", [])):
        own = _Chain(chain, profile)
        own.attr = attr
        reading = own.init_from(0)
        if reading is not None and reading.state == "grows":
            return Why(f"it splits decodes by its own {attr}: {reading.why.en}",
                       f"它按自己的 {attr} 拆分 decode：{reading.why.zh}")
    return None


def flagged_alternatives(builder: BuilderInfo, profile: Profile) -> list[tuple[str, str | None]]:
    """The (level, condition) pairs of the builder that the rule cares about."""
    wanted = set(_cfg(profile, "flag_levels", ["UNIFORM_BATCH", "ALWAYS"]))
    alts = builder.alternatives or [(lv, None) for lv in builder.levels]
    return [(lv, when) for lv, when in alts if lv in wanted]


def findings_for(builder: BuilderInfo, profile: Profile, commit: str | None) -> list[Finding]:
    if builder.meets_rule is not False:
        return []
    alts = flagged_alternatives(builder, profile)
    if not alts:
        return []
    level_en = " / ".join(f"{lv} (when {when})" if when else lv for lv, when in alts)
    level_zh = " / ".join(f"{lv}（条件：{when}）" if when else lv for lv, when in alts)
    if builder.decided_by is not None:
        method = "/".join(profile.methods)
        origin = f"returned by {method}() of {builder.decided_by}"
        origin_zh = f"由 {builder.decided_by} 的 {method}() 返回"
    elif builder.declared_in == builder.class_name:
        origin, origin_zh = "declared here", "在本类中声明"
    else:
        origin = f"inherited from {builder.declared_in}"
        origin_zh = f"继承自 {builder.declared_in}"
    en = (
        f"{builder.class_name} claims {level_en} ({origin}), but its decode threshold "
        f"cannot grow under speculative decoding ({builder.rule_reason}); full-graph capture "
        f"with MTP/EAGLE will see query lengths above the threshold. Either lower the level to "
        f"a single-token one or let the threshold grow."
    )
    zh = (
        f"{builder.class_name} 声明支持 {level_zh}（{origin_zh}），但在推测解码下其 decode "
        f"阈值无法增大（{builder.rule_reason_zh}）；启用 MTP/EAGLE 时完整 CUDA Graph 捕获会"
        f"遇到超过阈值的 query 长度。应降低为单 token 级别，或让阈值能够随推测 token 数增大。"
    )
    rule = str(_cfg(profile, "rule", RULE))
    return [Finding(rule, builder.file, builder.class_name, en, zh, commit=commit)]
