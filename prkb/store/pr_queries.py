"""Readers and writers of PR records: ingest's writes, per-PR facts and raw records, builder
levels, collector cursors and mined commits, the HTTP cache.

The SQL of this concern lives here and nowhere else; the rest of prkb calls these methods.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any, cast

from ..errors import NotFound
from ..evidence import loads as evidence_items
from ..glossary import risk_tag
from ..models import Finding, KbSummary, StoredPr, SymbolChange
from .database import NEWEST_FIRST
from .graph_queries import GraphQueries
from .rows import in_chunks

# the columns of ``prs`` that ingest writes, in order (see :meth:`PrQueries.write_pr_row`)
PR_COLUMNS = (
    "repo", "ref", "number", "title", "body", "state", "author", "created_at", "updated_at",
    "closed_at", "merged_at", "merge_commit_sha", "url", "base_ref", "labels", "source", "raw",
    "raw_hash", "analysis",
)


class PrQueries(GraphQueries):
    """SQL of PR records, mixed into :class:`prkb.store.Store`."""

    # --- ingest's writes (call inside one transaction) --------------------------------------

    def stored_pr(self, repo: str, ref: str) -> StoredPr | None:
        """What ingest compares a record with: the stored row's id, content hash, updated_at."""
        row = self.conn.execute(
            "SELECT id, raw_hash, updated_at FROM prs WHERE repo=? AND ref=?", (repo, ref)
        ).fetchone()
        if row is None:
            return None
        return StoredPr(int(row["id"]), str(row["raw_hash"]), row["updated_at"])

    def stored_record(self, repo: str, ref: str) -> dict[str, Any] | None:
        """The snapshot record stored for ``ref`` of ``repo`` (None when there is none)."""
        row = self.conn.execute(
            "SELECT raw FROM prs WHERE repo=? AND ref=?", (repo, ref)
        ).fetchone()
        if row is None:
            return None
        rec: dict[str, Any] = json.loads(row["raw"])
        return rec

    def write_pr_row(self, cols: dict[str, Any], existing: StoredPr | None) -> int:
        """Insert the ``prs`` row (``cols`` keyed by :data:`PR_COLUMNS`), or update
        ``existing`` and drop its derived rows (files, symbol changes, risk tags, findings);
        returns the row id."""
        if existing is None:
            names = ", ".join(cols)
            marks = ", ".join("?" for _ in cols)
            cur = self.conn.execute(
                f"INSERT INTO prs ({names}) VALUES ({marks})", tuple(cols.values())
            )
            return int(cur.lastrowid or 0)
        pr_id = existing.id
        sets = ", ".join(f"{k}=?" for k in cols)
        self.conn.execute(f"UPDATE prs SET {sets} WHERE id=?", (*cols.values(), pr_id))
        for table in ("files", "symbol_changes", "risk_tags", "findings"):
            self.conn.execute(f"DELETE FROM {table} WHERE pr_id=?", (pr_id,))
        return pr_id

    def write_pr_files(self, pr_id: int, files: Sequence[dict[str, Any]]) -> None:
        """The record's files (snapshot shape: filename, status, counts, patch), in order."""
        self.conn.executemany(
            "INSERT INTO files(pr_id, seq, path, status, additions, deletions, patch,"
            " previous_path) VALUES (?,?,?,?,?,?,?,?)",
            [
                (pr_id, i, f["filename"], f["status"], f["additions"], f["deletions"],
                 f.get("patch"), f.get("previous_filename"))
                for i, f in enumerate(files)
            ],
        )

    def write_symbol_changes(self, pr_id: int, changes: Sequence[SymbolChange]) -> None:
        """The PR's declaration changes, in order."""
        self.conn.executemany(
            "INSERT INTO symbol_changes(pr_id, seq, file, class_name, attr, before, after,"
            " direction, before_attr, before_file) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (pr_id, i, c.file, c.class_name, c.attr, c.before, c.after, c.direction,
                 c.before_attr, c.before_file)
                for i, c in enumerate(changes)
            ],
        )

    def write_risk_tags(self, pr_id: int, codes: Iterable[str]) -> None:
        """The PR's risk tag codes (a repeated code is stored once)."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO risk_tags(pr_id, code) VALUES (?, ?)",
            [(pr_id, code) for code in codes],
        )

    def write_findings(self, pr_id: int, findings: Sequence[Finding]) -> None:
        """The PR's audit findings, in order."""
        self.conn.executemany(
            "INSERT INTO findings(pr_id, seq, rule, file, class_name, message_en, message_zh,"
            " commit_sha, severity) VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (pr_id, i, f.rule, f.file, f.class_name, f.message_en, f.message_zh, f.commit,
                 f.severity)
                for i, f in enumerate(findings)
            ],
        )

    def upsert_pr_node(self, number: int, title: str | None, repo: str) -> None:
        """The graph node ``pr:N`` of a stored PR (its kind, title and repository)."""
        self.conn.execute(
            "INSERT INTO nodes(key, kind, number, title, repo) VALUES (?, 'pr', ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET kind='pr', title=excluded.title, repo=excluded.repo"
            " WHERE kind IS NOT 'pr' OR title IS NOT excluded.title OR repo IS NOT excluded.repo",
            (f"pr:{number}", number, title, repo),
        )

    def write_builder_levels(
        self, repo: str, sha: str, when: str, ref: str, levels: Sequence[dict[str, Any]]
    ) -> None:
        """Replace the audit's builder levels at commit ``sha`` (``prkb.builder_levels`` items
        of a record: class, file, declared, effective, dynamic, meets_rule, levels,
        level_text). The same rows as stored are not written again (the change journal would
        name their classes, and the site would read every builder again)."""
        rows = [
            (
                repo, sha, when, ref, str(b.get("class")), str(b.get("file")),
                b.get("declared"), b.get("effective"), int(bool(b.get("dynamic"))),
                None if b.get("meets_rule") is None else int(bool(b.get("meets_rule"))),
                _level_list(b.get("levels")),
                None if b.get("level_text") is None else str(b.get("level_text")),
            )
            for b in levels
        ]
        columns = ("repo, commit_sha, committed_at, pr_ref, class_name, file, declared,"
                   " effective, dynamic, meets_rule, levels, level_text")
        stored = self.conn.execute(
            f"SELECT {columns} FROM builder_levels WHERE repo=? AND commit_sha=?", (repo, sha)
        ).fetchall()
        if sorted(map(tuple, stored), key=repr) == sorted(rows, key=repr):
            return
        self.conn.execute(
            "DELETE FROM builder_levels WHERE repo=? AND commit_sha=?", (repo, sha)
        )
        self.conn.executemany(
            f"INSERT OR REPLACE INTO builder_levels({columns}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )

    # --- collector bookkeeping --------------------------------------------------------------

    def mined_shas(self, repo: str) -> set[str]:
        """The commits of ``repo`` the git collector has mined."""
        return {
            str(r[0])
            for r in self.conn.execute("SELECT sha FROM mined_commits WHERE repo=?", (repo,))
        }

    def mark_mined(self, repo: str, sha: str, pr_ref: str) -> None:
        """Note that commit ``sha`` was mined into record ``pr_ref`` (call inside the
        transaction that writes the record)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO mined_commits(repo, sha, pr_ref) VALUES (?,?,?)",
            (repo, sha, pr_ref),
        )

    def merge_sha_of(self, repo: str, ref: str, *, from_git: bool = False) -> str | None:
        """The merge commit stored for record ``ref`` of ``repo`` (None: no such record, or
        it names no commit; with ``from_git``, also when the record was not collected from
        git: a GitHub record's commit is merged into, not claimed by, git's)."""
        sql = "SELECT merge_commit_sha FROM prs WHERE repo=? AND ref=?"
        if from_git:
            sql += " AND source IN ('git', 'git+github')"
        row = self.conn.execute(sql, (repo, ref)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    # --- what the knowledge base knows of a repository (GitHub discovery from git) ----------

    def collected_prs(self, repo: str) -> list[tuple[int, str, dict[str, Any]]]:
        """(number, source, stored record) of every numbered PR of ``repo``, by number."""
        return [
            (int(r["number"]), str(r["source"]), json.loads(r["raw"]))
            for r in self.conn.execute(
                "SELECT number, source, raw FROM prs WHERE repo=? AND number IS NOT NULL"
                " ORDER BY number", (repo,)
            )
        ]

    def linked_pr_numbers(self, numbers: Iterable[int]) -> set[int]:
        """PR numbers at the other end of a stored relation of any of ``numbers``."""
        keys = [f"pr:{int(n)}" for n in numbers]
        out: set[int] = set()
        for chunk, marks in in_chunks(keys):
            for src, dst in self.conn.execute(
                f"SELECT source, target FROM relations WHERE source IN ({marks})"
                f" OR target IN ({marks})", (*chunk, *chunk)
            ):
                for key in (str(src), str(dst)):
                    if key.startswith("pr:") and key[3:].isdigit():
                        out.add(int(key[3:]))
        return out - {int(n) for n in numbers}

    def declaring_paths(self, repo: str) -> set[str]:
        """Paths where ``repo``'s records saw a declaration: symbol changes' files (and the
        files a declaration moved from) and the builder levels' files."""
        out: set[str] = set()
        for a, b in self.conn.execute(
            "SELECT s.file, s.before_file FROM symbol_changes s JOIN prs p ON p.id=s.pr_id"
            " WHERE p.repo=?", (repo,)
        ):
            out.update(str(x) for x in (a, b) if x)
        out.update(
            str(r[0]) for r in self.conn.execute(
                "SELECT DISTINCT file FROM builder_levels WHERE repo=?", (repo,)
            ) if r[0]
        )
        return out

    def has_git_records(self, repo: str) -> bool:
        """Whether ``repo`` has records collected from git history."""
        row = self.conn.execute(
            "SELECT 1 FROM prs WHERE repo=? AND source IN ('git', 'git+github') LIMIT 1", (repo,)
        ).fetchone()
        return row is not None

    def cached_page(self, url: str) -> tuple[str, str] | None:
        """(etag, body) of a cached HTTP page, None when not cached or without an ETag."""
        row = self.conn.execute(
            "SELECT etag, body FROM http_cache WHERE url=?", (url,)
        ).fetchone()
        if row is None or not row["etag"]:
            return None
        return str(row["etag"]), str(row["body"])

    def cache_page(self, url: str, etag: str, body: str) -> None:
        """Cache one page's ETag and body, stamped now (call inside the transaction that
        records what the page was used for)."""
        self.conn.execute(
            "INSERT INTO http_cache(url, etag, last_modified, body, fetched_at)"
            " VALUES (?,?,?,?,?) ON CONFLICT(url) DO UPDATE SET etag=excluded.etag,"
            " body=excluded.body, fetched_at=excluded.fetched_at",
            (url, etag, None, body, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        )

    # --- whole-KB readers -------------------------------------------------------------------

    def prs_for_export(self) -> list[sqlite3.Row]:
        """Every ``prs`` row, by repository, number and ref (the order of an export)."""
        return self.conn.execute(
            "SELECT * FROM prs ORDER BY repo, COALESCE(number, 0), ref"
        ).fetchall()

    def kb_summary(self) -> KbSummary:
        """Counts of what the knowledge base holds (``prkb demo``'s summary)."""
        c = self.conn
        first, last = c.execute(
            "SELECT min(COALESCE(merged_at, created_at)), max(COALESCE(merged_at, created_at))"
            " FROM prs"
        ).fetchone()
        return KbSummary(
            prs=int(c.execute("SELECT count(*) FROM prs").fetchone()[0]),
            changes=int(c.execute("SELECT count(*) FROM symbol_changes").fetchone()[0]),
            classes=int(
                c.execute("SELECT count(DISTINCT class_name) FROM symbol_changes").fetchone()[0]
            ),
            findings=int(c.execute("SELECT count(*) FROM findings").fetchone()[0]),
            relations=int(c.execute("SELECT count(*) FROM relations").fetchone()[0]),
            first=first,
            last=last,
            by_direction=[
                (str(d), int(n))
                for d, n in c.execute(
                    "SELECT direction, count(*) FROM symbol_changes GROUP BY direction"
                    " ORDER BY 2 DESC"
                )
            ],
        )

    # --- reading back -----------------------------------------------------------------------

    def pr_facts(self, ref: str | int, repo: str | None = None) -> dict[str, Any]:
        """The facts of one PR in the shape ``prkb show --json`` prints; NotFound if absent."""
        return self.pr_row_and_facts(ref, repo)[1]

    def pr_row_and_facts(
        self, ref: str | int, repo: str | None = None
    ) -> tuple[sqlite3.Row, dict[str, Any]]:
        """The ``prs`` row of one PR and its facts (:meth:`pr_facts`); NotFound if absent."""
        row = self.pr_row(ref, repo)
        if row is None:
            raise NotFound(f"no PR {str(ref).lstrip('#')} in the knowledge base {self.path}")
        return row, self.facts_from_row(row)

    def pr_listing(self) -> list[dict[str, object]]:
        """Every PR as ``prkb list`` shows it, newest first (the order of ``all_prs``): number,
        ref, title, state, created/closed/merged times, its declaration changes (class,
        before, after, direction, in the PR's order) and its risk tag codes. Three reads in
        one snapshot, however many PRs (``facts_from_row`` per PR: five reads each)."""
        changes: dict[int, list[dict[str, object]]] = {}
        tags: dict[int, list[str]] = {}
        with self.read_snapshot():
            for pr_id, cls, before, after, direction in self._tuples(
                    "SELECT pr_id, class_name, before, after, direction FROM symbol_changes"
                    " ORDER BY pr_id, seq"):
                changes.setdefault(cast(int, pr_id), []).append(
                    {"class": cls, "before": before, "after": after, "direction": direction})
            for pr_id, code in self._tuples("SELECT pr_id, code FROM risk_tags ORDER BY rowid"):
                tags.setdefault(cast(int, pr_id), []).append(cast(str, code))
            rows = list(self._tuples(
                "SELECT id, number, ref, title, state, created_at, closed_at, merged_at FROM prs"
                f" ORDER BY {NEWEST_FIRST}"))
        return [
            {"number": number, "ref": ref, "title": title, "state": state,
             "created_at": created, "closed_at": closed, "merged_at": merged,
             "symbol_changes": changes.get(cast(int, pr_id), []),
             "risk_tags": tags.get(cast(int, pr_id), [])}
            for pr_id, number, ref, title, state, created, closed, merged in rows
        ]

    def facts_from_row(self, row: sqlite3.Row) -> dict[str, Any]:
        """The facts (``prkb show --json`` shape) of one ``prs`` row."""
        return self.facts_from_rows([row])[0]

    def pr_rows_by_id(self, ids: Iterable[int]) -> dict[int, sqlite3.Row]:
        """The ``prs`` rows of the row ids ``ids`` (the ones that exist), by id."""
        out: dict[int, sqlite3.Row] = {}
        for chunk, marks in in_chunks(sorted(set(ids))):
            for r in self.conn.execute(f"SELECT * FROM prs WHERE id IN ({marks})", chunk):
                out[int(r["id"])] = r
        return out

    def facts_from_rows(self, rows: Sequence[sqlite3.Row]) -> list[dict[str, Any]]:
        """The facts of each ``prs`` row of ``rows``, in their order (:meth:`facts_from_row`):
        one read of each table for them all, a few hundred PRs a query, not five per PR."""
        ids = [int(r["id"]) for r in rows]
        files: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
        changes: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
        tags: dict[int, list[dict[str, str]]] = {i: [] for i in ids}
        findings: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
        # plain tuples of named columns (a third of the cost of sqlite3.Row read by name)
        tuples = self.conn.cursor()
        tuples.row_factory = None
        for chunk, marks in in_chunks(sorted(set(ids))):
            for pr_id, path, status, additions, deletions, previous in tuples.execute(
                    "SELECT pr_id, path, status, additions, deletions, previous_path FROM files"
                    f" WHERE pr_id IN ({marks}) ORDER BY pr_id, seq", chunk):
                files[pr_id].append(
                    {"path": path, "status": status, "additions": additions,
                     "deletions": deletions, "previous_path": previous})
            for (pr_id, file, cls, attr, before, after, direction, before_attr,
                 before_file) in tuples.execute(
                    "SELECT pr_id, file, class_name, attr, before, after, direction,"
                    " before_attr, before_file FROM symbol_changes"
                    f" WHERE pr_id IN ({marks}) ORDER BY pr_id, seq", chunk):
                changes[pr_id].append(
                    {"file": file, "class": cls, "attr": attr, "before": before,
                     "after": after, "direction": direction, "before_attr": before_attr,
                     "before_file": before_file})
            for pr_id, code in tuples.execute(
                    f"SELECT pr_id, code FROM risk_tags WHERE pr_id IN ({marks})"
                    " ORDER BY pr_id, rowid", chunk):
                tags[pr_id].append(risk_tag(code).to_json())
            for r in self.conn.execute(
                    f"SELECT * FROM findings WHERE pr_id IN ({marks}) ORDER BY pr_id, seq",
                    chunk):
                findings[int(r["pr_id"])].append(self.finding_json(r))
        keys = [self.node_key_of(r) for r in rows]
        relations = self._relations_of(keys)
        return [self._facts(row, files[i], changes[i], tags[i], findings[i], relations[key])
                for row, i, key in zip(rows, ids, keys, strict=True)]

    @staticmethod
    def node_key_of(row: sqlite3.Row) -> str:
        """The graph node key of a ``prs`` row: ``pr:N``, or ``commit:SHA`` without a number."""
        return (f"pr:{row['number']}" if row["number"] is not None
                else f"commit:{row['merge_commit_sha']}")

    def _relations_of(self, keys: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The relations of each graph node of ``keys`` seen from it (``direction`` out when
        it is the source), each node's in the order of type, source and target."""
        out: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
        for chunk, marks in in_chunks(sorted(set(keys))):
            wanted = set(chunk)
            for r in self.conn.execute(
                f"SELECT * FROM relations WHERE source IN ({marks}) OR target IN ({marks})"
                " ORDER BY type, source, target", (*chunk, *chunk),
            ):
                source, target = r["source"], r["target"]
                for key, out_dir in ((source, True), (target, False)):
                    if key not in wanted or (not out_dir and target == source):
                        continue
                    out[key].append({
                        "type": r["type"],
                        "other": _other(target if out_dir else source),
                        "direction": "out" if out_dir else "in",
                        "evidence": evidence_items(r["evidence"]),
                        "confidence": r["confidence"],
                        "origin": r["origin"],
                    })
        return out

    def _facts(
        self, row: sqlite3.Row, files: list[dict[str, Any]], changes: list[dict[str, Any]],
        tags: list[dict[str, str]], findings: list[dict[str, Any]],
        relations: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """One PR's facts from its row and what the bulk reads found of it."""
        analysis = json.loads(row["analysis"] or "{}")
        for f in findings:  # the later commit that made each no longer hold (None: it holds)
            fix = self.fixed_after((f["rule"], f["file"] or "", f["class"]),
                                   row["merged_at"] or row["closed_at"] or row["created_at"],
                                   row["number"])
            f["fixed_by"] = None if fix is None else {
                "ref": fix.ref, "number": fix.number, "commit": fix.merge_commit_sha,
                "date": fix.date}
        return {
            "repo": row["repo"],
            "ref": row["ref"],
            "number": row["number"],
            "title": row["title"],
            "state": row["state"],
            "author": row["author"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "closed_at": row["closed_at"],
            "merged_at": row["merged_at"],
            "merge_commit_sha": row["merge_commit_sha"],
            "url": row["url"],
            "source": row["source"],
            "labels": json.loads(row["labels"] or "[]"),
            "files": files,
            "symbol_changes": changes,
            "tests_touched": analysis.get("tests_touched", []),
            "platforms": analysis.get("platforms", []),
            "core_paths": analysis.get("core_paths", []),
            "notes": analysis.get("notes", []),
            "state_changes": analysis.get("state_changes"),
            "reads": analysis.get("reads"),
            "framework": analysis.get("framework"),
            "state_changes_unknown": (
                None if analysis.get("state_changes") is not None
                else state_unknown_reason(row["source"])),
            "risk_tags": tags,
            "findings": findings,
            "relations": relations,
        }

    @staticmethod
    def finding_json(r: sqlite3.Row) -> dict[str, Any]:
        """A ``findings`` row in the shape of ``prkb show --json``."""
        return {
            "rule": r["rule"],
            "file": r["file"],
            "class": r["class_name"],
            "message_en": r["message_en"],
            "message_zh": r["message_zh"],
            "commit": r["commit_sha"],
        }

    @staticmethod
    def raw_record(row: sqlite3.Row) -> dict[str, Any]:
        """The snapshot-shaped record a ``prs`` row was stored from."""
        rec: dict[str, Any] = json.loads(row["raw"])
        return rec


def state_unknown_reason(source: str | None) -> str:
    """Why a PR has no state change: the code's state is read from a clone, at the PR's
    commit and its first parent, by ``prkb collect git`` (with its audit)."""
    if source in ("git", "git+github"):
        return ("unknown: the consistency audit did not run for this commit (--no-audit, a "
                "profile without [audit], or a record collected before prkb read the state)")
    return (f"unknown: the clone is not known (collected from {source or 'an import'}; "
            "prkb collect git reads the state)")


def _other(key: str) -> int | str:
    if key.startswith("pr:") and key[3:].isdigit():
        return int(key[3:])
    return key


def _level_list(value: Any) -> str | None:
    """The stored form of a row's ``levels``: a JSON list of strings (None when absent)."""
    if not isinstance(value, list):
        return None
    return json.dumps([str(v) for v in value], ensure_ascii=False)
