"""The graph as text: JSON, Graphviz DOT, GraphML and Mermaid. Untrusted titles and evidence
are escaped for each format."""

from __future__ import annotations

import json
from typing import Any

import networkx as nx
from networkx.readwrite.graphml import GraphMLWriter

from ..errors import InputError
from .nodes import key_order, node_json, node_ref

FORMATS = ("json", "dot", "graphml", "mermaid")


def to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Nodes and edges, sorted; PR nodes are named by number."""
    nodes = [node_json(g, n) for n in sorted(g.nodes, key=key_order)]
    edges = [
        {
            "source": node_ref(g, u),
            "target": node_ref(g, v),
            "type": k,
            "evidence": d.get("evidence", ""),
            "evidence_items": d.get("items", []),
            "confidence": d.get("confidence"),
            "origin": d.get("origin"),
        }
        for u, v, k, d in sorted(
            g.edges(keys=True, data=True), key=lambda e: (key_order(e[0]), key_order(e[1]), e[2])
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
    """Graphviz DOT: labels quoted and escaped, ``mentions`` dashed."""
    lines = ["digraph prkb {", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    shapes = {"issue": "ellipse", "external": "note", "commit": "component"}
    for n in sorted(g.nodes, key=key_order):
        kind = g.nodes[n].get("kind") or "pr"
        style = f", shape={shapes[kind]}" if kind in shapes else ""
        lines.append(f"  {_dot_str(n)} [label={_dot_str(_label(g, n))}{style}];")
    for u, v, k, d in sorted(
        g.edges(keys=True, data=True), key=lambda e: (key_order(e[0]), key_order(e[1]), e[2])
    ):
        conf = d.get("confidence")
        label = k if conf is None else f"{k} ({float(conf):.1f})"
        style = ", style=dashed" if k == "mentions" else ""
        lines.append(f"  {_dot_str(u)} -> {_dot_str(v)} [label={_dot_str(label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(g: nx.MultiDiGraph) -> str:
    """GraphML (XML 1.0: control characters dropped, booleans as ``true``/``false``)."""
    h: nx.MultiDiGraph = nx.MultiDiGraph()
    for n, d in g.nodes(data=True):
        h.add_node(n, **{k: _graphml_value(v) for k, v in d.items() if v is not None})
    for u, v, k, d in g.edges(keys=True, data=True):
        # the evidence items are the JSON export's; GraphML carries their English reading
        h.add_edge(u, v, key=k, **{a: _graphml_value(b) for a, b in d.items()
                                   if b is not None and a != "items"})
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
    """A Mermaid flowchart; text escaped with Mermaid entities."""
    ids = {n: f"n{i}" for i, n in enumerate(sorted(g.nodes, key=key_order))}
    lines = ["graph LR"]
    for n, i in ids.items():
        kind = g.nodes[n].get("kind")
        text = _mermaid_text(_label(g, n))
        lines.append(f'  {i}(["{text}"])' if kind == "issue" else f'  {i}["{text}"]')
    for u, v, k, _ in sorted(
        g.edges(keys=True, data=True), key=lambda e: (key_order(e[0]), key_order(e[1]), e[2])
    ):
        arrow = "-.->" if k == "mentions" else "-->"
        lines.append(f"  {ids[u]} {arrow}|{_mermaid_text(k)}| {ids[v]}")
    return "\n".join(lines) + "\n"


def export(g: nx.MultiDiGraph, fmt: str) -> str:
    """The graph in one of :data:`FORMATS`."""
    if fmt == "json":
        return json.dumps(to_json(g), ensure_ascii=False, indent=1) + "\n"
    if fmt == "dot":
        return to_dot(g)
    if fmt == "graphml":
        return to_graphml(g)
    if fmt == "mermaid":
        return to_mermaid(g)
    raise InputError(f"unknown graph format {fmt!r}: use one of {', '.join(FORMATS)}")
