"""Readers and writers of the relation graph, lineage and support matrix: relations,
nodes, builder levels over time.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
Bulk readers return :mod:`prkb.models` records (``PrNode``, ``Node``, ``Relation``,
``SymbolChange``, ``LevelReading``); ``relations`` and ``nodes`` are written only by
``prkb.graph.build`` (through :meth:`GraphQueries.sync_relations` and the node writers).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ..models import LevelReading, Node, PrNode, Relation, SymbolChange, node_key
from .database import StoreBase
from .rows import json_value

# PrNode's fields in order
_PR_COLUMNS = (
    "p.id, p.number, p.ref, p.repo, p.title, p.body, p.state, p.created_at, p.merged_at,"
    " p.closed_at, p.merge_commit_sha"
)

# s.pr_id, then SymbolChange's fields in order
_SC_COLUMNS = (
    "s.pr_id, s.file, s.class_name, s.attr, s.before, s.after, s.direction, s.before_attr,"
    " s.before_file"
)


def _pr_node(r: sqlite3.Row, at: int = 0) -> PrNode:
    """The PrNode of the ``_PR_COLUMNS`` starting at column ``at`` of a row."""
    return PrNode(*r[at:at + 11])


T = TypeVar("T")


def first_after(items: Iterable[T], date: str | None, number: int | None,
                when: Callable[[T], tuple[str, int | None]]) -> T | None:
    """The first of ``items`` (oldest first) that came after (``date``, ``number``): the fix
    of a finding is the first one later than the PR that introduced it."""
    after = (date or "", number or 0)
    for it in items:
        d, n = when(it)
        if (d, n or 0) > after:
            return it
    return None


def _level_set(text: str | None) -> list[str] | None:
    """A stored ``levels`` list; None when absent or not a readable JSON list."""
    if not text:
        return None
    try:
        got = json.loads(text)
    except ValueError:
        return None
    return [str(x) for x in got] if isinstance(got, list) else None


class GraphQueries(StoreBase):
    """SQL of the graph concern, mixed into :class:`prkb.store.Store`."""

    # --- PRs as graph nodes -------------------------------------------------------------

    def graph_prs(self) -> list[PrNode]:
        """Every stored PR and commit record, by id."""
        return [
            _pr_node(r)
            for r in self.conn.execute(f"SELECT {_PR_COLUMNS} FROM prs p ORDER BY p.id")
        ]

    def pr_records(self, containing: str | None = None) -> Iterator[tuple[PrNode, dict[str, Any]]]:
        """(PR, its stored record) of every PR, by id, read one at a time.

        ``containing``: only records whose JSON text contains that string (a cheap filter
        before decoding, e.g. ``'"lineage"'``).
        """
        sql = f"SELECT {_PR_COLUMNS}, p.raw FROM prs p"
        args: tuple[str, ...] = ()
        if containing is not None:
            sql += " WHERE p.raw LIKE ?"
            args = (f"%{containing}%",)
        for r in self.conn.execute(sql + " ORDER BY p.id", args):
            yield _pr_node(r), json_value(r["raw"], {})

    def state_change_rows(self, containing: str) -> list[tuple[PrNode, list[dict[str, Any]]]]:
        """(PR, its stored state changes) of the PRs whose analysis text contains
        ``containing`` (a cheap filter before decoding, e.g. ``'"stale"'``), by id."""
        out = []
        for r in self.conn.execute(
            f"SELECT {_PR_COLUMNS}, p.analysis FROM prs p WHERE p.analysis LIKE ?"
            " ORDER BY p.id", (f"%{containing}%",)
        ):
            got = json_value(r["analysis"], {}).get("state_changes")
            if isinstance(got, list):
                out.append((_pr_node(r), [c for c in got if isinstance(c, dict)]))
        return out

    def finding_windows(self, repo: str) -> list[tuple[tuple[str, str, str], str, str | None]]:
        """Each stored audit finding of ``repo`` as ((rule, file, class), the commit that
        introduced it, the first later commit that made it no longer hold or None), oldest
        first: the stretch of history in which a commit could fix it."""
        out = []
        for r in self.conn.execute(
            f"SELECT f.rule, f.file, f.class_name, f.commit_sha, {_PR_COLUMNS} FROM findings f"
            " JOIN prs p ON p.id = f.pr_id WHERE p.repo = ? AND f.commit_sha IS NOT NULL"
            " ORDER BY p.merged_at, p.id", (repo,),
        ):
            key = (str(r[0]), str(r[1] or ""), str(r[2]))
            intro = _pr_node(r, 4)
            fix = self.fixed_after(key, intro.date, intro.number)
            out.append((key, str(r[3]), fix.merge_commit_sha if fix is not None else None))
        return out

    def fixed_after(self, key: tuple[str, str, str], date: str | None,
                    number: int | None) -> PrNode | None:
        """The first PR or commit after (``date``, ``number``) whose change made finding
        ``key`` (rule, file, class) no longer hold; None while it still holds."""
        return first_after(self.finding_fixes().get(key, []), date, number,
                           lambda p: (p.date, p.number))

    def finding_fixes(self) -> dict[tuple[str, str, str], list[PrNode]]:
        """(rule, file, class) -> the PRs and commits whose change made that finding no longer
        hold (the audit at their parent had it, at their commit not), oldest first. Read once
        per state of the file (this connection's writes and other connections' commits)."""
        stamp = (self.conn.execute("PRAGMA data_version").fetchone()[0],
                 self.conn.total_changes)
        memo = getattr(self, "_fixes_memo", None)
        if memo is not None and memo[0] == stamp:
            return memo[1]
        out: dict[tuple[str, str, str], list[PrNode]] = {}
        for r in self.conn.execute(
            f"SELECT {_PR_COLUMNS}, p.analysis FROM prs p WHERE p.analysis LIKE ?",
            ('%"findings_fixed":[{%',),
        ):
            pr = _pr_node(r)
            for f in json_value(r["analysis"], {}).get("findings_fixed") or []:
                if isinstance(f, dict):
                    key = (str(f.get("rule")), str(f.get("file") or ""), str(f.get("class")))
                    out.setdefault(key, []).append(pr)
        for prs in out.values():
            prs.sort(key=lambda p: (p.date, p.number or 0))
        self._fixes_memo = (stamp, out)
        return out

    def pr_node_keys(self) -> list[tuple[int, str]]:
        """(prs.id, graph node key) of every stored record."""
        return [
            (int(r[0]), node_key(r[1], r[2]))
            for r in self.conn.execute("SELECT id, number, merge_commit_sha FROM prs")
        ]

    def merged_shas(self) -> dict[str, str]:
        """Merge commit sha -> graph node key, of every record with a merge commit."""
        return {
            str(r[1]): node_key(r[0], r[1])
            for r in self.conn.execute(
                "SELECT number, merge_commit_sha FROM prs WHERE merge_commit_sha IS NOT NULL"
            )
        }

    # --- declaration changes and files (the code side of the graph) ---------------------

    def declaration_rows(self, class_name: str | None = None) -> list[tuple[PrNode, SymbolChange]]:
        """Every stored declaration change (optionally of one class) with its PR, in the
        store's order (callers sort)."""
        sql = (
            f"SELECT {_SC_COLUMNS}, {_PR_COLUMNS} FROM symbol_changes s"
            " JOIN prs p ON p.id = s.pr_id"
        )
        args: tuple[Any, ...] = ()
        if class_name is not None:
            sql += " WHERE s.class_name = ?"
            args = (class_name,)
        return [(_pr_node(r, 9), _symbol_change(r)) for r in self.conn.execute(sql, args)]

    def symbol_changes_by_pr(self) -> list[tuple[int, SymbolChange]]:
        """(prs.id, change) of every stored declaration change, in the store's order."""
        return [(int(r[0]), _symbol_change(r))
                for r in self.conn.execute(f"SELECT {_SC_COLUMNS} FROM symbol_changes s")]

    def file_paths(self) -> dict[int, list[str]]:
        """prs.id -> the paths of its stored files (PRs without files are absent)."""
        out: dict[int, list[str]] = {}
        for r in self.conn.execute("SELECT pr_id, path FROM files"):
            out.setdefault(int(r[0]), []).append(str(r[1]))
        return out

    def declaration_changers(
        self, class_name: str, attrs: Iterable[str], file: str | None = None
    ) -> list[PrNode]:
        """The PRs that changed ``class_name``'s declaration of one of ``attrs`` (in ``file``
        when given: a builder is its file and class), newest end (merge, else close, else
        creation) first (a PR once per change)."""
        names = tuple(attrs)
        marks = ",".join("?" for _ in names)
        in_file = " AND s.file = ?" if file is not None else ""
        return [
            _pr_node(r)
            for r in self.conn.execute(
                f"""SELECT {_PR_COLUMNS} FROM symbol_changes s
                    JOIN prs p ON p.id = s.pr_id
                    WHERE s.class_name = ? AND s.attr IN ({marks}){in_file}
                    ORDER BY COALESCE(p.merged_at, p.closed_at, p.created_at, '') DESC,
                             p.id DESC""",
                (class_name, *names, *((file,) if file is not None else ())),
            )
        ]

    def known_classes(self) -> list[str]:
        """Every class with a stored declaration change or builder reading, sorted."""
        names = {r[0] for r in self.conn.execute("SELECT DISTINCT class_name FROM symbol_changes")}
        names |= {r[0] for r in self.conn.execute("SELECT DISTINCT class_name FROM builder_levels")}
        return sorted(names)

    # --- builder readings over time (the matrix) ----------------------------------------

    def level_readings(
        self, *, repo: str | None = None, class_name: str | None = None
    ) -> list[LevelReading]:
        """Stored builder readings (``builder_levels``), optionally of one repository or
        one class, by commit time, commit, class and file."""
        sql = """SELECT repo, commit_sha, committed_at, pr_ref, class_name, file, declared,
                        effective, dynamic, meets_rule, levels, level_text FROM builder_levels"""
        where, params = [], []
        if repo:
            where.append("repo = ?")
            params.append(repo)
        if class_name is not None:
            where.append("class_name = ?")
            params.append(class_name)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY committed_at, commit_sha, class_name, file"
        return [
            LevelReading(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]),
                None if r[9] is None else bool(r[9]), _level_set(r[10]), r[11],
            )
            for r in self.conn.execute(sql, params)
        ]

    # --- relations and nodes ------------------------------------------------------------

    def relations(self) -> list[Relation]:
        """Every stored relation, in the order they were first written."""
        return [
            Relation(r[0], r[1], r[2], r[3], r[4], r[5])
            for r in self.conn.execute(
                "SELECT source, target, type, evidence, confidence, origin FROM relations"
                " ORDER BY rowid"
            )
        ]

    def nodes(self) -> list[Node]:
        """Every row of ``nodes``, in the order they were first written."""
        return [
            Node(r[0], r[1], r[2], r[3], r[4])
            for r in self.conn.execute("SELECT key, kind, number, title, repo FROM nodes")
        ]

    def issue_keys(self) -> set[str]:
        """The keys of the issue nodes."""
        return {r[0] for r in self.conn.execute("SELECT key FROM nodes WHERE kind = 'issue'")}

    def node_count(self) -> int:
        """How many rows ``nodes`` has."""
        return int(self.conn.execute("SELECT count(*) FROM nodes").fetchone()[0])

    def sync_relations(self, relations: Iterable[Relation]) -> tuple[int, int]:
        """Make ``relations`` the stored set, writing only the rows that differ (so the change
        journal names just the relations that really changed). Call inside a transaction.
        Returns (rows deleted, rows inserted or updated)."""
        want = {(r.source, r.target, r.type): (r.evidence, r.confidence, r.origin)
                for r in relations}
        have = {
            (row[0], row[1], row[2]): (row[3], row[4], row[5])
            for row in self.conn.execute(
                "SELECT source, target, type, evidence, confidence, origin FROM relations"
            )
        }
        gone = [k for k in have if k not in want]
        changed = [(*k, *v) for k, v in want.items() if have.get(k) != v]
        self.conn.executemany(
            "DELETE FROM relations WHERE source=? AND target=? AND type=?", gone
        )
        self.conn.executemany(
            "INSERT INTO relations(source, target, type, evidence, confidence, origin)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(source, target, type) DO UPDATE SET"
            " evidence=excluded.evidence, confidence=excluded.confidence, origin=excluded.origin",
            changed,
        )
        return len(gone), len(changed)

    def sync_commit_nodes(self) -> None:
        """A ``commit:SHA`` node, titled, for every stored record without a PR number; a node's
        row is written only when its title or repository differs. Call inside a transaction."""
        for r in self.conn.execute(
            "SELECT number, merge_commit_sha, title, repo FROM prs WHERE number IS NULL"
        ).fetchall():
            self.conn.execute(
                "INSERT INTO nodes(key, kind, number, title, repo) VALUES (?, 'commit', NULL, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET title=excluded.title, repo=excluded.repo"
                " WHERE title IS NOT excluded.title OR repo IS NOT excluded.repo",
                (f"commit:{r['merge_commit_sha']}", r["title"], r["repo"]),
            )

    def add_nodes(self, nodes: Iterable[Node]) -> None:
        """Insert the nodes not stored yet (untitled), in the given order; keep the others.
        Call inside a transaction."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO nodes(key, kind, number, title, repo) VALUES (?,?,?,NULL,?)",
            [(n.key, n.kind, n.number, n.repo) for n in nodes],
        )

    def drop_orphan_nodes(self) -> int:
        """Delete untitled nodes that no relation names and that are no stored PR's node;
        returns how many went. Call inside a transaction."""
        cur = self.conn.execute(
            "DELETE FROM nodes WHERE title IS NULL"
            " AND key NOT IN (SELECT source FROM relations UNION SELECT target FROM relations)"
            " AND key NOT IN (SELECT 'pr:' || number FROM prs WHERE number IS NOT NULL)"
        )
        return int(cur.rowcount or 0)

    def set_tagged(self, code: str, pr_ids: set[int]) -> None:
        """Make risk tag ``code`` sit on exactly the PRs ``pr_ids`` (rows written only where
        that changes something). Call inside a transaction."""
        tagged = {int(row[0]) for row in self.conn.execute(
            "SELECT pr_id FROM risk_tags WHERE code = ?", (code,)
        )}
        self.conn.executemany(
            "DELETE FROM risk_tags WHERE pr_id = ? AND code = ?",
            [(i, code) for i in sorted(tagged - pr_ids)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO risk_tags(pr_id, code) VALUES (?, ?)",
            [(i, code) for i in sorted(pr_ids - tagged)],
        )


def _symbol_change(r: sqlite3.Row) -> SymbolChange:
    """The SymbolChange of a row whose first columns are ``_SC_COLUMNS``."""
    return SymbolChange(*r[1:9])
