"""Rule ``cg-uniform-without-spec-decode``: a builder that claims uniform-batch graphs while its
decode threshold cannot grow under speculative decoding.

Names of classes, attributes and calls come from the profile's ``[audit]`` table.

Spec-decode readiness ("can the decode threshold grow?"):

* MLA builders (below an ``audit.mla_bases`` class): ready when the effective
  ``audit.query_len_attr`` (declared or inherited) is not ``audit.query_len_default``, or when a
  class below the MLA base calls ``audit.reorder_call`` itself with a flag that is not literally
  false (that call re-initialises the threshold after the base's own).
* Other builders: the nearest class along the MRO (below the root base) that calls
  ``audit.reorder_call`` decides: the flag (keyword ``audit.reorder_flag`` or positional
  ``audit.reorder_flag_position``; absent means ``audit.reorder_flag_default``, false) makes the
  builder ready unless it is literally false. A variable or expression counts as ready: it can
  be true at run time, and the audit reads code, not configurations.
* A non-MLA builder that never calls ``audit.reorder_call`` has no reorder threshold at all:
  the model runner does not split its batches into decode and prefill parts, so there is no
  decode-only capture path whose assertion (query length within the threshold) could fail. Its
  readiness is *not applicable* (None) and the rule does not flag it, whatever its level. The
  crash the rule exists for needs a threshold that is pinned at 1, which only a reordering
  builder has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...models import Finding
from ...profile import Profile
from ..symbols import CallFact, ClassFacts

if TYPE_CHECKING:
    from ..audit import BuilderInfo

RULE = "cg-uniform-without-spec-decode"
FALSE_LITERALS = {"False", "0", "None"}


@dataclass(frozen=True)
class Link:
    """One class of a builder's MRO as the rule sees it."""

    name: str
    facts: ClassFacts | None  # None for a base that could not be resolved
    role: str  # "builder" (the class or a builder ancestor), "mla_root", "root"


def _cfg(profile: Profile, key: str, default: Any) -> Any:
    return profile.audit.get(key, default)


def _flag_of(call: CallFact, profile: Profile) -> str | None:
    flag = str(_cfg(profile, "reorder_flag", ""))
    pos = int(_cfg(profile, "reorder_flag_position", 1))
    if flag and flag in call.keywords:
        return call.keywords[flag]
    if len(call.args) > pos:
        return call.args[pos]
    return None


def _call_readiness(link: Link, profile: Profile) -> tuple[bool, str] | None:
    call_name = str(_cfg(profile, "reorder_call", ""))
    if not call_name or link.facts is None:
        return None
    calls = link.facts.calls.get(call_name)
    if not calls:
        return None
    flag_name = str(_cfg(profile, "reorder_flag", "flag"))
    texts = []
    ready = False
    for call in calls:
        flag = _flag_of(call, profile)
        if flag is None:
            default = bool(_cfg(profile, "reorder_flag_default", False))
            texts.append(f"{flag_name} not passed (default {default})")
            ready = ready or default
        else:
            texts.append(f"{flag_name}={flag}")
            ready = ready or flag not in FALSE_LITERALS
    where = f"{link.name} calls {call_name}({'; '.join(texts)})"
    return ready, where


def spec_readiness(chain: list[Link], is_mla: bool, profile: Profile) -> tuple[bool | None, str]:
    """(ready, reason): True/False, or None when the builder has no reorder threshold."""
    if is_mla:
        attr = str(_cfg(profile, "query_len_attr", ""))
        default = str(_cfg(profile, "query_len_default", ""))
        value, holder = default, "default"
        for link in chain:
            if link.facts is not None and attr in link.facts.values:
                value, holder = link.facts.values[attr], link.name
                break
        if value.rsplit(".", 1)[-1] != default:
            src = "declared" if holder == chain[0].name else f"from {holder}"
            return True, f"{attr} = {value} ({src})"
        for link in chain:
            if link.role != "builder":
                break
            got = _call_readiness(link, profile)
            if got is not None and got[0]:
                return True, got[1]
        src = "declared" if holder == chain[0].name else f"from {holder}"
        return False, f"{attr} = {default} ({src}): the decode threshold stays 1"
    for link in chain:
        if link.role != "builder":
            break
        got = _call_readiness(link, profile)
        if got is not None:
            ready, where = got
            return ready, where if ready else f"{where}: the decode threshold stays 1"
    call_name = str(_cfg(profile, "reorder_call", ""))
    return None, f"no {call_name} call: batches are not reordered, so the rule does not apply"


def flagged_levels(builder: BuilderInfo, profile: Profile) -> list[str]:
    """Levels of the builder (each branch of a conditional) that the rule cares about."""
    wanted = set(_cfg(profile, "flag_levels", ["UNIFORM_BATCH", "ALWAYS"]))
    return [lv for lv in builder.levels if lv in wanted]


def findings_for(builder: BuilderInfo, profile: Profile, commit: str | None) -> list[Finding]:
    if builder.spec_ready is not False:
        return []
    levels = flagged_levels(builder, profile)
    if not levels:
        return []
    level = " / ".join(levels)
    origin = (
        "declared here"
        if builder.declared_in == builder.class_name
        else f"inherited from {builder.declared_in}"
    )
    origin_zh = (
        "在本类中声明"
        if builder.declared_in == builder.class_name
        else f"继承自 {builder.declared_in}"
    )
    cond_en = f" (when {builder.condition})" if builder.condition else ""
    cond_zh = f"（条件：{builder.condition}）" if builder.condition else ""
    en = (
        f"{builder.class_name} claims {level}{cond_en} ({origin}), but its decode threshold "
        f"cannot grow under speculative decoding ({builder.spec_reason}); full-graph capture "
        f"with MTP/EAGLE will see query lengths above the threshold. Either lower the level to "
        f"a single-token one or let the threshold grow."
    )
    zh = (
        f"{builder.class_name} 声明支持 {level}{cond_zh}（{origin_zh}），但在推测解码下其 decode "
        f"阈值无法增大（{builder.spec_reason}）；启用 MTP/EAGLE 时完整 CUDA Graph 捕获会遇到超过"
        f"阈值的 query 长度。应降低为单 token 级别，或让阈值能够随推测 token 数增大。"
    )
    rule = str(_cfg(profile, "rule", RULE))
    return [Finding(rule, builder.file, builder.class_name, en, zh, commit=commit)]
