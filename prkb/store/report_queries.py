"""Readers of the per-PR report and of the weekly digest (titles, audit readings, a period's
PRs and what they changed, the digest's delivery ledger).

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
Readers return plain dicts (keyed by column name, as documented per method): the digest reads
a week's rows in bulk and the report a few per PR, and neither needs more than the values.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from .database import StoreBase
from .rows import dict_rows, in_chunks, row_dict


class ReportQueries(StoreBase):
    """SQL of the report concern, mixed into :class:`prkb.store.Store`."""

    # --- the report ---------------------------------------------------------------------

    def pr_titles(self, numbers: Iterable[int]) -> dict[int, str | None]:
        """The title of each PR of ``numbers``: its record's (the first repository by name),
        else its graph node's; number -> title (None when neither knows one)."""
        nums = sorted(set(numbers))
        found: dict[int, Any] = {}
        nodes: dict[str, Any] = {}
        for chunk, marks in in_chunks(nums):
            # the first repository by name: rows in that order, the first one kept
            for number, title in self.conn.execute(
                f"SELECT number, title FROM prs WHERE number IN ({marks}) "
                "ORDER BY number, repo", chunk,
            ):
                found.setdefault(int(number), title)
            keys = [f"pr:{n}" for n in chunk if n not in found]
            if keys:
                marks = ",".join("?" for _ in keys)
                nodes.update(self.conn.execute(
                    f"SELECT key, title FROM nodes WHERE key IN ({marks})", keys).fetchall())
        out: dict[int, str | None] = {}
        for n in nums:
            title = found[n] if n in found else nodes.get(f"pr:{n}")
            out[n] = str(title) if title else None
        return out

    def builder_readings(self, repo: str, commit: str) -> list[dict[str, Any]]:
        """The consistency audit's builder readings at ``commit`` of ``repo``: dicts with
        ``class_name``, ``file`` and ``meets_rule`` (1, 0 or None), by class and file."""
        rows = self.conn.execute(
            "SELECT class_name, file, meets_rule FROM builder_levels WHERE repo=? AND"
            " commit_sha=? ORDER BY class_name, file",
            (repo, commit),
        )
        return [row_dict(r) for r in rows]

    # --- the digest ---------------------------------------------------------------------

    def prs_dated_between(self, repo: str, lo: str, hi: str) -> list[dict[str, Any]]:
        """PRs of ``repo`` opened, merged or closed with a stored stamp in [``lo``, ``hi``)
        (ISO text compared as text: give a margin and test the exact period after). Dicts
        with ``id, repo, ref, number, title, state, url, author, created_at, merged_at,
        closed_at, source``."""
        # "+repo": the date indexes (migration 0004) serve the ORs, not the (repo, ref) index
        return dict_rows(
            self.conn,
            "SELECT id, repo, ref, number, title, state, url, author, created_at, merged_at, "
            "closed_at, source FROM prs WHERE +repo=? AND ("
            "(created_at >= ? AND created_at < ?) OR (merged_at >= ? AND merged_at < ?) OR "
            "(closed_at >= ? AND closed_at < ?))",
            (repo, lo, hi, lo, hi, lo, hi),
        )

    def pr_stamps(self, repo: str) -> list[dict[str, Any]]:
        """Every PR of ``repo`` with what dates it in a digest: dicts with ``state,
        created_at, merged_at, closed_at, source``."""
        rows = self.conn.execute(
            "SELECT state, created_at, merged_at, closed_at, source FROM prs WHERE repo=?",
            (repo,),
        )
        return [row_dict(r) for r in rows]

    def pr_dates(self, repo: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The PRs of ``repo`` numbered ``numbers`` with what dates them: number -> dict of
        ``state, created_at, merged_at, closed_at, source``."""
        nums = sorted(set(numbers))
        out: dict[int, dict[str, Any]] = {}
        for chunk, marks in in_chunks(nums):
            # "+repo": the number index, not a walk of the repository's every row through
            # the (repo, ref) index (the planner's choice without it, 30x slower at 3000 PRs)
            for r in dict_rows(
                self.conn,
                "SELECT number, state, created_at, merged_at, closed_at, source FROM prs "
                f"WHERE +repo=? AND number IN ({marks})", (repo, *chunk),
            ):
                out[int(r["number"])] = r
        return out

    def _by_pr(self, sql: str, pr_ids: Iterable[int], key: str = "pr_id",
               ) -> Iterator[tuple[int, sqlite3.Row]]:
        """The rows of ``sql`` (a query whose ``{marks}`` is the list of PR row ids) for
        ``pr_ids``, each with its PR row id (its column ``key``), a few hundred ids a query."""
        for chunk, marks in in_chunks(sorted(set(pr_ids))):
            for row in self.conn.execute(sql.format(marks=marks), chunk):
                yield int(row[key]), row

    def symbol_changes_of(self, pr_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
        """The stored declaration changes of each PR row of ``pr_ids``, in order: dicts with
        the columns of ``symbol_changes`` (``class_name, file, before, after, direction``...);
        by PR row id (every id given, [] for none)."""
        out: dict[int, list[dict[str, Any]]] = {i: [] for i in pr_ids}
        for pr_id, row in self._by_pr(
                "SELECT * FROM symbol_changes WHERE pr_id IN ({marks})"
                " ORDER BY pr_id, seq", out):
            out[pr_id].append(row_dict(row))
        return out

    def state_changes_of(self, pr_ids: Iterable[int]) -> dict[int, list[dict[str, Any]] | None]:
        """The stored state changes of each PR row of ``pr_ids`` (``analyze/state.py``: each
        builder's tracked value whose effective value changed); None when the collector did
        not read the code's state (or there is no such row)."""
        out: dict[int, list[dict[str, Any]] | None] = {i: None for i in pr_ids}
        for pr_id, row in self._by_pr(
                "SELECT id, analysis FROM prs WHERE id IN ({marks})", out, key="id"):
            got = json.loads(row[1] or "{}").get("state_changes")
            out[pr_id] = got if isinstance(got, list) else None
        return out

    def paths_of(self, pr_ids: Iterable[int]) -> dict[int, set[str]]:
        """The paths of the files each PR row of ``pr_ids`` changed (a renamed file's
        previous path too)."""
        out: dict[int, set[str]] = {i: set() for i in pr_ids}
        for pr_id, row in self._by_pr(
                "SELECT pr_id, path, previous_path FROM files WHERE pr_id IN ({marks})", out):
            out[pr_id].update(p for p in row[1:] if p)
        return out

    def findings_of(self, pr_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
        """The stored audit findings of each PR row of ``pr_ids``, in order: dicts with the
        columns of ``findings`` (``rule, class_name, file, message_en, message_zh``...)."""
        out: dict[int, list[dict[str, Any]]] = {i: [] for i in pr_ids}
        for pr_id, row in self._by_pr(
                "SELECT * FROM findings WHERE pr_id IN ({marks}) ORDER BY pr_id, seq",
                out):
            out[pr_id].append(row_dict(row))
        return out

    def risk_codes_of(self, pr_ids: Iterable[int]) -> dict[int, list[str]]:
        """The risk tag codes stored for each PR row of ``pr_ids`` (in no particular
        order)."""
        out: dict[int, list[str]] = {i: [] for i in pr_ids}
        for pr_id, row in self._by_pr(
                "SELECT pr_id, code FROM risk_tags WHERE pr_id IN ({marks})", out):
            out[pr_id].append(str(row[1]))
        return out

    def relations_touching(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        """Relations whose source or target is one of the graph ``keys`` (``pr:N``...), by
        source, type and target: dicts with ``source, target, type, evidence, confidence,
        origin``."""
        keys = list(keys)
        if not keys:
            return []
        marks = ",".join("?" for _ in keys)
        return dict_rows(
            self.conn,
            f"SELECT source, target, type, evidence, confidence, origin FROM relations "
            f"WHERE source IN ({marks}) OR target IN ({marks}) ORDER BY source, type, target",
            (*keys, *keys),
        )

    # --- the digest's delivery ledger ---------------------------------------------------

    def sent_recipients(self, week: str) -> set[str]:
        """The recipients (lower-cased) the digest of ``week`` was delivered to."""
        rows = self.conn.execute("SELECT recipient FROM digest_ledger WHERE week=?", (week,))
        return {str(r[0]).lower() for r in rows}

    def record_sent(self, week: str, recipient: str, message_id: str, sent_at: str) -> None:
        """One accepted delivery of ``week``'s digest, in its own transaction (a resend
        replaces the recipient's row)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO digest_ledger(week, recipient, message_id, sent_at) "
                "VALUES (?,?,?,?) ON CONFLICT(week, recipient) DO UPDATE SET "
                "message_id=excluded.message_id, sent_at=excluded.sent_at",
                (week, recipient.lower(), message_id, sent_at),
            )
