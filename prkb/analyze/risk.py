"""Risk tags, platforms, tests and core paths of one change, from its files and facts."""

from __future__ import annotations

from typing import Any

from ..glossary import risk_tag
from ..models import Analysis, Finding, RiskTag, SymbolChange
from ..profile import Profile


def is_declaration_core(change: SymbolChange, profile: Profile) -> bool:
    """The profile's stated core rule for declaration changes (see ``[core_rule]``)."""
    prefixes = profile.core_rule.get("declaration_paths", [])
    return any(change.file.startswith(p) for p in prefixes) and change.direction != "renamed"


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
    plats = profile.platforms_for(paths, record.get("title") or "")
    specific = [p for p in plats if p.code != "portable"]
    if specific and not core:
        src = [p for p in paths if profile.category(p) == "source"]
        only = all(any(pat in p for pl in specific for pat in pl.path_patterns) for p in src)
        if only or profile.title_has("platform", record.get("title") or "") or len(specific) == 1:
            why["platform-specific"] = [p.en for p in specific]
    dirs = {c.direction for c in changes}
    if "raised" in dirs or (
        "added" in dirs
        and any(
            c.direction == "added" and profile.level_rank(c.after) not in (None, 0) for c in changes
        )
    ):
        why["level-raised"] = [
            f"{c.class_name}: {c.before} -> {c.after}"
            for c in changes
            if c.direction in ("raised", "added")
        ]
    if "lowered" in dirs:
        why["level-lowered"] = [
            f"{c.class_name}: {c.before} -> {c.after}" for c in changes if c.direction == "lowered"
        ]
    if "removed" in dirs:
        why["declaration-removed"] = [c.class_name for c in changes if c.direction == "removed"]
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
