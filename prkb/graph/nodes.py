"""Graph node keys (``pr:N``, ``issue:N``, ``commit:SHA``, ``ext:owner/repo#N``): their order,
their PR number, how a node is named and described in outputs."""

from __future__ import annotations

from typing import Any

import networkx as nx


def key_order(key: str) -> tuple[int, int, str]:
    """Sort key of node keys: PRs by number, then issues, commits, external nodes."""
    kind, _, rest = key.partition(":")
    rank = {"pr": 0, "issue": 1, "commit": 2, "ext": 3}.get(kind, 4)
    return (rank, int(rest) if rest.isdigit() else 0, key)



def key_number(key: str) -> float:
    """The PR number of a ``pr:N`` key (PR numbers grow with time), else NaN: never
    smaller or greater than another."""
    kind, _, rest = key.partition(":")
    return float(rest) if kind == "pr" and rest.isdigit() else float("nan")


def show_key(key: str) -> str:
    """``#N`` for a PR key, else the key itself (for evidence text)."""
    return f"#{key[3:]}" if key.startswith("pr:") else key


def node_ref(g: nx.MultiDiGraph, key: str) -> int | str:
    """PR nodes by number (as the JSON export promises), others by key."""
    d = g.nodes[key]
    if d.get("kind") == "pr" and d.get("number") is not None:
        return int(d["number"])
    return key


def node_json(g: nx.MultiDiGraph, key: str) -> dict[str, Any]:
    """A node as the JSON export and the lineage view show it."""
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
