"""Readers and writers of PR records: ingest's writes, per-PR facts and raw records, builder
levels, collector cursors and mined commits, the HTTP cache.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

from .core import StoreBase


class PrQueries(StoreBase):
    """SQL of PR records, mixed into :class:`prkb.store.Store`."""
