"""The typed PR graph: derive every relation, store it, load it into networkx, query, export.

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
reason to the evidence.

Conflicts: per unordered pair of nodes the strongest type wins (``[relations].priority`` in
``data/relations.toml``, then confidence); edges of the winning type are kept in every
direction they were found (``alternative-to`` is symmetric and stored once, the lower PR
number as source); when several cues give the same edge, the highest confidence is kept and
up to three distinct evidence texts are joined with `` | ``, best first.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx
from networkx.readwrite.graphml import GraphMLWriter

from ..errors import InputError, NotFound
from ..models import Node, Relation, node_key
from ..profile import Profile
from ..store import Store
from .lineage import (
    code_alternatives,
    declaration_events,
    lineage_relations,
    regression_candidates,
    timeline_relations,
)
from .relations import (
    RELATION_TYPES,
    Reference,
    RuleSet,
    default_rules,
    relations_of_record,
)

LINEAGE_TYPES = (
    "modifies-declaration-of",
    "fixes-regression-from",
    "depends-on",
    "follow-up-of",
    "reverts",
)
FORMATS = ("json", "dot", "graphml", "mermaid")


# --- deriving ------------------------------------------------------------------------------


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
            ev = f"{whose} {tr.evidence}"
            if tr.older_type and _number(src) < _number(dst):
                ev += f"; {_show(src)} is older than {_show(dst)}, so it cannot have replaced it"
                rtype = tr.older_type
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
        ev = str(item.get("evidence") or "stated in the record")[:300]
        out.append(Relation(src, dst, str(rtype), ev, max(0.0, min(conf, 1.0)), "curated"))
    return out


def _number(key: str) -> float:
    """The PR number of a ``pr:N`` key (PR numbers grow with time), else NaN: never
    smaller or greater than another."""
    kind, _, rest = key.partition(":")
    return float(rest) if kind == "pr" and rest.isdigit() else float("nan")


def _show(key: str) -> str:
    return f"#{key[3:]}" if key.startswith("pr:") else key


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
            names = ", ".join(_show(k) for k in sorted(named, key=_order))
            r = Relation(r.source, r.target, "follow-up-of",
                         f"{r.evidence}; the PR's own text names {names} as the culprit",
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
        fixes = sorted(merged_fixes.get(r.target, set()) - {r.source}, key=_order)
        for m in fixes:
            out.append(Relation(
                r.source, m, "alternative-to",
                f"{r.evidence}; {_show(r.source)} was closed unmerged and {_show(m)} is the "
                f"merged fix of {_show(r.target)}", r.confidence, r.origin,
            ))
        if not fixes:
            out.append(Relation(r.source, r.target, "attempts-fix-of",
                                f"{r.evidence}; {_show(r.source)} was closed unmerged",
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
                                 f"{r.evidence}; {_show(old)} was closed unmerged and is older "
                                 f"than {_show(new)}, which is {s_new[0]}",
                                 r.confidence, r.origin)
                    break
        out.append(r)
    return out


def _older(a: str, b: str, created_a: str, created_b: str) -> bool:
    """``a`` was opened before ``b``: by PR number, else by creation time (both known)."""
    na, nb = _number(a), _number(b)
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
        if r.type in rules.symmetric and _order(r.target) < _order(r.source):
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
            evidence: list[str] = []
            for r in group:
                if r.evidence and r.evidence not in evidence:
                    evidence.append(r.evidence)
            top = group[0]
            out.append(
                Relation(src, dst, best_type, " | ".join(evidence[:3]), top.confidence, top.origin)
            )
    out.sort(key=lambda r: (_order(r.source), _order(r.target), r.type))
    return out


def _order(key: str) -> tuple[int, int, str]:
    kind, _, rest = key.partition(":")
    rank = {"pr": 0, "issue": 1, "commit": 2, "ext": 3}.get(kind, 4)
    return (rank, int(rest) if rest.isdigit() else 0, key)


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
    counts = {
        "text_cues": len(text),
        "timeline_cues": len(timeline),
        "regression_candidates": len(regress),
        "lineage_cues": len(lineage),
        "lineage_unmapped_commits": unmapped,
        "code_alternatives": len(alts),
    }
    prs = {p.key: (str(p.state), str(p.created_at or "")) for p in store.graph_prs()}
    found = text_names_the_culprit([*text, *timeline, *regress, *lineage, *alts], culprits)
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
        endpoints = sorted({k for r in relations for k in (r.source, r.target)}, key=_order)
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


# --- the networkx graph ------------------------------------------------------------------------


def load_graph(store: Store) -> nx.MultiDiGraph:
    """Every node and stored relation; edge keys are relation types."""
    g: nx.MultiDiGraph = nx.MultiDiGraph()
    prs = {p.key: p for p in store.graph_prs()}
    for n in store.nodes():
        g.add_node(n.key, kind=n.kind, number=n.number, title=n.title, repo=n.repo)
    for key, p in prs.items():
        if key not in g:
            kind = "pr" if p.number is not None else "commit"
            g.add_node(key, kind=kind, number=p.number, title=p.title, repo=p.repo)
        g.nodes[key].update(
            state=p.state,
            date=p.merged_at or p.closed_at or p.created_at,
            stored=True,
        )
    for e in store.relations():
        for k in (e.source, e.target):
            if k not in g:
                n = Node.from_key(k)
                g.add_node(k, kind=n.kind, number=n.number, title=None, repo=n.repo)
        g.add_edge(
            e.source, e.target, key=e.type, type=e.type, evidence=e.evidence,
            confidence=e.confidence, origin=e.origin,
        )
    return g


_NODE_ARG = re.compile(r"^#?(\d+)$")


def node_for(g: nx.MultiDiGraph, store: Store, arg: str) -> str:
    """The node key a user named: 47144, #47144, pr:47144, issue:12, a commit sha."""
    arg = arg.strip()
    m = _NODE_ARG.match(arg)
    if m:
        for key in (f"pr:{m.group(1)}", f"issue:{m.group(1)}"):
            if key in g:
                return key
        raise NotFound(f"no PR or issue {m.group(1)} in the knowledge base {store.path}")
    if arg in g:
        return arg
    row = store.pr_row(arg)
    if row is not None:
        key = node_key(row["number"], row["merge_commit_sha"])
        if key in g:
            return key
    raise NotFound(f"no node {arg!r} in the graph of {store.path} (try a PR number)")


def parse_types(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    types = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in types if t not in RELATION_TYPES]
    if bad:
        raise InputError(
            f"unknown relation type {bad[0]!r}: known types are {', '.join(RELATION_TYPES)}"
        )
    return types


def subgraph(
    g: nx.MultiDiGraph,
    center: str | None = None,
    *,
    depth: int = 2,
    types: Iterable[str] | None = None,
) -> nx.MultiDiGraph:
    """Edges of the given types; around ``center`` only nodes within ``depth`` hops (either
    direction). Without a center: the whole graph (without a type filter, every node)."""
    wanted = set(types) if types else None
    h: nx.MultiDiGraph = nx.MultiDiGraph()
    if center is None:
        if wanted is None:
            h.add_nodes_from(g.nodes(data=True))
        for u, v, k, d in g.edges(keys=True, data=True):
            if wanted is None or k in wanted:
                h.add_node(u, **g.nodes[u])
                h.add_node(v, **g.nodes[v])
                h.add_edge(u, v, key=k, **d)
        return h
    if depth < 0:
        raise InputError("--depth must be 0 or more")
    seen = {center: 0}
    queue = deque([center])
    while queue:
        node = queue.popleft()
        if seen[node] >= depth:
            continue
        nbrs = [(v, k) for _, v, k in g.out_edges(node, keys=True)]
        nbrs += [(u, k) for u, _, k in g.in_edges(node, keys=True)]
        for other, k in nbrs:
            if wanted is not None and k not in wanted:
                continue
            if other not in seen:
                seen[other] = seen[node] + 1
                queue.append(other)
    for n in seen:
        h.add_node(n, **g.nodes[n])
    for u, v, k, d in g.edges(keys=True, data=True):
        if u in seen and v in seen and (wanted is None or k in wanted):
            h.add_edge(u, v, key=k, **d)
    return h


def lineage(
    g: nx.MultiDiGraph, key: str, types: Iterable[str] = LINEAGE_TYPES
) -> dict[str, list[dict[str, Any]]]:
    """What led to ``key`` (ancestors: following edges out of it) and what followed it
    (descendants: following edges into it), breadth first, each with the edge that reached it."""
    wanted = set(types)

    def walk(outward: bool) -> list[dict[str, Any]]:
        seen = {key}
        found: list[dict[str, Any]] = []
        queue = deque([(key, 0)])
        while queue:
            node, d = queue.popleft()
            if outward:
                edges = [(v, k, data) for _, v, k, data in g.out_edges(node, keys=True, data=True)]
            else:
                edges = [(u, k, data) for u, _, k, data in g.in_edges(node, keys=True, data=True)]
            edges.sort(key=lambda e: (_order(e[0]), e[1]))
            for other, k, data in edges:
                if k not in wanted or other in seen:
                    continue
                seen.add(other)
                found.append(
                    {
                        **_node_json(g, other),
                        "depth": d + 1,
                        "via": _ref(g, node),
                        "type": k,
                        "evidence": data.get("evidence", ""),
                        "confidence": data.get("confidence"),
                    }
                )
                queue.append((other, d + 1))
        return found

    return {"node": [_node_json(g, key)], "ancestors": walk(True), "descendants": walk(False)}


# --- exports -----------------------------------------------------------------------------------


def _ref(g: nx.MultiDiGraph, key: str) -> int | str:
    """PR nodes by number (as the JSON export promises), others by key."""
    d = g.nodes[key]
    if d.get("kind") == "pr" and d.get("number") is not None:
        return int(d["number"])
    return key


def _node_json(g: nx.MultiDiGraph, key: str) -> dict[str, Any]:
    d = g.nodes[key]
    out = {
        "id": key,
        "number": d.get("number"),
        "kind": d.get("kind"),
        "title": d.get("title"),
    }
    for extra in ("repo", "state", "date"):
        if d.get(extra) is not None:
            out[extra] = d[extra]
    return out


def to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    nodes = [_node_json(g, n) for n in sorted(g.nodes, key=_order)]
    edges = [
        {
            "source": _ref(g, u),
            "target": _ref(g, v),
            "type": k,
            "evidence": d.get("evidence", ""),
            "confidence": d.get("confidence"),
            "origin": d.get("origin"),
        }
        for u, v, k, d in sorted(
            g.edges(keys=True, data=True), key=lambda e: (_order(e[0]), _order(e[1]), e[2])
        )
    ]
    return {"nodes": nodes, "edges": edges}


def _label(g: nx.MultiDiGraph, key: str, width: int = 60) -> str:
    d = g.nodes[key]
    kind = d.get("kind")
    if kind == "pr" and d.get("number") is not None:
        head = f"#{d['number']}"
    elif kind == "issue":
        head = f"issue #{d.get('number')}"
    elif kind == "external":
        head = key[4:]
    else:
        head = key.partition(":")[2][:12]
    title = " ".join(str(d.get("title") or "").split())
    if len(title) > width:
        title = title[: width - 1] + "\u2026"
    return f"{head} {title}".strip()


def _dot_str(s: str) -> str:
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(g: nx.MultiDiGraph) -> str:
    lines = ["digraph prkb {", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    shapes = {"issue": "ellipse", "external": "note", "commit": "component"}
    for n in sorted(g.nodes, key=_order):
        kind = g.nodes[n].get("kind") or "pr"
        style = f", shape={shapes[kind]}" if kind in shapes else ""
        lines.append(f"  {_dot_str(n)} [label={_dot_str(_label(g, n))}{style}];")
    for u, v, k, d in sorted(
        g.edges(keys=True, data=True), key=lambda e: (_order(e[0]), _order(e[1]), e[2])
    ):
        conf = d.get("confidence")
        label = k if conf is None else f"{k} ({float(conf):.1f})"
        style = ", style=dashed" if k == "mentions" else ""
        lines.append(f"  {_dot_str(u)} -> {_dot_str(v)} [label={_dot_str(label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(g: nx.MultiDiGraph) -> str:
    h: nx.MultiDiGraph = nx.MultiDiGraph()
    for n, d in g.nodes(data=True):
        h.add_node(n, **{k: _graphml_value(v) for k, v in d.items() if v is not None})
    for u, v, k, d in g.edges(keys=True, data=True):
        h.add_edge(u, v, key=k, **{a: _graphml_value(b) for a, b in d.items() if b is not None})
    writer = _GraphMLWriter(encoding="utf-8", prettyprint=True)
    writer.add_graph_element(h)
    return "\n".join(str(writer).splitlines()) + "\n"


class _GraphMLWriter(GraphMLWriter):
    """networkx writes a boolean as Python's ``True``/``False``; GraphML (``attr.type=
    "boolean"``, an XML Schema boolean) wants ``true``/``false``."""

    def add_data(self, name: str, element_type: type, value: Any, scope: str = "all",
                 default: Any = None) -> Any:
        element = super().add_data(name, element_type, value, scope, default)
        if element_type is bool:  # networkx passes the value as str(value)
            element.text = {"True": "true", "False": "false"}.get(str(value), element.text)
        return element


def _graphml_value(v: Any) -> Any:
    if isinstance(v, bool | int | float):
        return v
    text = str(v)
    # XML 1.0 cannot carry most control characters
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)


_MERMAID_ESC = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "#": "#35;",
                "|": "#124;", "`": "#96;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;"}


def _mermaid_text(s: str) -> str:
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return "".join(_MERMAID_ESC.get(ch, ch) for ch in s)


def to_mermaid(g: nx.MultiDiGraph) -> str:
    ids = {n: f"n{i}" for i, n in enumerate(sorted(g.nodes, key=_order))}
    lines = ["graph LR"]
    for n, i in ids.items():
        kind = g.nodes[n].get("kind")
        text = _mermaid_text(_label(g, n))
        lines.append(f'  {i}(["{text}"])' if kind == "issue" else f'  {i}["{text}"]')
    for u, v, k, _ in sorted(
        g.edges(keys=True, data=True), key=lambda e: (_order(e[0]), _order(e[1]), e[2])
    ):
        arrow = "-.->" if k == "mentions" else "-->"
        lines.append(f"  {ids[u]} {arrow}|{_mermaid_text(k)}| {ids[v]}")
    return "\n".join(lines) + "\n"


def export(g: nx.MultiDiGraph, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(g), ensure_ascii=False, indent=1) + "\n"
    if fmt == "dot":
        return to_dot(g)
    if fmt == "graphml":
        return to_graphml(g)
    if fmt == "mermaid":
        return to_mermaid(g)
    raise InputError(f"unknown graph format {fmt!r}: use one of {', '.join(FORMATS)}")
