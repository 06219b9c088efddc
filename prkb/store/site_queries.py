"""Readers and writers of the static site build: bulk reads, the site manifest.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.

The site's gather stage reads every table once, in one read transaction
(:meth:`prkb.store.database.StoreBase.read_snapshot`); its readers are bulk readers that must stay
fast, so they return plain tuples (no ``sqlite3.Row``, several times cheaper to unpack), in
the column order their type alias names, streamed from the cursor rather than collected into a
list.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import cast

from .database import StoreBase

# (id, repo, ref, number, title, state, author, created_at, closed_at, merged_at,
#  merge_commit_sha, url, labels JSON, raw_hash, analysis JSON, source)
SitePrRow = tuple[
    int, str, str, int | None, str, str, str | None, str | None, str | None, str | None,
    str | None, str | None, str, str, str, str,
]
# (id, repo, ref, number, state, created_at, closed_at, merged_at, source)
SitePrStampRow = tuple[int, str, str, int | None, str, str | None, str | None, str | None, str]
# (pr_id, file, class_name, attr, before, after, direction)
SiteChangeRow = tuple[int, str, str, str, str | None, str | None, str]
# (pr_id, rule, file, class_name, message_en, message_zh, commit_sha, severity)
SiteFindingRow = tuple[int, str, str, str, str, str, str | None, str]
# (key, kind, number, title, repo)
SiteNodeRow = tuple[str, str, int | None, str | None, str | None]
# (source, target, type, evidence, confidence, origin)
SiteRelationRow = tuple[str, str, str, str, float, str]


class SiteQueries(StoreBase):
    """SQL of the site concern, mixed into :class:`prkb.store.Store`."""

    def reconnect(self) -> None:
        """Replace this object's connection with a new one to the same file: a SQLite
        connection must not cross a fork (a forked site renderer calls this first)."""
        self.conn = type(self)(self.path).conn

    def _filtered(self, sql: str, where: str, keys: Collection[object] | None,
                  order: str = "") -> Iterator[tuple[object, ...]]:
        """``sql`` for every row, or (``keys`` given) for the rows ``where`` names: its ``?``
        is the keys as one JSON array (one parameter however many keys)."""
        if keys is None:
            return self._tuples(sql + order)
        cur = self.conn.cursor()
        cur.row_factory = None
        clause = where.replace("?", "(SELECT value FROM json_each(?))")
        return cast(Iterator[tuple[object, ...]], cur.execute(
            f"{sql} WHERE {clause}{order}",
            (json.dumps(list(keys)),) * clause.count("json_each")))

    def site_prs(self, ids: Collection[int] | None = None) -> Iterator[SitePrRow]:
        """Every PR record (no body, patches or raw record), unordered; see :data:`SitePrRow`.
        ``ids``: only those PRs (the ``ids`` arguments below likewise)."""
        return cast(Iterator[SitePrRow], self._filtered(
            "SELECT id, repo, ref, number, title, state, author, created_at, closed_at,"
            " merged_at, merge_commit_sha, url, labels, raw_hash, analysis, source FROM prs",
            "id IN ?", ids,
        ))

    def site_pr_stamps(self) -> Iterator[SitePrStampRow]:
        """Every PR record's name and what dates it (:data:`SitePrStampRow`), unordered: the
        PRs of :meth:`site_prs`, for what needs only their weeks and page names."""
        return cast(Iterator[SitePrStampRow], self._tuples(
            "SELECT id, repo, ref, number, state, created_at, closed_at, merged_at, source"
            " FROM prs"))

    def site_pr_count(self) -> int:
        """How many PR records :meth:`site_prs` reads."""
        return int(self.conn.execute("SELECT COUNT(*) FROM prs").fetchone()[0])

    def site_symbol_changes(self, ids: Collection[int] | None = None) -> Iterator[SiteChangeRow]:
        """Every declaration change, by PR id then its order in the PR."""
        return cast(Iterator[SiteChangeRow], self._filtered(
            "SELECT pr_id, file, class_name, attr, before, after, direction FROM symbol_changes",
            "pr_id IN ?", ids, " ORDER BY pr_id, seq",
        ))

    def site_risk_tags(self, ids: Collection[int] | None = None) -> Iterator[tuple[int, str]]:
        """Every risk tag as (pr_id, code), by PR id then the order they were stored in."""
        return cast(Iterator[tuple[int, str]], self._filtered(
            "SELECT pr_id, code FROM risk_tags", "pr_id IN ?", ids, " ORDER BY pr_id, rowid",
        ))

    def site_findings(self, ids: Collection[int] | None = None) -> Iterator[SiteFindingRow]:
        """Every audit finding, by PR id then its order in the PR."""
        return cast(Iterator[SiteFindingRow], self._filtered(
            "SELECT pr_id, rule, file, class_name, message_en, message_zh, commit_sha, severity"
            " FROM findings", "pr_id IN ?", ids, " ORDER BY pr_id, seq",
        ))

    def site_nodes(self, keys: Collection[str] | None = None) -> Iterator[SiteNodeRow]:
        """Every node of the PR graph (``keys``: only those), unordered."""
        return cast(Iterator[SiteNodeRow], self._filtered(
            "SELECT key, kind, number, title, repo FROM nodes", "key IN ?", keys,
        ))

    def site_relations(self, nodes: Collection[str] | None = None) -> list[SiteRelationRow]:
        """Every relation of the PR graph (``nodes``: those with an end among them),
        unordered (sorting in Python is cheaper than SQLite's temporary B-tree)."""
        return cast(list[SiteRelationRow], list(self._filtered(
            "SELECT source, target, type, evidence, confidence, origin FROM relations",
            "source IN ? OR target IN ?", nodes,
        )))

