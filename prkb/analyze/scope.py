"""Scope and impact of one PR as facts: platforms, features, builders, who gains and who pays.

Everything here is codes, names and levels; a template words them per language. The rules:

- **Platforms** (:class:`PlatformFact`): from :func:`prkb.analyze.risk.platform_split`; ``via``
  is ``code`` (changed source paths belong to the platform), ``portable`` (the changed code is
  the profile's portable code: it runs on every platform) or ``title`` (only a title tag names
  it: where a problem showed, not whose code changed).
- **Features** (:class:`FeatureFact`): the profile's ``[features]`` whose terms occur in the
  title, the body or a label, as words (no letter right before or after a term, so ``MTP`` is
  not found in ``SMTP``), with where each was found.
- **Builders** (:class:`BuilderFact`): each class whose declaration the PR changed (its symbol
  changes), with the file and the platforms of that file.
- **Effects** (:class:`Effect`), one or two per builder change, by direction:

  ====================  =========================================================
  raised                gains ``more-batches-captured``; pays ``correctness-risk``
  added, above default  the same, ``basis`` ``versus-default`` (the level it
                        replaces may be inherited: not known here)
  added, at default     neither, ``same-as-default``
  lowered               gains ``correctness-fix``; pays ``fewer-batches-captured``
  removed               unknown, ``falls-back-to-inherited``
  dynamic-*             depends, ``decided-at-run-time``
  renamed, moved        neither, ``no-value-change``
  changed (expression)  unknown, ``expression-changed``; but a conditional value whose
                        test gained or lost an ``or``/``and`` operand
                        (:mod:`prkb.analyze.conditions`) is read where it changed: a
                        ``condition-shift`` (neither side) naming ``when``/``unless`` and
                        the two levels there, then the effects of that raise or lowering,
                        each with the same ``when``/``unless``
  from or to a bool     unknown, ``bool-value`` (a bool spelling is no level)
  ====================  =========================================================

  ``party`` is ``spec-decode-users`` when the change crosses the profile's
  ``[audit] flag_levels`` boundary (one side needs the speculative-decoding threshold, the
  other not), else ``backend-users``. ``audit`` on a ``correctness-risk`` says what the
  consistency audit read for that builder: ``finding`` (a finding of the profile's rule on the
  class), ``ready`` (its threshold grows with speculative tokens), ``not-ready``, or
  ``not-checked``; None when the new level needs no threshold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..models import Finding, SymbolChange
from ..profile import Profile
from .conditions import condition_shift
from .risk import platform_split

SCAN_CHARS = 50_000  # of the body, for features

GAINS, PAYS, NEITHER, UNKNOWN, DEPENDS = "gains", "pays", "neither", "unknown", "depends"
SPEC_USERS, BACKEND_USERS = "spec-decode-users", "backend-users"


@dataclass(frozen=True)
class PlatformFact:
    code: str
    via: str  # code, portable, title


@dataclass(frozen=True)
class FeatureFact:
    name: str                 # the profile's feature name (a proper name: MTP, DeepSeek)
    where: tuple[str, ...]    # title, body, labels (in that order)


@dataclass(frozen=True)
class BuilderFact:
    class_name: str
    file: str
    attr: str
    before: str | None
    after: str | None
    direction: str
    platforms: tuple[str, ...]  # platform codes of the file's path


@dataclass(frozen=True)
class Effect:
    """Who is affected by one builder change, on which side, and why (codes)."""

    builder: str
    party: str            # spec-decode-users, backend-users
    side: str             # gains, pays, neither, unknown, depends
    reason: str
    basis: str = "declared"   # declared (both values known) or versus-default
    audit: str | None = None  # on correctness-risk: finding, ready, not-ready, not-checked
    file: str = ""  # the builder's file (a builder is its file and class)
    # a change of a conditional value read per condition: only where ``when`` holds and
    # ``unless`` does not (code texts), from ``level_before`` to ``level_after``
    when: str | None = None
    unless: str | None = None
    level_before: str | None = None
    level_after: str | None = None


@dataclass(frozen=True)
class Scope:
    platforms: tuple[PlatformFact, ...]
    features: tuple[FeatureFact, ...]
    builders: tuple[BuilderFact, ...]
    effects: tuple[Effect, ...]
    core_paths: tuple[str, ...]   # changed files on the profile's core paths (every backend)


def features_of(record: dict[str, Any], profile: Profile) -> tuple[FeatureFact, ...]:
    """The profile's features named in the title, body or labels, in profile order."""
    places = {
        "title": str(record.get("title") or ""),
        "body": str(record.get("body") or "")[:SCAN_CHARS],
        "labels": "\n".join(
            str(lab.get("name") if isinstance(lab, dict) else lab)
            for lab in record.get("labels") or []
        ),
    }
    out: list[FeatureFact] = []
    for name, terms in profile.features.items():
        if not terms:
            continue
        pattern = _terms_pattern(terms)
        where = tuple(k for k, text in places.items() if pattern.search(text))
        if where:
            out.append(FeatureFact(name, where))
    return tuple(out)


@lru_cache(maxsize=256)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """One search for any of ``terms`` as a word of its own (no letter right before or after
    it): a text matches when one of the terms so occurs in it. Cached: a profile's terms."""
    alternatives = "|".join(re.escape(t) for t in terms)
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])")


def platforms_of(record: dict[str, Any], profile: Profile) -> tuple[PlatformFact, ...]:
    paths = [str(f.get("filename")) for f in record.get("files") or [] if f.get("filename")]
    split = platform_split(paths, str(record.get("title") or ""), profile)
    out = [PlatformFact(p.code, "code") for p in split.code]
    if split.portable is not None:
        out.append(PlatformFact(split.portable.code, "portable"))
    out += [PlatformFact(p.code, "title") for p in split.title_only]
    return tuple(out)


def _crosses(change: SymbolChange, profile: Profile) -> bool:
    flag = {profile.normalize_level(x) for x in profile.audit.get("flag_levels", [])}
    before = profile.normalize_level(change.before) if change.before else None
    after = profile.normalize_level(change.after) if change.after else None
    if change.direction == "added":
        before = profile.default_level
    return (before in flag) != (after in flag)


def _audit_reading(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    spec_ready: dict[tuple[str, str], bool | None],
) -> str | None:
    flag = {profile.normalize_level(x) for x in profile.audit.get("flag_levels", [])}
    if not change.after or profile.normalize_level(change.after) not in flag:
        return None
    rule = profile.audit.get("rule")
    # the finding and the reading of this builder: its class in its file (a V0 and a V1
    # class of one name are two builders)
    if any(f.rule == rule and f.class_name == change.class_name
           and (not f.file or f.file == change.file) for f in findings):
        return "finding"
    ready = spec_ready.get((change.class_name, change.file))
    return "not-checked" if ready is None else "ready" if ready else "not-ready"


def effects_of(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    spec_ready: dict[tuple[str, str], bool | None],
) -> list[Effect]:
    """The effects of one declaration change (the table of the module's docstring), each
    with the change's file."""
    return [replace(e, file=change.file)
            for e in _effects(change, profile, findings, spec_ready)]


def _effects(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    spec_ready: dict[tuple[str, str], bool | None],
) -> list[Effect]:
    who = change.class_name
    party = SPEC_USERS if _crosses(change, profile) else BACKEND_USERS
    d = change.direction
    if d in ("renamed", "moved"):
        return [Effect(who, party, NEITHER, "no-value-change")]
    if d.startswith("dynamic"):
        return [Effect(who, party, DEPENDS, "decided-at-run-time")]
    if d == "removed":
        return [Effect(who, party, UNKNOWN, "falls-back-to-inherited")]
    if profile.is_bool_value(change.before) or profile.is_bool_value(change.after):
        # a bool spelling (``full_cudagraph_supported = True``) is no level: a change from or
        # to one has no direction the profile can read
        return [Effect(who, party, UNKNOWN, "bool-value")]
    rank_a = profile.level_rank(change.after)
    basis = "declared"
    if d == "added":
        if rank_a is None:
            return [Effect(who, party, UNKNOWN, "expression-changed", "versus-default")]
        if rank_a <= (profile.level_rank(profile.default_level) or 0):
            return [Effect(who, party, NEITHER, "same-as-default", "versus-default")]
        d, basis = "raised", "versus-default"
    if d == "raised":
        audit = _audit_reading(change, profile, findings, spec_ready)
        return [
            Effect(who, party, GAINS, "more-batches-captured", basis),
            Effect(who, party, PAYS, "correctness-risk", basis, audit),
        ]
    if d == "lowered":
        return [
            Effect(who, party, GAINS, "correctness-fix"),
            Effect(who, party, PAYS, "fewer-batches-captured"),
        ]
    shift = condition_shift(change.before, change.after, profile) if d == "changed" else None
    if shift is not None:
        rank_b, rank_a = profile.level_rank(shift.before), profile.level_rank(shift.after)
        if rank_b is not None and rank_a is not None and rank_a != rank_b:
            there = replace(change, before=shift.before, after=shift.after,
                            direction="raised" if rank_a > rank_b else "lowered")
            where = {"when": shift.holds, "unless": shift.not_holds,
                     "level_before": shift.before, "level_after": shift.after}
            read = Effect(who, SPEC_USERS if _crosses(there, profile) else BACKEND_USERS,
                          NEITHER, "condition-shift", **where)
            return [read, *(replace(e, **where)
                            for e in _effects(there, profile, findings, spec_ready))]
    return [Effect(who, party, UNKNOWN, "expression-changed")]


def scope_of(
    record: dict[str, Any],
    changes: list[SymbolChange],
    findings: list[Finding],
    profile: Profile,
    spec_ready: dict[tuple[str, str], bool | None] | None = None,
) -> Scope:
    """The scope of one PR. ``changes``: its symbol changes; ``findings``: the audit's findings
    for it; ``spec_ready``: (class, file) -> the audit's stored reading of whether its
    threshold grows with speculative tokens (``builder_levels.spec_ready`` at the PR's
    commit), None unread."""
    ready = spec_ready or {}
    builders = tuple(
        BuilderFact(
            c.class_name, c.file, c.attr, c.before, c.after, c.direction,
            tuple(p.code for p in profile.platforms_for([c.file], "")),
        )
        for c in changes
    )
    effects = tuple(e for c in changes for e in effects_of(c, profile, findings, ready))
    paths = [str(f.get("filename")) for f in record.get("files") or [] if f.get("filename")]
    return Scope(
        platforms=platforms_of(record, profile),
        features=features_of(record, profile),
        builders=builders,
        effects=effects,
        core_paths=tuple(p for p in paths if profile.is_core_path(p)),
    )
