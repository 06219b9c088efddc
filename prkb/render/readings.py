"""What the consistency audit read of the classes a PR raises to a level its rule is about.

The judgement comes from the audit's stored results only, never made again here: the PR's
findings of the profile's rule, and the ``builder_levels`` rows (one per class, with the
rule's verdict ``meets_rule`` as the store keeps it) that the git collector stored for the
PR's commit.
"""

from __future__ import annotations

from typing import Any

from ..profile import Profile
from ..store import Store

# the order in which readings of several classes combine into one for the PR
READING_ORDER = ("not-ready", "unchecked", "ready", "not-applicable")


def same_class(a: str | None, b: str | None) -> bool:
    """Two spellings of one class: equal, or equal in their last dotted component."""
    if not a or not b:
        return False
    return a == b or a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]


def rule_readings(
    store: Store, facts: dict[str, Any], changes: list[dict[str, Any]], profile: Profile,
) -> dict[str, Any]:
    """Whether the classes this PR raises to a level of the rule's ``flag_levels`` meet the
    audit rule, as the consistency audit judged it.

    Per class: a finding, or a reading whose verdict is false, is ``not-ready``; a true
    verdict is ``ready``; a reading with no verdict is ``not-applicable`` (the rule does not
    apply to that class); no reading at all is ``unchecked`` (a GitHub-only or curated
    record, or a collection without the audit). ``groups``: the classes per reading, in
    :data:`READING_ORDER`; ``state``: the first group's reading (None: no class raised). The
    lines of the patch that name related calls stay facts of their own; nothing is concluded
    here from them.
    """
    rule = str(profile.audit.get("rule") or "")
    raised = [c for c in changes
              if c["flag_level"] and (c["direction"] in ("raised", "added") or c["raises_to"])]
    sha = facts.get("merge_commit_sha")
    rows = store.builder_readings(facts["repo"], sha) if raised and sha else []

    def order(levels: set[str]) -> list[str]:
        return sorted(levels, key=lambda v: (profile.level_rank(v) or 0, v))

    classes: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for c in raised:
        key = (c["class"], c["file"])
        if key in seen:
            continue
        seen.add(key)
        state, source = _reading(c, rule, facts["findings"], rows)
        levels = order({x["raises_to"] or x["after"] for x in raised
                        if x["class"] == c["class"] and x["file"] == c["file"]})
        classes.append({"class": c["class"], "file": c["file"], "state": state,
                        "source": source, "levels": levels})
    groups = []
    for state in READING_ORDER:
        members = [x for x in classes if x["state"] == state]
        if members:
            groups.append({"state": state, "classes": sorted({x["class"] for x in members}),
                           "levels": order({lv for x in members for lv in x["levels"]})})
    return {
        "state": groups[0]["state"] if groups else None,
        "commit": sha,
        "checked": bool(rows),
        "classes": classes,
        "groups": groups,
    }


def _reading(
    c: dict[str, Any], rule: str, findings: list[dict[str, Any]], rows: list[dict[str, Any]],
) -> tuple[str, str | None]:
    """One raised class's reading and where it comes from (``finding``, ``reading``, None).
    A class is its file and class: the finding and the reading of this file's class."""
    finding = any(
        (not rule or f["rule"] == rule) and same_class(f["class"], c["class"])
        and (not f.get("file") or f["file"] == c["file"])
        for f in findings
    )
    reading = [r for r in rows if r["file"] == c["file"]
               and same_class(r["class_name"], c["class"])]
    reading = ([r for r in reading if r["class_name"] == c["class"]] or reading)
    if finding:
        return "not-ready", "finding"
    if not reading:
        return "unchecked", None
    if reading[0]["meets_rule"] is None:
        return "not-applicable", "reading"
    return ("ready" if reading[0]["meets_rule"] else "not-ready"), "reading"
