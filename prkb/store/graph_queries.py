"""Readers and writers of the relation graph, lineage and support matrix: relations,
nodes, builder levels over time.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

from .core import StoreBase


class GraphQueries(StoreBase):
    """SQL of the graph concern, mixed into :class:`prkb.store.Store`."""
