"""The code a report shows: the hunks of a stored patch that matter, or a labelled rebuild.

A hunk matters when one of its changed lines names the tracked symbol family, a
dynamic-support method, or one of the related calls and attributes of the profile's audit
rule (:func:`related_names`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..analyze.diff import PatchLine, iter_patch_lines
from ..analyze.rules import rule_inputs
from ..profile import Profile, per_profile
from .markdown import clean_text

MAX_HUNKS = 3
MAX_HUNK_LINES = 40
MAX_LINE_CHARS = 200


def _related(profile: Profile) -> tuple[list[str], re.Pattern[str] | None]:
    """The related-code names of the profile's rule and their regular expression (None
    without names), made once per profile (:func:`~prkb.profile.per_profile`): every report
    reads them a few times."""
    return per_profile(profile, _make_related)


def _make_related(profile: Profile) -> tuple[list[str], re.Pattern[str] | None]:
    inputs = rule_inputs(profile.rules)
    names = sorted(set(inputs.names(profile).related)) if inputs is not None else []
    alts = "|".join(re.escape(n) for n in names)
    return names, re.compile(rf"(?<![A-Za-z0-9_])(?:{alts})(?![A-Za-z0-9_])") if names else None


def related_names(profile: Profile) -> list[str]:
    """The calls and attributes of the profile's audit rule whose lines are related code
    (its module's ``INPUTS.names`` ``related``), sorted; none without one. A new list."""
    return list(_related(profile)[0])


def _related_regex(profile: Profile) -> re.Pattern[str] | None:
    return _related(profile)[1]


def split_hunks(patch: str) -> list[tuple[str, list[str]]]:
    hunks: list[tuple[str, list[str]]] = []
    for raw in clean_text(patch).split("\n"):
        if raw.startswith("@@"):
            hunks.append((raw, []))
        elif hunks:
            hunks[-1][1].append(raw)
    return hunks


def key_hunks(patch: str | None, profile: Profile) -> tuple[list[str], bool]:
    """The hunks that matter (capped), and whether anything was cut."""
    if not patch:
        return [], False
    rel = _related_regex(profile)
    out: list[str] = []
    cut = False
    for header, lines in split_hunks(patch):
        changed = [ln[1:] for ln in lines if ln[:1] in "+-"]
        if not any(
            profile.matches_line(t) or (rel is not None and rel.search(t)) for t in changed
        ):
            continue
        if len(out) >= MAX_HUNKS:
            cut = True
            break
        body = lines[:MAX_HUNK_LINES]
        cut = cut or len(lines) > MAX_HUNK_LINES
        shown = []
        for ln in body:
            if len(ln) > MAX_LINE_CHARS:
                ln, cut = ln[: MAX_LINE_CHARS - 1] + "…", True
            shown.append(ln)
        while shown and not shown[-1].strip():
            shown.pop()
        out.append("\n".join([header[:MAX_LINE_CHARS], *shown]))
    return out, cut


def related_calls(path: str, patch: str | None, profile: Profile) -> list[dict[str, Any]]:
    """Changed lines that name a related call or attribute, with their class if known."""
    rel = _related_regex(profile)
    if not patch or rel is None:
        return []
    out = []
    for pl in _patch_lines(patch):
        if pl.kind == " ":
            continue
        m = rel.search(pl.text)
        if m:
            out.append(
                {
                    "file": path,
                    "class": pl.cls,
                    "name": m.group(0),
                    "kind": "added" if pl.kind == "+" else "removed",
                    "line": pl.text.strip()[:MAX_LINE_CHARS],
                }
            )
    return out


def classes_touched(patch: str | None) -> list[str]:
    if not patch:
        return []
    return sorted({pl.cls for pl in _patch_lines(patch) if pl.kind != " " and pl.cls})


@lru_cache(maxsize=64)
def _patch_lines(patch: str) -> tuple[PatchLine, ...]:
    """The lines of one file's patch, parsed once for the related calls and the classes a
    report reads of it (the caller must not change them)."""
    return tuple(iter_patch_lines(clean_text(patch)))


def rebuilt(change: dict[str, Any], profile: Profile) -> str:
    """The declaration change as a diff, rebuilt from the recorded facts (not the patch)."""
    enum = profile.enum or "Level"

    def line(attr: str | None, value: str | None) -> str:
        if value is None or attr is None:
            return ""
        if attr in profile.methods or value == "overridden":
            # an overriding method: its returns with conditions, when they were read
            tail = "" if value == "overridden" else f"  # returns {value}"
            return f"    def {attr}(cls, ...): ...{tail}"
        shown = value if (" " in value or "." in value or value in ("True", "False")) else (
            f"{enum}.{value}"
        )
        return f"    {attr} = {shown}"  # no annotation: the record does not give one

    before_attr = change.get("before_attr") or change.get("attr")
    old = line(before_attr, change.get("before"))
    new = line(change.get("attr"), change.get("after"))
    rows = [f" class {change.get('class')}(...):"]
    if old:
        rows.append("-" + old)
    if new:
        rows.append("+" + new)
    return "\n".join(rows)
