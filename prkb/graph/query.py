"""Reading the stored graph: load it into networkx, find the node a user named, cut a
subgraph, follow a PR's lineage; a builder class's declaration timeline."""

from __future__ import annotations

import difflib
import re
from collections import deque
from collections.abc import Iterable
from typing import Any

import networkx as nx

from ..errors import InputError, NotFound
from ..evidence import loads as evidence_items
from ..evidence import summary as evidence_summary
from ..models import Node, node_key
from ..profile import Profile
from ..store import Store
from .lineage import FAMILY, declaration_events
from .nodes import key_order, node_json, node_ref
from .relations import RELATION_TYPES

LINEAGE_TYPES = (
    "modifies-declaration-of",
    "fixes-regression-from",
    "depends-on",
    "follow-up-of",
    "reverts",
)


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
            e.source, e.target, key=e.type, type=e.type, evidence=evidence_summary(e.evidence),
            items=evidence_items(e.evidence), confidence=e.confidence, origin=e.origin,
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
            edges.sort(key=lambda e: (key_order(e[0]), e[1]))
            for other, k, data in edges:
                if k not in wanted or other in seen:
                    continue
                seen.add(other)
                found.append(
                    {
                        **node_json(g, other),
                        "depth": d + 1,
                        "via": node_ref(g, node),
                        "type": k,
                        "evidence": data.get("evidence", ""),
                        "confidence": data.get("confidence"),
                    }
                )
                queue.append((other, d + 1))
        return found

    return {"node": [node_json(g, key)], "ancestors": walk(True), "descendants": walk(False)}


def graph_view(
    store: Store,
    center: str | None = None,
    *,
    depth: int = 2,
    types: Iterable[str] | None = None,
) -> nx.MultiDiGraph:
    """The stored graph as ``prkb graph`` shows it: all of it, or the nodes within ``depth``
    hops of the node a user named (:func:`node_for`), with edges of ``types`` only."""
    g = load_graph(store)
    key = node_for(g, store, center) if center else None
    return subgraph(g, key, depth=depth, types=types)


def pr_lineage(
    store: Store, arg: str, types: Iterable[str] = LINEAGE_TYPES
) -> dict[str, list[dict[str, Any]]]:
    """:func:`lineage` of the node a user named (a PR number, a key, a commit sha)."""
    g = load_graph(store)
    return lineage(g, node_for(g, store, arg), types)


# --- the timeline view -------------------------------------------------------------------------


def class_timeline(store: Store, profile: Profile, class_name: str) -> dict[str, Any]:
    """Declared level over time (every change, across spellings) and, where the audit stored
    readings, the effective level at each collected commit where it changed.

    A builder is its file and class: classes of one name in two files (V0 and V1) are two
    builders, so the declared level after a change, the effective level after it and the
    declared level now (``declared_now_by_file``) are those of the change's own file;
    ``declared_now`` is the one level when every file declares the same (else None)."""
    events = declaration_events(store, profile, class_name)
    level_rows = store.level_readings(class_name=class_name)
    by_reading = {(r.commit_sha, r.file): r for r in level_rows}
    changes = []
    declared: dict[str, str | None] = {}  # file -> its declared level after the last change
    for e in events:
        item = e.to_json()
        item["merged"] = e.merged
        if e.merged and e.attr_key == FAMILY:
            if e.before_file and e.before_file != e.file:
                # the class left that file (moved, or changed on its way with a renamed file)
                declared.pop(e.before_file, None)
            declared[e.file] = e.after
        item["declared_after"] = declared.get(e.file) if e.merged else None
        lv = by_reading.get((e.merge_commit_sha or "", e.file))
        item["effective_after"] = lv.effective if lv is not None else None
        changes.append(item)
    effective = []
    # one reading per file: classes of one name in two files (V0 and V1) are two builders,
    # and each shows only the commits where its own reading changed
    last: dict[str, tuple[Any, ...]] = {}
    for r in level_rows:
        cur = (r.declared, r.effective, r.dynamic, r.level_text)
        if last.get(r.file) == cur:
            continue
        last[r.file] = cur
        effective.append(
            {
                "date": r.committed_at,
                "commit": r.commit_sha,
                "pr": int(r.pr_ref) if r.pr_ref and r.pr_ref.isdigit() else r.pr_ref,
                "file": r.file,
                "declared": r.declared,
                "effective": r.effective,
                "dynamic": r.dynamic,
                # what a dynamic builder can report, with conditions (None: not stored)
                "level_text": r.level_text,
            }
        )
    spellings = []
    for e in events:
        for s in (e.before_attr, e.attr):
            if s and s not in spellings and e.attr_key == FAMILY:
                spellings.append(s)
    now = set(declared.values())
    return {
        "class": class_name,
        "spellings": spellings,
        "declared_now": now.pop() if len(now) == 1 else None,
        "declared_now_by_file": declared,
        "changes": changes,
        "effective": effective,
    }


def timeline_of(store: Store, profile: Profile, class_name: str) -> dict[str, Any]:
    """:func:`class_timeline`; NotFound (with the closest stored class names) when nothing of
    the class is stored."""
    tl = class_timeline(store, profile, class_name)
    if not tl["changes"] and not tl["effective"]:
        near = difflib.get_close_matches(class_name, store.known_classes(), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise NotFound(f"no declaration changes of class {class_name!r} are stored{hint}")
    return tl
