"""The SQLite knowledge base, and the only package of prkb that holds SQL.

:class:`Store` is one connection; its typed readers and writers come from one mixin per
concern (``*_queries.py``), each holding the SQL of that concern. ``database.py`` owns the
schema (named migrations), transactions, collector state and the change journal.
"""

from __future__ import annotations

from .database import (
    JOURNAL_KEEP,
    MIGRATIONS,
    ProfileBinding,
    StoreBase,
    canonical_json,
    content_hash,
    damaged,
    is_damage,
)
from .graph_queries import GraphQueries
from .pr_queries import PrQueries
from .report_queries import ReportQueries
from .site_queries import SiteQueries

__all__ = [
    "JOURNAL_KEEP", "MIGRATIONS", "ProfileBinding", "Store", "StoreBase", "canonical_json",
    "content_hash", "damaged", "is_damage",
]


class Store(PrQueries, GraphQueries, ReportQueries, SiteQueries, StoreBase):
    """A connection to one knowledge base file, with every typed reader and writer."""
