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
                        (for the users the audit rule is about, whose builder the audit
                        reads as not meeting it: ``no-gain-not-ready`` instead of the gain)
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

  When the PR's state change is known (:class:`Prior`, the effective values at its parent and
  its commit, :mod:`prkb.analyze.state`), an added, removed, renamed or moved declaration, a
  bool one, or one whose builder is or was on a stale spelling is read from the effective
  values instead (:func:`_effects_from_state`): a new builder adds a row (``new-builder``)
  then the risk of its level; an unchanged effective value is ``same-effective``; else a
  raise or a lowering between the effective levels, ``basis`` ``inherited`` (the level the
  new declaration replaces, with the class and file it came from), ``now-inherits``,
  ``stale`` (a level lost because the builder is left on a spelling the code no longer reads:
  nobody gains), ``restored`` or ``state``. A builder whose declarations the PR did not
  change but whose effective value changed (through a base, or left stale) gets the same
  reading (direction ``inherited``; ``basis`` ``base-changed``, ``stale`` ...).

  ``party`` is ``rule-users`` (the users the profile's audit rule is about) when the change
  crosses the profile's ``[audit] flag_levels`` boundary (one side is a level the rule
  checks, the other not), else ``backend-users``. ``audit`` on a ``correctness-risk`` says what the
  consistency audit read for that builder: ``finding`` (a finding of the profile's rule on the
  class), ``ready`` (the class meets the rule: ``meets_rule``), ``not-ready``, or
  ``not-checked``; None when the new level is not one the rule checks.
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
RULE_USERS, BACKEND_USERS = "rule-users", "backend-users"


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
    party: str            # rule-users, backend-users
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
    # the class and file a compared level comes from (basis ``inherited`` or ``now-inherits``)
    from_class: str | None = None
    from_file: str | None = None
    stale_attr: str | None = None  # ``left-stale``: the spelling the code no longer reads


@dataclass(frozen=True)
class Prior:
    """What the code's state change (:mod:`prkb.analyze.state`) says of a builder's symbol:
    its effective value at the PR's parent and at its commit, with where each comes from.
    ``before_source`` None: the class was no builder at the parent (new)."""

    before: str | None
    before_source: str | None
    before_origin: str | None
    after: str | None
    after_source: str | None
    after_origin: str | None
    stale_attr: str | None = None  # after ``stale``: the spelling the code no longer reads


# a builder whose symbol the state change does not list: its effective value did not change
UNCHANGED = Prior(None, "unchanged", None, None, "unchanged", None)


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
    wanted = [(name, _terms_pattern(terms)) for name, terms in profile.features.items() if terms]
    if not wanted:
        return ()
    # where each term occurs in each text (a substring search, several times cheaper than a
    # regular expression's scan of a long body), then each feature's own pattern tried at
    # those places only: where it would match in a scan of its own
    terms = {t for ts in profile.features.values() for t in ts}
    starts = {k: _occurrences(text, terms) for k, text in places.items()}
    out: list[FeatureFact] = []
    for name, pattern in wanted:
        where = tuple(k for k, text in places.items()
                      if any(pattern.match(text, at) for at in starts[k]))
        if where:
            out.append(FeatureFact(name, where))
    return tuple(out)


@lru_cache(maxsize=256)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """One search for any of ``terms`` as a word of its own (no letter right before or after
    it): a text matches when one of the terms so occurs in it. Cached: a profile's terms."""
    alternatives = "|".join(re.escape(t) for t in terms)
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])")


def _occurrences(text: str, terms: set[str]) -> list[int]:
    """Every place in ``text`` where one of ``terms`` occurs (as a substring), in order."""
    found: set[int] = set()
    for term in terms:
        at = text.find(term)
        while at >= 0:
            found.add(at)
            at = text.find(term, at + 1)
    return sorted(found)


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
    verdicts: dict[tuple[str, str], bool | None],
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
    ready = verdicts.get((change.class_name, change.file))
    return "not-checked" if ready is None else "ready" if ready else "not-ready"


def effects_of(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    verdicts: dict[tuple[str, str], bool | None], prior: Prior | None = None,
) -> list[Effect]:
    """The effects of one declaration change (the table of the module's docstring), each
    with the change's file. ``prior``: what the code's state change says of this builder
    (None: not known), which replaces the guesses an added or removed declaration needs."""
    if prior is not None and (
        change.direction in ("added", "removed", "renamed", "moved")
        or "stale" in (prior.before_source, prior.after_source)
        or profile.is_bool_value(change.before) or profile.is_bool_value(change.after)
    ):
        read = _effects_from_state(change, profile, findings, verdicts, prior)
        if read is not None:
            return [replace(e, file=change.file) for e in read]
    return [replace(e, file=change.file)
            for e in _effects(change, profile, findings, verdicts)]


def _inherited_name(source: str | None) -> str | None:
    return source.split(":", 1)[1] if source and source.startswith("inherited:") else None


def _effects_from_state(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    verdicts: dict[tuple[str, str], bool | None], prior: Prior,
) -> list[Effect] | None:
    """A declaration change (or, direction ``inherited``, a builder the PR did not change)
    read against the builder's effective values at both revisions:

    - a new builder (no builder of that class and file at the parent) adds a row and takes
      nothing from any other (``new-builder``; ``new-holder`` when the class sets the value
      itself and the profile has no builder bases, whose holders are the classes that set
      it: the class may have existed without setting it), then the risk of the level it
      claims;
    - a builder gone at the PR's commit (the class, or its file, was removed): what it
      declared applies to no class (``class-removed``, ``level_before`` its value);
    - left on a spelling the code no longer reads: its users pay for the drop (``left-stale``);
    - an effective value that did not change (the class declares what it inherited, or
      inherits what it declared): nobody gains or pays (``same-effective``);
    - otherwise a raise or a lowering between the two effective levels, ``basis``
      ``inherited`` (an added declaration replaces an inherited level), ``now-inherits`` (a
      removed one gives way to an inherited level), ``base-changed`` (through a base), with
      the class it comes from, or ``restored`` / ``state``.

    None when a side is no plain level (an expression, a run-time decision) and the
    declaration change's own reading says more; a bool side is ``bool-value``."""
    who = change.class_name
    if prior is UNCHANGED:
        if change.direction in ("renamed", "moved"):
            return None  # what a rename or a move says already: nothing changed
        return [Effect(who, BACKEND_USERS, NEITHER, "same-effective")]
    if prior.after_source is None and prior.before_source is not None:
        # the class itself is gone at the PR's commit: what it declared applies to no class
        return [Effect(who, BACKEND_USERS, UNKNOWN, "class-removed", "class-removed",
                       level_before=prior.before)]
    if change.direction in ("added", "inherited") and prior.before_source is None:
        # the risk of the level it claims, as for any declaration of a new value
        level = prior.after if profile.level_rank(prior.after) is not None else change.after
        claimed = replace(change, before=None, after=level, direction="added")
        risk = [e for e in _effects(claimed, profile, findings, verdicts)
                if e.reason == "correctness-risk"]
        party = risk[0].party if risk else BACKEND_USERS
        # with builder bases, no builder of that class and file at the parent: a new class
        # below them; without, the class did not set the value there (it may have existed)
        own = str(prior.after_source or "") in ("declared", "init")
        reason = "new-holder" if own and not profile.builder_bases else "new-builder"
        return [Effect(who, party, NEITHER, reason, "new-builder",
                       level_after=prior.after), *risk]
    origin: tuple[str | None, str | None] = (None, None)
    if prior.after_source == "stale" and prior.before_source is not None:
        # left on a spelling the code no longer reads: a level lost by accident, no fix
        return [Effect(who, BACKEND_USERS, PAYS, "left-stale", "stale", None, "", None, None,
                       prior.before, prior.after, stale_attr=prior.stale_attr)]
    if prior.before_source == "stale":  # back on the spelling the code reads
        basis = "restored"
    elif change.direction == "inherited":  # a class the PR did not change: through a base
        basis = "base-changed"
        origin = (_inherited_name(prior.after_source) or _inherited_name(prior.before_source),
                  prior.after_origin or prior.before_origin)
    elif change.direction == "added":
        basis, origin = "inherited", (_inherited_name(prior.before_source), prior.before_origin)
    elif change.direction == "removed":
        basis, origin = "now-inherits", (_inherited_name(prior.after_source), prior.after_origin)
    else:
        basis = "state"
    if not profile.has_levels:  # no level: the profile gives the change no meaning
        return [Effect(who, BACKEND_USERS, UNKNOWN, "kind-no-effect", basis, None, "", None,
                       None, prior.before, prior.after, origin[0], origin[1])]
    if profile.is_bool_value(prior.before) or profile.is_bool_value(prior.after):
        return [Effect(who, BACKEND_USERS, UNKNOWN, "bool-value", basis, None, "", None, None,
                       prior.before, prior.after, origin[0], origin[1])]
    rank_b, rank_a = profile.level_rank(prior.before), profile.level_rank(prior.after)
    if rank_b is None or rank_a is None or prior.before is None or prior.after is None:
        if change.direction != "inherited":
            return None  # the declaration change's own reading says it
        reason = "decided-at-run-time" if str(prior.after or "").startswith("dynamic") \
            else "expression-changed"
        return [Effect(who, BACKEND_USERS, DEPENDS if reason.startswith("decided") else UNKNOWN,
                       reason, basis, None, "", None, None, prior.before, prior.after,
                       origin[0], origin[1])]
    if rank_a == rank_b:
        return [Effect(who, BACKEND_USERS, NEITHER, "same-effective")]
    there = replace(change, before=prior.before, after=prior.after,
                    direction="raised" if rank_a > rank_b else "lowered")
    read = _effects(there, profile, findings, verdicts)
    return [replace(e, basis=basis, level_before=prior.before, level_after=prior.after,
                    from_class=origin[0], from_file=origin[1]) for e in read]


def _effects(
    change: SymbolChange, profile: Profile, findings: list[Finding],
    verdicts: dict[tuple[str, str], bool | None],
) -> list[Effect]:
    who = change.class_name
    party = RULE_USERS if _crosses(change, profile) else BACKEND_USERS
    d = change.direction
    if d in ("renamed", "moved"):
        return [Effect(who, party, NEITHER, "no-value-change")]
    if d.startswith("dynamic"):
        return [Effect(who, party, DEPENDS, "decided-at-run-time")]
    if not profile.has_levels:
        # an int, a bool, a string: the profile gives its direction no meaning for anyone
        return [Effect(who, party, UNKNOWN, "kind-no-effect")]
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
        audit = _audit_reading(change, profile, findings, verdicts)
        if party == RULE_USERS and audit in ("finding", "not-ready"):
            # the rule's users gain only where the class meets the rule: here the audit reads
            # that it does not, so they pay instead
            return [
                Effect(who, party, NEITHER, "no-gain-not-ready", basis),
                Effect(who, party, PAYS, "correctness-risk", basis, audit),
            ]
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
            read = Effect(who, RULE_USERS if _crosses(there, profile) else BACKEND_USERS,
                          NEITHER, "condition-shift", **where)
            return [read, *(replace(e, **where)
                            for e in _effects(there, profile, findings, verdicts))]
    return [Effect(who, party, UNKNOWN, "expression-changed")]


def priors(
    state_changes: list[dict[str, Any]] | None, changes: list[SymbolChange], symbol: str,
    builders: set[tuple[str, str]],
) -> dict[tuple[str, str], Prior]:
    """(class, file) -> :class:`Prior` for each changed builder, from the PR's stored state
    changes of ``symbol`` (:data:`UNCHANGED` for a builder at the PR's commit, one of
    ``builders``, that they do not list); empty when the state change was not read. A
    changed class that is no builder (the root base itself) gets no entry: unknown."""
    if state_changes is None:
        return {}
    out: dict[tuple[str, str], Prior] = {}
    for c in state_changes:
        if c.get("value") == symbol:
            stale = c.get("after_stale") or []
            out[(str(c["class"]), str(c["file"]))] = Prior(
                c.get("before"), c.get("before_source"), c.get("before_origin_file"),
                c.get("after"), c.get("after_source"), c.get("after_origin_file"),
                str(stale[0]).rsplit(".", 1)[-1] if stale else None)
    for ch in changes:
        if (ch.class_name, ch.file) in builders:
            out.setdefault((ch.class_name, ch.file), UNCHANGED)
    return out


def scope_of(
    record: dict[str, Any],
    changes: list[SymbolChange],
    findings: list[Finding],
    profile: Profile,
    verdicts: dict[tuple[str, str], bool | None] | None = None,
    prior: dict[tuple[str, str], Prior] | None = None,
) -> Scope:
    """The scope of one PR. ``changes``: its symbol changes; ``findings``: the audit's findings
    for it; ``verdicts``: (class, file) -> the audit rule's stored reading of whether the
    class meets it (``builder_levels.meets_rule`` at the PR's commit), None unread;
    ``prior``: what the code's state change says of each changed
    builder (:func:`priors`), empty when it was not read."""
    ready = verdicts or {}
    builders = tuple(
        BuilderFact(
            c.class_name, c.file, c.attr, c.before, c.after, c.direction,
            tuple(p.code for p in profile.platforms_for([c.file], "")),
        )
        for c in changes
    )
    known = prior or {}
    # builders the PR changed no declaration of, whose effective value changed all the same
    # (they inherit what it changed, or are left on a spelling it stopped reading)
    changed = {(c.class_name, c.file) for c in changes}
    through = [SymbolChange(file, cls, profile.display, p.before, p.after, "inherited")
               for (cls, file), p in sorted(known.items(), key=lambda kv: (kv[0][1], kv[0][0]))
               if (cls, file) not in changed and p is not UNCHANGED]
    effects = tuple(e for c in changes for e in effects_of(
        c, profile, findings, ready, known.get((c.class_name, c.file))))
    effects += tuple(replace(e, file=c.file) for c in through for e in (
        _effects_from_state(c, profile, findings, ready, known[(c.class_name, c.file)]) or []))
    builders += tuple(
        BuilderFact(c.class_name, c.file, c.attr, c.before, c.after, c.direction,
                    tuple(p.code for p in profile.platforms_for([c.file], "")))
        for c in through)
    paths = [str(f.get("filename")) for f in record.get("files") or [] if f.get("filename")]
    return Scope(
        platforms=platforms_of(record, profile),
        features=features_of(record, profile),
        builders=builders,
        effects=effects,
        core_paths=tuple(p for p in paths if profile.is_core_path(p)),
    )
