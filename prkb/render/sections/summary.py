"""The executive summary: the classes changed and the recommended action (a code)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...profile import Profile
from ..prfacts import PrFacts


@dataclass(frozen=True)
class Summary:
    classes: list[str]
    action: str  # the recommended action (a code: templates word it)
    # the consistency audit's reading of the classes raised to a level its rule is about
    # (rule_readings ``state``; None: no such class)
    reading: str | None
    # no declaration changed, but the value in force did: the state model's rows of the
    # profile's value (state_view.state_row), else empty
    state_only: list[dict[str, Any]]


def build(f: PrFacts) -> Summary:
    state_only = [] if f.changes else [
        r for r in f.state["changes"] if r["value"] == f.profile.display]
    action = recommend(f.changes, f.facts["findings"], "missing-tests" in f.risk_codes,
                       f.readings["state"], f.flag_levels, f.profile)
    return Summary(
        classes=f.classes,
        action="state-only" if action == "no-change" and state_only else action,
        reading=f.readings["state"],
        state_only=state_only,
    )


def recommend(
    changes: list[dict[str, Any]], findings: list[Any], missing_tests: bool,
    reading: str | None, flag_levels: frozenset[str], profile: Profile,
) -> str:
    """The recommended-action code (templates word it). ``reading``: the consistency
    audit's reading of the raised classes (:func:`prkb.render.readings.rule_readings`). A
    first declaration counts as a raise only above the profile's default level (as in
    ``analyze/scope.py``)."""
    dirs = {c["direction"] for c in changes}
    if findings:
        return "resolve-findings"
    if not profile.has_levels:  # no level: a raise or a lowering is no fix nor speed-up
        return "other" if changes else "no-change"
    if "lowered" in dirs:
        return "lowered-add-test" if missing_tests else "lowered"
    default = profile.level_rank(profile.default_level) or 0

    def raises(c: dict[str, Any]) -> bool:
        if c["direction"] == "raised" or c.get("raises_to"):  # (a condition shift: there)
            return True
        rank = profile.level_rank(c["after"]) if c["direction"] == "added" else None
        return rank is not None and rank > default

    raised = [c for c in changes if raises(c)]
    if raised:
        if any((c.get("raises_to") or c["after"]) in flag_levels for c in raised):
            if reading == "not-ready":
                return "raised-check"
            if reading == "unchecked":
                return "raised-unchecked"
            if reading == "ready":
                return "raised-consistent"
        return "raised-add-test" if missing_tests else "raised"
    if dirs & {"dynamic-added", "dynamic-removed", "dynamic-changed"}:
        return "dynamic"
    if "removed" in dirs:
        return "removed"
    if not changes:
        return "no-change"
    return "other"
