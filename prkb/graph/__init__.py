"""The typed PR graph: relations between PRs, issues and commits, derived, stored, queried.

- :mod:`prkb.graph.relations`: relations read from PR texts (phrase rules of
  ``data/relations.toml``).
- :mod:`prkb.graph.lineage`: relations read from code: the symbol timeline, blamed lines,
  alternative fixes.
- :mod:`prkb.graph.build`: ``derive_relations`` (every cue, resolved) and ``build_relations``,
  the one writer of the ``relations`` and ``nodes`` tables.
- :mod:`prkb.graph.query`: ``load_graph`` (networkx), ``node_for``, ``subgraph``, a PR's
  ``lineage``, a class's ``class_timeline``.
- :mod:`prkb.graph.export`: JSON, DOT, GraphML and Mermaid.
- :mod:`prkb.graph.nodes`: node keys, their order and how nodes are shown.

The graph reads and writes the knowledge base only through the store's typed methods
(:class:`prkb.store.graph_queries.GraphQueries`).
"""

from __future__ import annotations

from .build import (
    build_relations,
    closed_fixes,
    derive_relations,
    replacements,
    resolve,
    text_culprits,
    text_names_the_culprit,
    text_relations,
)
from .export import FORMATS, export, to_dot, to_graphml, to_json, to_mermaid
from .query import (
    LINEAGE_TYPES,
    class_timeline,
    graph_view,
    lineage,
    load_graph,
    node_for,
    parse_types,
    pr_lineage,
    subgraph,
    timeline_of,
)

__all__ = [
    "FORMATS",
    "LINEAGE_TYPES",
    "build_relations",
    "class_timeline",
    "closed_fixes",
    "derive_relations",
    "export",
    "graph_view",
    "lineage",
    "load_graph",
    "node_for",
    "parse_types",
    "pr_lineage",
    "replacements",
    "resolve",
    "subgraph",
    "text_culprits",
    "text_names_the_culprit",
    "text_relations",
    "timeline_of",
    "to_dot",
    "to_graphml",
    "to_json",
    "to_mermaid",
]
