"""Readers of the per-PR report and of the weekly digest (facts, raw records, ledger).

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

from .core import StoreBase


class ReportQueries(StoreBase):
    """SQL of the report concern, mixed into :class:`prkb.store.Store`."""
