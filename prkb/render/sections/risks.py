"""Risks and impact: each changed class with who gains and who pays (:mod:`prkb.analyze.scope`),
the platforms and features, the audit's readings and findings, the core-path rule and the risk
tags with their reasons."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analyze.risk import platform_split
from ...analyze.scope import Scope, priors, scope_of
from ...profile import Platform, Profile
from ..prfacts import PrFacts

TAG_ORDER = (
    "core-path", "missing-tests", "platform-specific", "level-raised", "level-lowered",
    "declaration-removed", "dynamic-support", "depends-on-pr", "audit-finding",
    "patch-unavailable", "revert", "small-change",
)
# Tags whose reasons from risk_tags_for are identifiers (shown verbatim as code).
VERBATIM_REASONS = (
    "level-raised", "level-lowered", "declaration-removed", "dynamic-support", "audit-finding",
    "patch-unavailable",
)
# effect bases whose levels are the builder's effective ones at both revisions
READ_FROM_STATE = ("inherited", "now-inherits", "new-builder", "stale", "restored", "state",
                   "base-changed")


@dataclass(frozen=True)
class Risks:
    """Facts of every language; :func:`localize` labels the platforms and features and picks
    the findings' messages and the core rule's reason of a language. ``platforms``,
    ``portable`` and ``title_platforms`` are :class:`~prkb.profile.Platform` objects before
    :func:`localize`, labels after."""

    tags: list[dict[str, Any]]  # code and details (reasons), in TAG_ORDER
    core_rule: dict[str, Any]  # applies, files, prefixes (and why, once localized)
    core_paths: list[str]
    platforms: list[Any]
    portable: Any
    title_platforms: list[Any]
    features: list[dict[str, Any]]
    builders: list[dict[str, Any]]  # each changed class once, with its effects
    findings: list[dict[str, Any]]
    readings: list[dict[str, Any]]  # the audit's readings per group (rule_readings groups)


def build(f: PrFacts) -> Risks:
    facts, profile = f.facts, f.profile
    decl_core = sorted({c["file"] for c in f.changes if c["core"]})
    plats = platform_split([x["filename"] for x in f.record.get("files") or []],
                           facts["title"] or "", profile)
    # the audit's reading at the PR's commit of every builder (those it changed and those the
    # state change reaches through a base), the changed ones as the audit's readings say
    ready: dict[tuple[str, str], bool | None] = {
        (str(b.get("class")), str(b.get("file"))): b.get("meets_rule") for b in f.levels_now}
    ready.update({(c["class"], c["file"]): (None if c["state"] in ("unchecked", "not-applicable")
                                            else c["state"] == "ready")
                  for c in f.readings["classes"]})
    scope = scope_of(f.record, f.symbol_changes, f.findings, profile, ready,
                     priors(facts.get("state_changes"), f.symbol_changes, profile.display,
                            {(str(b.get("class")), str(b.get("file"))) for b in f.levels_now}))
    return Risks(
        tags=_tags(f, decl_core),
        core_rule={"applies": bool(decl_core), "files": decl_core,
                   "prefixes": sorted(profile.core_rule.get("declaration_paths", []))},
        core_paths=sorted(facts["core_paths"]),
        # platforms of the changed code, portable code (not a restriction), platforms only
        # the title names
        platforms=list(plats.code), portable=plats.portable,
        title_platforms=list(plats.title_only),
        features=[{"name": x.name, "where": list(x.where)} for x in scope.features],
        builders=_holders(f, _builders(scope, f.changes, f.readings, profile, {
            (str(b.get("class")), str(b.get("file"))) for b in f.levels_now
            if b.get("meets_rule") is None})),
        findings=facts["findings"],  # messages of the language: localize()
        readings=f.readings["groups"],
    )


def _tags(f: PrFacts, decl_core: list[str]) -> list[dict[str, Any]]:
    """The risk tags in :data:`TAG_ORDER`, each with its details (paths, PRs, identifiers)."""
    out = []
    for code in sorted(f.risk_codes,
                       key=lambda c: (TAG_ORDER.index(c) if c in TAG_ORDER else 99, c)):
        if code == "core-path":
            details = sorted(set(f.facts["core_paths"]) | set(decl_core))
        elif code == "depends-on-pr":
            details = [f"#{r['other']}" for r in f.relations if r["type"] == "depends-on"]
        elif code in VERBATIM_REASONS:
            details = list(f.risk_why.get(code, []))
        else:  # platform-specific: the labels of the language (localize)
            details = []
        out.append({"code": code, "details": details})
    return out


def _label(p: Platform | None, lang: str) -> str | None:
    return getattr(p, lang) if p is not None else None


def localize(r: Risks, lang: str, profile: Profile) -> Risks:
    """The risks of ``lang``: platform and feature labels, the findings' messages, the core
    rule's reason (``r`` is left unchanged)."""
    plat_labels = [getattr(p, lang) for p in r.platforms]
    return Risks(  # every field named (dataclasses.replace reads the fields' list each time)
        tags=[{"code": t["code"], "details": plat_labels}
              if t["code"] == "platform-specific" else t for t in r.tags],
        core_rule={**r.core_rule, "why": str(profile.core_rule.get(lang)
                                              or profile.core_rule.get("en") or "")},
        platforms=plat_labels,
        portable=_label(r.portable, lang),
        title_platforms=[getattr(p, lang) for p in r.title_platforms],
        features=[{**x, "label": profile.feature_label(x["name"], lang)} for x in r.features],
        builders=[{**b, "platforms": [_platform_label(profile, code, lang)
                                      for code in b["platforms"]]} for b in r.builders],
        findings=[{"rule": x["rule"], "file": x["file"], "class": x["class"],
                   "message": x["message_zh"] if lang == "zh" else x["message_en"],
                   "commit": x["commit"], "fixed_by": x.get("fixed_by")}
                  for x in r.findings],
        core_paths=r.core_paths,
        readings=r.readings,
    )


def _holders(f: PrFacts, builders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each changed class marked ``holder``: False for one the audit read as no class that
    holds the value at the PR's commit nor at its parent (no subclass of the profile's
    ``builder_bases``, and no root base itself: a dataclass with a field of the symbol's
    name), else True. Without the audit's reading (no state read) every class is taken as
    one."""
    states = f.facts.get("state_changes")
    read = states is not None and bool(f.profile.builder_bases)
    held = {(str(b.get("class")), str(b.get("file"))) for b in f.levels_now}
    # a builder at the parent only (removed by the PR) is in the state model's changes
    held |= {(str(s["class"]), str(s["file"])) for s in states or []
             if s.get("before_source") or s.get("after_source")}
    for b in builders:
        name = b["class_name"]
        b["holder"] = not read or (name, b["file"]) in held or "<locals>" in name \
            or name.rsplit(".", 1)[-1] in f.profile.builder_bases
    return builders


def _platform_label(profile: Profile, code: str, lang: str) -> str:
    return next((getattr(p, lang) for p in profile.platforms if p.code == code), code)


def _builders(
    scope: Scope, changes: list[dict[str, Any]], readings: dict[str, Any], profile: Profile,
    read_none: set[tuple[str, str]],
) -> list[dict[str, Any]]:
    """The changed builders, each once (class and file), with the effects of its changes;
    ``platforms`` are codes (``localize`` labels them). An effect's values are shown as the
    profile says (a bool, no level, as its spelling and value: ``Profile.value_text``)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for b in scope.builders:
        key = (b.class_name, b.file)
        if key not in out:
            out[key] = {"class_name": b.class_name, "file": b.file,
                        "platforms": list(b.platforms), "effects": []}
    # builders the audit read at the PR's commit and found reordering no batch (``read_none``:
    # a ``builder_levels`` row whose meets_rule is null)
    outside = {(c["class"], c["file"]) for c in readings["classes"]
               if c["state"] == "not-applicable"} | read_none
    for e in scope.effects:  # each to the builder of its file and class
        ch = next((c for c in changes if c["class"] == e.builder and c["file"] == e.file), None)
        item = {**vars(e), **{k: profile.value_text(ch[k], ch["attr"])
                              if ch and ch[k] is not None else None
                              for k in ("before", "after")}}
        if e.when is not None or e.basis in READ_FROM_STATE:
            # a conditional value read where it changed, or the effective levels at both
            # revisions: those levels
            item["before"], item["after"] = e.level_before, e.level_after
        if item["audit"] == "not-checked" and (e.builder, e.file) in outside:
            item["audit"] = "not-applicable"  # the audit read it: the rule does not apply
        for (cls, file), entry in out.items():
            if cls == e.builder and file == e.file and item not in entry["effects"]:
                entry["effects"].append(item)
                break
    return list(out.values())
