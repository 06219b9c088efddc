"""Deriving the relation graph and storing it: every cue, resolved, written in one transaction.

``build_relations(store, profile)`` is the one writer of the ``relations`` table: it reads the
texts (``prkb.graph.relations``), the symbol timeline, line lineage and alternatives
(``prkb.graph.lineage``) and curated ``prkb.relations`` of every stored record, resolves
conflicts, and replaces all relations and the nodes they need in one transaction. Running it
twice on the same knowledge base changes nothing.

Before conflicts are resolved, three passes set the type the facts support:
``text_names_the_culprit`` (a PR's own text naming the culprit outranks blame and the
timeline: their ``fixes-regression-from`` to another PR becomes ``follow-up-of``),
``closed_fixes`` (a PR closed unmerged fixes nothing: ``alternative-to`` the merged fix of
the same culprit, else ``attempts-fix-of``) and ``replacements`` (of two alternatives, a
merged or open PR newer than a closed unmerged one ``supersedes`` it). Each appends its
reason to the evidence (an item of its own kind, see ``prkb.evidence``).

Conflicts: per unordered pair of nodes the strongest type wins (``[relations].priority`` in
``data/relations.toml``, then confidence); edges of the winning type are kept in every
direction they were found (``alternative-to`` is symmetric and stored once, the lower PR
number as source); when several cues give the same edge, the highest confidence is kept and
the evidence items of up to three distinct cues, best first (``prkb.evidence.merge``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import evidence as E
from ..models import Node, Relation
from ..profile import Profile
from ..store import Store
from .lineage import (
    code_alternatives,
    declaration_events,
    lineage_relations,
    regression_candidates,
    timeline_relations,
)
from .nodes import key_number, key_order, show_key
from .relations import RELATION_TYPES, Reference, RuleSet, default_rules, relations_of_record
from .stale import stale_relations


@dataclass
class _Known:
    pr_keys: set[str]
    issue_keys: set[str]
    sha_index: dict[str, str]

    def resolve(self, ref: Reference) -> str:
        if ref.commit:
            sha = ref.commit.lower()
            hits = {k for s, k in self.sha_index.items() if s.startswith(sha)}
            return hits.pop() if len(hits) == 1 else f"commit:{sha}"
        if ref.repo:
            return ref.key
        pr, issue = f"pr:{ref.number}", f"issue:{ref.number}"
        if pr in self.pr_keys:
            return pr
        if ref.issue_hint or issue in self.issue_keys:
            return issue
        return pr


def _known(store: Store) -> _Known:
    pr_keys = {f"pr:{p.number}" for p in store.graph_prs() if p.number is not None}
    return _Known(pr_keys, store.issue_keys(), store.merged_shas())


def text_relations(store: Store, profile: Profile, rules: RuleSet | None = None) -> list[Relation]:
    """Relations from the texts of every stored record, targets resolved to node keys."""
    rules = rules or default_rules()
    known = _known(store)
    out: list[Relation] = []
    for pr, rec in store.pr_records():
        me = pr.key
        whose = f"#{pr.number}" if pr.number is not None else me[7:19]
        for tr in relations_of_record(rec, profile, rules):
            other = known.resolve(tr.ref)
            if other == me:
                continue
            rtype, conf = tr.type, tr.confidence
            if other.startswith("issue:") and rtype not in rules.issue_types:
                rtype = "mentions"
            src, dst = (me, other) if tr.direction == "out" else (other, me)
            quote = {"kind": "quote", "pr": whose, "where": tr.where, "path": tr.path,
                     "text": tr.quote}
            if tr.older_type and key_number(src) < key_number(dst):
                ev = E.make(quote, {"kind": "older", "older": show_key(src),
                                    "newer": show_key(dst)})
                rtype = tr.older_type
            else:
                ev = E.make(quote)
            out.append(Relation(src, dst, rtype, ev, conf, "text"))
        out.extend(_curated(rec, me, known))
    return out


def _curated(rec: dict[str, Any], me: str, known: _Known) -> list[Relation]:
    """Relations a record states itself (``prkb.relations``): type, target, direction, ..."""
    out = []
    for item in (rec.get("prkb") or {}).get("relations") or []:
        rtype = item.get("type")
        target = item.get("target", item.get("other"))
        if rtype not in RELATION_TYPES or target in (None, ""):
            continue
        if isinstance(target, int) or str(target).lstrip("#").isdigit():
            other = known.resolve(Reference(int(str(target).lstrip("#")), None, False))
        else:
            other = str(target)
        if other == me:
            continue
        src, dst = (other, me) if item.get("direction") == "in" else (me, other)
        conf = float(item.get("confidence", 1.0))
        stated = str(item.get("evidence") or "")[:300]
        ev = E.make({"kind": "record", "text": stated}) if stated else E.make()
        out.append(Relation(src, dst, str(rtype), ev, max(0.0, min(conf, 1.0)), "curated"))
    return out


def text_culprits(relations: Iterable[Relation]) -> dict[str, set[str]]:
    """Per PR, the PRs its own text (or its record) says it fixes a regression from."""
    out: dict[str, set[str]] = {}
    for r in relations:
        if (r.origin in ("text", "curated") and r.type == "fixes-regression-from"
                and r.target.startswith("pr:")):
            out.setdefault(r.source, set()).add(r.target)
    return out


def text_names_the_culprit(
    relations: Iterable[Relation], culprits: dict[str, set[str]]
) -> list[Relation]:
    """A PR's own text naming the culprit outranks blame and the timeline: their
    ``fixes-regression-from`` to any other PR becomes ``follow-up-of`` (still inferred)."""
    out = []
    for r in relations:
        named = culprits.get(r.source)
        if (named and r.type == "fixes-regression-from" and r.origin in ("lineage", "timeline")
                and r.target not in named):
            names = [show_key(k) for k in sorted(named, key=key_order)]
            r = Relation(r.source, r.target, "follow-up-of",
                         E.add(r.evidence, {"kind": "culprit-named",
                                                    "pr": show_key(r.source), "culprits": names}),
                         r.confidence, r.origin)
        out.append(r)
    return out


def closed_fixes(relations: list[Relation], states: dict[str, str]) -> list[Relation]:
    """A PR closed unmerged fixes nothing: its ``fixes-regression-from X`` becomes
    ``alternative-to`` each merged fix of X, or ``attempts-fix-of X`` when none is known."""
    merged_fixes: dict[str, set[str]] = {}
    for r in relations:
        if r.type == "fixes-regression-from" and states.get(r.source) == "merged":
            merged_fixes.setdefault(r.target, set()).add(r.source)
    out = []
    for r in relations:
        if r.type != "fixes-regression-from" or states.get(r.source) != "closed":
            out.append(r)
            continue
        fixes = sorted(merged_fixes.get(r.target, set()) - {r.source}, key=key_order)
        for m in fixes:
            out.append(Relation(
                r.source, m, "alternative-to",
                E.add(r.evidence, {"kind": "closed-unmerged", "pr": show_key(r.source),
                                   "fix": show_key(m), "of": show_key(r.target)}),
                r.confidence, r.origin,
            ))
        if not fixes:
            out.append(Relation(r.source, r.target, "attempts-fix-of",
                                E.add(r.evidence, {"kind": "closed-unmerged",
                                                   "pr": show_key(r.source)}),
                                r.confidence, r.origin))
    return out


def replacements(relations: list[Relation], prs: dict[str, tuple[str, str]]) -> list[Relation]:
    """Two alternatives where one is closed unmerged and older (a lower PR number) than the
    other, which is merged or open: the newer one ``supersedes`` it. Alternatives where
    neither is known to replace the other stay ``alternative-to``."""
    out = []
    for r in relations:
        if r.type == "alternative-to":
            for old, new in ((r.source, r.target), (r.target, r.source)):
                s_old, s_new = prs.get(old), prs.get(new)
                if s_old is None or s_new is None:
                    continue
                if s_old[0] == "closed" and s_new[0] in ("merged", "open") and _older(
                        old, new, s_old[1], s_new[1]):
                    r = Relation(new, old, "supersedes",
                                 E.add(r.evidence, {"kind": "superseded", "old": show_key(old),
                                                    "new": show_key(new), "state": s_new[0]}),
                                 r.confidence, r.origin)
                    break
        out.append(r)
    return out


def _older(a: str, b: str, created_a: str, created_b: str) -> bool:
    """``a`` was opened before ``b``: by PR number, else by creation time (both known)."""
    na, nb = key_number(a), key_number(b)
    if na == na and nb == nb:  # both PR numbers (not NaN)
        return na < nb
    return bool(created_a and created_b and created_a < created_b)


def resolve(relations: Iterable[Relation], rules: RuleSet | None = None) -> list[Relation]:
    """One winning type per pair of nodes; merged evidence per edge; sorted."""
    rules = rules or default_rules()
    by_pair: dict[frozenset[str], list[Relation]] = {}
    for r in relations:
        if r.source == r.target:
            continue
        if r.type in rules.symmetric and key_order(r.target) < key_order(r.source):
            r = Relation(r.target, r.source, r.type, r.evidence, r.confidence, r.origin)
        by_pair.setdefault(frozenset((r.source, r.target)), []).append(r)
    out = []
    for rels in by_pair.values():
        best_type = max(rels, key=lambda r: (rules.rank(r.type), r.confidence)).type
        edges: dict[tuple[str, str], list[Relation]] = {}
        for r in rels:
            if r.type == best_type:
                edges.setdefault((r.source, r.target), []).append(r)
        for (src, dst), group in edges.items():
            group.sort(key=lambda r: (-r.confidence, r.origin, r.evidence))
            top = group[0]
            out.append(Relation(src, dst, best_type, E.merge([r.evidence for r in group]),
                                top.confidence, top.origin))
    out.sort(key=lambda r: (key_order(r.source), key_order(r.target), r.type))
    return out


def derive_relations(
    store: Store, profile: Profile, rules: RuleSet | None = None
) -> tuple[list[Relation], dict[str, int]]:
    """Every relation the knowledge base supports, resolved; and counts before resolution."""
    rules = rules or default_rules()
    events = declaration_events(store, profile)
    text = text_relations(store, profile, rules)
    culprits = text_culprits(text)
    timeline = timeline_relations(events, rules)
    regress = regression_candidates(events, profile, rules)
    lineage, unmapped = lineage_relations(store, profile, rules, culprits)
    alts = code_alternatives(store, profile, rules)
    restored = stale_relations(store, profile)
    counts = {
        "text_cues": len(text),
        "timeline_cues": len(timeline),
        "regression_candidates": len(regress),
        "lineage_cues": len(lineage),
        "lineage_unmapped_commits": unmapped,
        "code_alternatives": len(alts),
        "stale_restored": len(restored),
    }
    prs = {p.key: (str(p.state), str(p.created_at or "")) for p in store.graph_prs()}
    found = text_names_the_culprit([*text, *timeline, *regress, *lineage, *alts, *restored],
                                   culprits)
    found = closed_fixes(found, {k: v[0] for k, v in prs.items()})
    found = replacements(found, prs)
    return resolve(found, rules), counts


def build_relations(store: Store, profile: Profile) -> dict[str, Any]:
    """Recompute and store every derived relation (idempotent, one transaction).

    Also re-tags PRs: risk tag ``depends-on-pr`` on exactly the PRs with an outgoing
    ``depends-on`` edge. Returns counts.
    """
    rules = default_rules()
    relations, counts = derive_relations(store, profile, rules)
    depending = {r.source for r in relations if r.type == "depends-on"}
    with store.transaction():
        # only what differs is written: readers of the change journal (the site build) then
        # see just the relations that really changed
        store.sync_relations(relations)
        store.sync_commit_nodes()
        endpoints = sorted({k for r in relations for k in (r.source, r.target)}, key=key_order)
        store.add_nodes(Node.from_key(k) for k in endpoints)
        store.drop_orphan_nodes()
        ids = {i for i, key in store.pr_node_keys() if key in depending}
        store.set_tagged("depends-on-pr", ids)
        store.prune_journal()  # the stage every collect and import ends with
    by_type: dict[str, int] = {}
    by_origin: dict[str, int] = {}
    for r in relations:
        by_type[r.type] = by_type.get(r.type, 0) + 1
        by_origin[r.origin] = by_origin.get(r.origin, 0) + 1
    return {
        "relations": len(relations),
        "nodes": store.node_count(),
        "by_type": dict(sorted(by_type.items())),
        "by_origin": dict(sorted(by_origin.items())),
        "tagged_depends_on": len(ids),
        **counts,
    }
