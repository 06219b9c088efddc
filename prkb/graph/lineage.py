"""PR-to-PR relations read from code: the symbol timeline and the line lineage.

- The **symbol timeline** of a class is every stored declaration change on it, oldest first,
  following the attribute across its spellings (the profile's ``symbol.family``; a rename
  keeps the chain). Each change points at the previous merged change on the same class and
  attribute: ``modifies-declaration-of`` (confidence 1.0).
- A change that **lowers** a level which the previous change raised (or added), made by a PR
  with a bugfix tag or fix words, within ``regression_window_days``: a
  ``fixes-regression-from`` candidate (0.6), with the levels as evidence.
- **Line lineage** (git collector, ``record["prkb"]["lineage"]``): for the lines a commit
  removed or changed, the commit that last changed them. Mapped to a PR through
  ``prs.merge_commit_sha``; gives ``follow-up-of`` (0.8), or ``reverts`` for a revert. Blame
  is evidence of lineage only: a ``fixes-regression-from`` candidate (0.6) needs blamed
  declaration lines whose level the earlier PR raised and this PR lowers, or the PR's own
  text naming the earlier PR as the culprit. Reformatted or renamed lines (the collector's
  ``kind``) give nothing. GitHub records carry no blame and get no lineage here.
- **Alternatives**: two PRs on the same class and attribute within ``alternative_window_days``,
  one closed unmerged, with similar titles or a test named by both: ``alternative-to`` (0.7).
  When the closed one is the older and the other merged or open, ``prkb.graph.build`` makes the
  newer one supersede it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import evidence as E
from ..dates import parse_time
from ..models import Relation
from ..profile import Profile
from ..store import Store
from .nodes import show_key
from .relations import RuleSet, default_rules, is_fix

FAMILY = "family"


def days_between(a: str, b: str) -> float | None:
    """Days between two stored ISO times (either order, zones honoured: a time without one
    is read as UTC); None when either is missing or unreadable."""
    return _days(parse_time(a), parse_time(b))


def _days(a: datetime | None, b: datetime | None) -> float | None:
    if a is None or b is None:
        return None
    return abs((b - a).total_seconds()) / 86400.0


@dataclass(frozen=True)
class DeclEvent:
    """One stored declaration change, with the facts of its PR."""

    key: str
    number: int | None
    ref: str
    title: str
    body: str
    state: str
    date: str
    order_date: str  # date, or for an undated PR the date of the closest lower-numbered one
    merge_commit_sha: str | None
    file: str
    class_name: str
    attr: str
    before: str | None
    after: str | None
    direction: str
    before_attr: str | None
    attr_key: str
    before_file: str | None = None

    @property
    def merged(self) -> bool:
        return self.state == "merged"

    def label(self) -> str:
        return f"#{self.number}" if self.number is not None else (self.merge_commit_sha or "")[:12]

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.number,
            "ref": self.ref,
            "title": self.title,
            "state": self.state,
            "date": self.date or None,
            "file": self.file,
            "class": self.class_name,
            "attr": self.attr,
            "before_attr": self.before_attr,
            "before_file": self.before_file,
            "before": self.before,
            "after": self.after,
            "direction": self.direction,
            "merge_commit_sha": self.merge_commit_sha,
        }


def attr_key(attr: str, profile: Profile) -> str:
    return FAMILY if attr in profile.family else attr


def declaration_events(
    store: Store, profile: Profile, class_name: str | None = None
) -> list[DeclEvent]:
    """Declaration changes (optionally of one class), oldest first.

    PRs without any date are placed by number among the dated ones.
    """
    rows = store.declaration_rows(class_name)
    dated = sorted((p.date, p.number or 0) for p, _ in rows if p.date and p.number is not None)
    events = []
    for p, c in rows:
        date = p.date
        order = date
        if not order and p.number is not None:
            order = max((d for d, n in dated if n < p.number), default="")
        events.append(
            DeclEvent(
                key=p.key,
                number=p.number,
                ref=p.ref,
                title=p.title or "",
                body=p.body or "",
                state=p.state,
                date=date,
                order_date=order,
                merge_commit_sha=p.merge_commit_sha,
                file=c.file,
                class_name=c.class_name,
                attr=c.attr,
                before=c.before,
                after=c.after,
                direction=c.direction,
                before_attr=c.before_attr,
                before_file=c.before_file,
                attr_key=attr_key(c.attr, profile),
            )
        )
    events.sort(key=lambda e: (e.order_date, e.number or 0, e.ref, e.file, e.attr))
    return events


def _chains(events: list[DeclEvent]) -> dict[tuple[str, str, str], list[DeclEvent]]:
    """The events of each declaration, oldest first: a builder is its file and class (a V0
    and a V1 class of one name are two chains); a class moved to another file (``moved``,
    from ``before_file``, or changed on its way with a renamed file) takes its chain along."""
    chains: dict[tuple[str, str, str], list[DeclEvent]] = {}
    for e in events:
        key = (e.file, e.class_name, e.attr_key)
        if e.before_file and e.before_file != e.file and key not in chains:
            old = chains.pop((e.before_file, e.class_name, e.attr_key), None)
            if old is not None:
                chains[key] = old
        chains.setdefault(key, []).append(e)
    return chains


def previous_setters(events: list[DeclEvent]) -> list[tuple[DeclEvent, DeclEvent]]:
    """(change, the previous merged change that *set* the same class and attribute's value, by
    another PR). A rename (new spelling or new level name, same value) or a move to another
    file modifies the declaration but sets nothing: the change after it points past it to the
    PR that set the value."""
    pairs = []
    for chain in _chains(events).values():
        last: DeclEvent | None = None
        for e in chain:
            if last is not None and last.key != e.key:
                pairs.append((e, last))
            if e.merged and e.direction not in ("renamed", "moved"):
                last = e
    return pairs


def timeline_relations(events: list[DeclEvent], rules: RuleSet | None = None) -> list[Relation]:
    rules = rules or default_rules()
    conf = rules.number("timeline_confidence", 1.0)
    out = []
    for e, prev in previous_setters(events):
        ev = E.make({
            "kind": "last-set", "class": e.class_name, "attr": e.attr,
            "before_attr": e.before_attr if e.before_attr and e.before_attr != e.attr else None,
            "before": e.before, "after": e.after, "direction": e.direction,
            "by": prev.label(), "by_before": prev.before, "by_after": prev.after,
        })
        out.append(Relation(e.key, prev.key, "modifies-declaration-of", ev, conf, "timeline"))
    return out


def regression_candidates(
    events: list[DeclEvent], profile: Profile, rules: RuleSet | None = None
) -> list[Relation]:
    """A fix that lowers a level the previous change on the class raised (recently)."""
    rules = rules or default_rules()
    conf = rules.number("regression_candidate_confidence", 0.6)
    window = rules.number("regression_window_days", 180)
    out = []
    for e, prev in previous_setters(events):
        if e.attr_key != FAMILY or not profile.has_levels:
            continue
        r_before, r_after = profile.level_rank(e.before), profile.level_rank(e.after)
        p_before = profile.level_rank(prev.before or profile.default_level)
        p_after = profile.level_rank(prev.after)
        if None in (r_before, r_after, p_after) or r_after >= r_before:  # type: ignore[operator]
            continue
        if prev.direction not in ("raised", "added") or p_before is None:
            continue
        if p_after <= p_before:  # type: ignore[operator]
            continue
        if profile.normalize_level(prev.after or "") != profile.normalize_level(e.before or ""):
            continue
        if not is_fix(e.title, e.body, profile, rules):
            continue
        days = days_between(prev.date, e.date)
        if days is not None and days > window:
            continue
        back = (profile.normalize_level(e.after or "")
                == profile.normalize_level(prev.before or ""))
        ev = E.make({
            "kind": "undoes-level", "pr": e.label(), "class": e.class_name, "before": e.before,
            "after": e.after,
            "back": back, "by": prev.label(), "by_direction": prev.direction,
            "by_before": prev.before, "by_after": prev.after,
            "days": round(days) if days is not None else None,
            "title": e.title if len(e.title) <= 200 else e.title[:199] + "\u2026",
        })
        out.append(Relation(e.key, prev.key, "fixes-regression-from", ev, conf, "timeline"))
    return out


# --- line lineage ------------------------------------------------------------------------------


def _resolve_sha(sha: str, index: dict[str, str]) -> str | None:
    sha = sha.lower()
    if sha in index:
        return index[sha]
    if len(sha) >= 7:
        hits = {k for s, k in index.items() if s.startswith(sha) or sha.startswith(s)}
        if len(hits) == 1:
            return hits.pop()
    return None


def _family_moves(store: Store, profile: Profile) -> dict[int, list[tuple[str, str, str]]]:
    """(class, file, direction) of every change of the symbol family, per PR id."""
    out: dict[int, list[tuple[str, str, str]]] = {}
    for pr_id, c in store.symbol_changes_by_pr():
        if c.attr in profile.family:
            out.setdefault(pr_id, []).append((c.class_name, c.file, c.direction))
    return out


# what a blamed commit did to a line (the git collector's ``kind``); only a semantic change
# links two PRs: a reformatted or renamed line says nothing about who set its meaning
LINEAGE_KINDS_KEPT = ("semantic",)


def lineage_relations(
    store: Store,
    profile: Profile,
    rules: RuleSet | None = None,
    culprits: dict[str, set[str]] | None = None,
) -> tuple[list[Relation], int]:
    """Relations from blamed lines; also the number of blamed commits no stored PR merged.

    A blamed line is evidence of lineage, not of a regression: it gives ``follow-up-of``
    (the later PR -> the PR that last changed the line), or ``reverts`` for a revert title.
    It gives a ``fixes-regression-from`` candidate only when

    - the blamed lines are declaration lines of the symbol family (the collector's
      ``"decl": true``), the earlier PR raised or added the family's value on a builder (a
      class in a file) and this PR lowers that builder's value, in the blamed file; or
    - the PR's own text names the earlier PR as the culprit (``culprits``: node key -> the
      node keys its text says it fixes a regression from).

    Entries whose ``kind`` is ``format`` or ``rename`` give nothing. An entry without
    ``decl``/``kind`` (records of older collectors) counts as a semantic, non-declaration line.
    """
    rules = rules or default_rules()
    culprits = culprits or {}
    index = store.merged_shas()
    moves = _family_moves(store, profile)
    ids = {key: pr_id for pr_id, key in store.pr_node_keys()}
    lineage_conf = rules.number("lineage_confidence", 0.8)
    regress_conf = rules.number("regression_candidate_confidence", 0.6)
    out: list[Relation] = []
    unmapped = 0
    for pr, rec in store.pr_records(containing='"lineage"'):
        entries = (rec.get("prkb") or {}).get("lineage") or []
        me = pr.key
        # (file, sha, lines, is a declaration line) per blamed PR
        per_target: dict[str, list[tuple[str, str, int, bool]]] = {}
        for ent in entries:
            if str(ent.get("kind") or "semantic") not in LINEAGE_KINDS_KEPT:
                continue
            sha = str(ent.get("commit") or "")
            target = _resolve_sha(sha, index) if sha else None
            if target is None:
                unmapped += 1
                continue
            if target == me:
                continue
            lines = int(ent.get("lines") or 0)
            per_target.setdefault(target, []).append(
                (str(ent.get("file") or ""), sha, lines, ent.get("decl") is True)
            )
        title = pr.title or ""
        # a lowering undoes a raise only among levels: of a number it means nothing here
        lowered = ({(c, f) for c, f, d in moves.get(pr.id, []) if d == "lowered"}
                   if profile.has_levels else set())
        named = culprits.get(me, set())
        for target, hits in sorted(per_target.items()):
            n = sum(h[2] for h in hits)
            files = sorted({h[0] for h in hits})
            shas = sorted({h[1][:12] for h in hits})
            blame = {"kind": "blame", "lines": n, "files": files[:5], "commits": shas[:5],
                     "by": show_key(target)}
            # the count covers every file and commit: say how many are not listed
            if len(files) > 5 or len(shas) > 5:
                blame["more"] = max(len(files) - 5, 0) + max(len(shas) - 5, 0)
            if profile.title_has("revert", title):
                out.append(Relation(me, target, "reverts",
                                    E.make(blame, {"kind": "revert-title", "pr": show_key(me)}),
                                    lineage_conf, "lineage"))
                continue
            # a builder is its file and class: the blamed PR raised this very builder
            raised = {(c, f) for c, f, d in moves.get(ids.get(target, -1), [])
                      if d in ("raised", "added")}
            decl_files = {h[0] for h in hits if h[3]}
            undone = sorted(c for c, f in lowered if (c, f) in raised and f in decl_files)
            if undone:
                cue = {"kind": "blamed-declaration", "classes": undone[:5], "pr": show_key(me),
                       "by": show_key(target)}
                out.append(Relation(me, target, "fixes-regression-from", E.make(blame, cue),
                                    regress_conf, "lineage"))
            elif target in named:
                cue = {"kind": "culprit-named", "pr": show_key(me), "culprits": [show_key(target)]}
                out.append(Relation(me, target, "fixes-regression-from", E.make(blame, cue),
                                    regress_conf, "lineage"))
            else:
                out.append(Relation(me, target, "follow-up-of", E.make(blame), lineage_conf,
                                    "lineage"))
    return out, unmapped


# --- alternatives --------------------------------------------------------------------------

_TAG = re.compile(r"\[[^\]]*\]")
_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
_TEST = re.compile(r"\btests/[\w/.-]+\.py(?:::[\w\[\]./-]+)?")


def title_words(title: str) -> set[str]:
    text = _TAG.sub(" ", title or "")
    text = re.sub(r"\(#\d+\)\s*$", "", text)
    return {w.lower() for w in _WORD.findall(text)}


def word_similarity(wa: set[str], wb: set[str]) -> float:
    """Jaccard similarity of two titles' words (:func:`title_words`); 0 if either is empty."""
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def tests_named(body: str, files: list[str], profile: Profile) -> set[str]:
    named = {m.group(0).split("::")[0] for m in _TEST.finditer(body or "")}
    return named | {f for f in files if profile.is_test_path(f)}


def code_alternatives(
    store: Store, profile: Profile, rules: RuleSet | None = None
) -> list[Relation]:
    rules = rules or default_rules()
    window = rules.number("alternative_window_days", 45)
    threshold = rules.number("alternative_title_similarity", 0.5)
    conf = rules.number("code_alternative_confidence", 0.7)
    # (class, attribute) touched per PR: its declaration changes, or for a PR whose files
    # were not collected, the known classes its text names together with the family
    touched: dict[int, set[tuple[str, str]]] = {}
    for pr_id, c in store.symbol_changes_by_pr():
        touched.setdefault(pr_id, set()).add((c.class_name, attr_key(c.attr, profile)))
    known = {c for s in touched.values() for c, _ in s}
    rows = {p.id: p for p in store.graph_prs()}
    files_of = store.file_paths()
    alts = "|".join(re.escape(c) for c in sorted(known))
    class_rx = re.compile(rf"\b({alts})\b") if known else None
    for pr_id, r in rows.items():
        if pr_id in touched or class_rx is None:
            continue
        text = f"{r.title}\n{r.body or ''}"
        if pr_id in files_of or not profile.mentions_family(text):
            continue
        names = set(class_rx.findall(text))
        if names:
            touched[pr_id] = {(c, FAMILY) for c in names}
    by_symbol: dict[tuple[str, str], list[int]] = {}
    for pr_id, syms in touched.items():
        for s in syms:
            by_symbol.setdefault(s, []).append(pr_id)
    # what a pair is judged on, computed once per PR
    when: dict[int, datetime | None] = {}
    words: dict[int, set[str]] = {}
    tests: dict[int, set[str]] = {}
    for pr_id in touched:
        r = rows[pr_id]
        when[pr_id] = parse_time(str(r.created_at or r.date))
        words[pr_id] = title_words(r.title)
        tests[pr_id] = tests_named(r.body or "", files_of.get(pr_id, []), profile)
    seen: set[tuple[str, str]] = set()
    out = []
    for (cls, attr), ids in sorted(by_symbol.items()):
        ids = sorted(set(ids))
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                ra, rb = rows[a], rows[b]
                if "closed" not in (ra.state, rb.state):
                    continue
                ka, kb = ra.key, rb.key
                if ka == kb:
                    continue
                days = _days(when[a], when[b])
                if days is None or days > window:
                    continue
                sim = word_similarity(words[a], words[b])
                common = tests[a] & tests[b]
                if sim < threshold and not common:
                    continue
                src, dst = sorted((ka, kb), key=_key_order)
                if (src, dst) in seen:
                    continue
                seen.add((src, dst))
                ev = E.make({
                    "kind": "same-change", "class": cls,
                    "attr": attr if attr != FAMILY else profile.display, "days": round(days),
                    "similarity": round(sim, 2) if sim >= threshold else None,
                    "test": sorted(common)[0] if common else None,
                })
                out.append(Relation(src, dst, "alternative-to", ev, conf, "code"))
    return out


def _key_order(key: str) -> tuple[int, str]:
    kind, _, rest = key.partition(":")
    if kind == "pr" and rest.isdigit():
        return (int(rest), "")
    return (1 << 62, key)
