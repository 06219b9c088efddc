"""Readers and writers of the collectors and of ingest: PR rows, files, symbol changes,
risk tags, findings, builder levels, collector cursors and mined commits, HTTP cache.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

from .core import StoreBase


class CollectQueries(StoreBase):
    """SQL of the collect concern, mixed into :class:`prkb.store.Store`."""
