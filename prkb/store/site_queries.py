"""Readers and writers of the static site build: bulk reads, the site manifest.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

from .core import StoreBase


class SiteQueries(StoreBase):
    """SQL of the site concern, mixed into :class:`prkb.store.Store`."""
