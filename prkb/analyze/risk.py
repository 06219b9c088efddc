"""Risk tags, platforms, tests and core paths of one change, from its files and facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..glossary import risk_tag
from ..models import NOT_DECLARED, Analysis, Finding, RiskTag, SymbolChange
from ..profile import Platform, Profile
from .state import after_sources

PORTABLE = "portable"  # the profile platform code of code that runs on every platform


def is_declaration_core(change: SymbolChange, profile: Profile) -> bool:
    """The profile's stated core rule for declaration changes (see ``[core_rule]``)."""
    prefixes = profile.core_rule.get("declaration_paths", [])
    return any(change.file.startswith(p) for p in prefixes) and change.sets_value


@dataclass(frozen=True)
class PlatformSplit:
    """The platforms of one change, by where they were recognised."""

    code: list[Platform]        # specific platforms the changed source paths belong to
    portable: Platform | None   # the profile's portable platform, when source paths match it
    title_only: list[Platform]  # specific platforms only the title's tags name


def platform_split(paths: list[str], title: str, profile: Profile) -> PlatformSplit:
    """Which platforms the changed code is specific to, apart from portable code (which runs
    on every platform: not a restriction) and from platforms that only the title names (a
    ``[ROCm]`` tag says where a problem showed, not that the code is ROCm's). Found once per
    profile for the same paths and title (a report asks three times: its tags, its scope and
    its risks)."""
    return profile.remembered("split", (title, tuple(paths)),
                              lambda: _platform_split(paths, title, profile))


def _platform_split(paths: list[str], title: str, profile: Profile) -> PlatformSplit:
    src = [p for p in paths if profile.category(p) == "source"]
    from_code = profile.platforms_for(src, "")
    code = [p for p in from_code if p.code != PORTABLE]
    portable = next((p for p in from_code if p.code == PORTABLE), None)
    title_only = [
        p for p in profile.platforms_for([], title)
        if p.code != PORTABLE and p not in code
    ]
    return PlatformSplit(code, portable, title_only)


def risk_tags_for(
    record: dict[str, Any],
    changes: list[SymbolChange],
    findings: list[Finding],
    profile: Profile,
    *,
    has_dependency: bool = False,
) -> tuple[list[RiskTag], dict[str, list[str]]]:
    """The tags and, per tag, why it was given (for reports)."""
    paths = [f["filename"] for f in record.get("files", [])]
    tests = [p for p in paths if profile.is_test_path(p)]
    why: dict[str, list[str]] = {}

    core = [p for p in paths if profile.is_core_path(p)]
    if core:
        why["core-path"] = [f"touches {p}" for p in core]
    decl_core = sorted({c.file for c in changes if is_declaration_core(c, profile)})
    if decl_core:
        why.setdefault("core-path", []).extend(
            f"declaration change in {p} (core rule)" for p in decl_core
        )
    if changes and not tests:
        why["missing-tests"] = ["declaration changed, no file under tests/ changed"]
    # platform-specific: every changed source file belongs to a platform (its paths); portable
    # code, shared code beside a platform's file and a platform named only by the title's tags
    # do not make a change specific
    specific = platform_split(paths, record.get("title") or "", profile).code
    if specific and not core:
        src = [p for p in paths if profile.category(p) == "source"]
        if all(any(pat in p for pl in specific for pat in pl.path_patterns) for p in src):
            why["platform-specific"] = [p.en for p in specific]
    dirs = {c.direction for c in changes}
    # a first declaration raises the level only above the profile's default (what a builder
    # without a declaration has); declaring the default itself changes nothing
    default = profile.level_rank(profile.default_level) or 0
    raising = [
        c for c in changes
        if c.direction == "raised"
        or (c.direction == "added" and (profile.level_rank(c.after) or -1) > default)
    ]
    def moved(c: SymbolChange) -> str:  # a bool as its spelling and value: it is no level
        before, after = (NOT_DECLARED if v is None else profile.value_text(v, c.attr)
                         for v in (c.before, c.after))
        return f"{c.class_name}: {before} -> {after}"

    if not profile.has_levels:  # a raise or a lowering means something only for levels
        raising = []
        dirs -= {"raised", "lowered"}
    if raising:
        why["level-raised"] = [moved(c) for c in raising]
    if "lowered" in dirs:
        why["level-lowered"] = [moved(c) for c in changes if c.direction == "lowered"]
    # the tag says the value falls back to an inherited one: not for a declaration removed with
    # its class (the state model reads no class there at the PR's commit) or one that leaves
    # no value in any base (``absent``)
    gone = {k for k, v in after_sources((record.get("prkb") or {}).get("state_changes"),
                                        profile.display).items() if v in (None, "absent")}
    removed = [c.class_name for c in changes
               if c.direction == "removed" and (c.class_name, c.file) not in gone]
    if removed:
        why["declaration-removed"] = removed
    dyn = [
        c for c in changes
        if c.direction in ("dynamic-added", "dynamic-changed") or _is_conditional(c.after)
    ]
    if dyn:
        why["dynamic-support"] = [c.class_name for c in dyn]
    if findings:
        why["audit-finding"] = [f"{f.rule}: {f.class_name}" for f in findings]
    if any(f.rule == "patch-unavailable" for f in findings):
        why["patch-unavailable"] = [f.file for f in findings if f.rule == "patch-unavailable"]
        why["audit-finding"] = [
            f"{f.rule}: {f.class_name}" for f in findings if f.rule != "patch-unavailable"
        ]
        if not why["audit-finding"]:
            del why["audit-finding"]
    if profile.title_has("revert", record.get("title") or ""):
        why["revert"] = ["title says revert"]
    if has_dependency:
        why["depends-on-pr"] = ["a depends-on relation"]
    order = [
        "core-path",
        "missing-tests",
        "platform-specific",
        "level-raised",
        "level-lowered",
        "declaration-removed",
        "dynamic-support",
        "depends-on-pr",
        "audit-finding",
        "patch-unavailable",
        "revert",
    ]
    tags = [risk_tag(code) for code in order if code in why]
    return tags, why


def _is_conditional(value: str | None) -> bool:
    return bool(value) and " if " in (value or "")


def analyse(
    record: dict[str, Any],
    changes: list[SymbolChange],
    findings: list[Finding],
    profile: Profile,
    *,
    has_dependency: bool = False,
) -> Analysis:
    paths = [f["filename"] for f in record.get("files", [])]
    tags, _ = risk_tags_for(record, changes, findings, profile, has_dependency=has_dependency)
    return Analysis(
        symbol_changes=changes,
        tests_touched=[p for p in paths if profile.is_test_path(p)],
        platforms=[p.code for p in profile.platforms_for(paths, record.get("title") or "")],
        core_paths=[p for p in paths if profile.is_core_path(p)],
        risk_tags=tags,
        findings=findings,
    )
