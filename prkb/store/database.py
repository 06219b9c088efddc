"""The SQLite knowledge base: schema by named migrations, idempotent upserts, queries.

One file, WAL mode. Every write for one PR (or one mined commit) is one transaction, so a
run killed at any point leaves whole records only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, cast

from ..errors import Damaged, InputError, PrkbError, ReadOnly

JOURNAL_KEEP = 500_000  # journal rows kept by prune_journal (about 25 MB)

# What each journalled table's rows are about: (table, kind, key columns).
_JOURNALLED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("prs", "pr", ("id",)),
    ("files", "pr", ("pr_id",)),
    ("symbol_changes", "pr", ("pr_id",)),
    ("risk_tags", "pr", ("pr_id",)),
    ("findings", "pr", ("pr_id",)),
    ("relations", "node", ("source", "target")),
    ("nodes", "node", ("key",)),
    ("builder_levels", "class", ("class_name",)),
)


def _journal_sql() -> str:
    """The change journal: triggers note which PR, graph node or builder class a write touched.

    ``kb_journal`` is append-only; a row is not repeated when the newest row already names the
    same thing (the rows of one ingest collapse into one). Each row carries a random nonce, so
    a reader that remembers (seq, nonce) can tell the same history from a copied or restored
    file whose sequence numbers mean other changes. Consumers (the site build) read what
    changed since their cursor instead of re-reading everything.
    """
    lines = [
        "CREATE TABLE kb_journal (",
        "    seq INTEGER PRIMARY KEY AUTOINCREMENT,",
        "    kind TEXT NOT NULL,            -- pr (prs.id), node (node key), class (builder class)",
        "    key TEXT NOT NULL,",
        "    nonce TEXT NOT NULL",
        ");",
        # a first row, so that a cursor always names a row (a file migrated with data in it)
        "INSERT INTO kb_journal(kind, key, nonce)"
        " VALUES ('kb', 'journal', lower(hex(randomblob(8))));",
    ]
    for table, kind, cols in _JOURNALLED:
        for event, rows in (("INSERT", ("NEW",)), ("UPDATE", ("NEW", "OLD")),
                            ("DELETE", ("OLD",))):
            body = " ".join(
                f"INSERT INTO kb_journal(kind, key, nonce) SELECT '{kind}', {row}.{col},"
                f" lower(hex(randomblob(8))) WHERE NOT EXISTS (SELECT 1 FROM kb_journal"
                f" WHERE seq = (SELECT max(seq) FROM kb_journal) AND kind = '{kind}'"
                f" AND key = CAST({row}.{col} AS TEXT));"
                for row in rows
                for col in cols
            )
            lines.append(
                f"CREATE TRIGGER kb_journal_{table}_{event.lower()} AFTER {event} ON {table}"
                f" BEGIN {body} END;"
            )
    return "\n".join(lines) + "\n"


# Named migrations, applied in order, each once. Never edit a released one: add a new one.
MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE prs (
            id INTEGER PRIMARY KEY,
            repo TEXT NOT NULL,
            ref TEXT NOT NULL,             -- "47144", or "sha:<40 hex>" for a commit with no PR
            number INTEGER,
            title TEXT NOT NULL DEFAULT '',
            body TEXT,
            state TEXT NOT NULL DEFAULT 'merged',
            author TEXT,
            created_at TEXT,
            updated_at TEXT,
            closed_at TEXT,
            merged_at TEXT,
            merge_commit_sha TEXT,
            url TEXT,
            base_ref TEXT,
            labels TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL,
            raw TEXT NOT NULL,             -- the snapshot-shaped record, canonical JSON
            raw_hash TEXT NOT NULL,
            analysis TEXT NOT NULL DEFAULT '{}',
            UNIQUE (repo, ref)
        );
        CREATE INDEX prs_number ON prs(number);
        CREATE INDEX prs_merge_sha ON prs(merge_commit_sha);
        CREATE TABLE files (
            pr_id INTEGER NOT NULL REFERENCES prs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            path TEXT NOT NULL,
            status TEXT NOT NULL,
            additions INTEGER NOT NULL DEFAULT 0,
            deletions INTEGER NOT NULL DEFAULT 0,
            patch TEXT,
            previous_path TEXT,
            PRIMARY KEY (pr_id, seq)
        );
        CREATE TABLE symbol_changes (
            pr_id INTEGER NOT NULL REFERENCES prs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            file TEXT NOT NULL,
            class_name TEXT NOT NULL,
            attr TEXT NOT NULL,
            before TEXT,
            after TEXT,
            direction TEXT NOT NULL,
            before_attr TEXT,
            PRIMARY KEY (pr_id, seq)
        );
        CREATE INDEX symbol_changes_class ON symbol_changes(class_name);
        CREATE TABLE risk_tags (
            pr_id INTEGER NOT NULL REFERENCES prs(id) ON DELETE CASCADE,
            code TEXT NOT NULL,
            PRIMARY KEY (pr_id, code)
        );
        CREATE TABLE findings (
            pr_id INTEGER NOT NULL REFERENCES prs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            rule TEXT NOT NULL,
            file TEXT NOT NULL,
            class_name TEXT NOT NULL,
            message_en TEXT NOT NULL,
            message_zh TEXT NOT NULL,
            commit_sha TEXT,
            severity TEXT NOT NULL DEFAULT 'error',
            PRIMARY KEY (pr_id, seq)
        );
        CREATE TABLE relations (
            source TEXT NOT NULL,          -- node key: pr:N, issue:N, commit:SHA, ext:owner/repo#N
            target TEXT NOT NULL,
            type TEXT NOT NULL,
            evidence TEXT NOT NULL DEFAULT '',
            confidence REAL NOT NULL DEFAULT 0.5,
            origin TEXT NOT NULL DEFAULT 'text',
            PRIMARY KEY (source, target, type)
        );
        CREATE TABLE nodes (
            key TEXT PRIMARY KEY,
            kind TEXT NOT NULL,            -- pr, issue, commit, external
            number INTEGER,
            title TEXT,
            repo TEXT
        );
        CREATE TABLE mined_commits (     -- every commit the git collector has looked at
            repo TEXT NOT NULL,
            sha TEXT NOT NULL,
            pr_ref TEXT,
            PRIMARY KEY (repo, sha)
        );
        CREATE TABLE collect_state (     -- cursors of collectors: last mined tip, last update seen
            source TEXT NOT NULL,
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (source, scope, key)
        );
        CREATE TABLE builder_levels (    -- the audit's reading of each builder at a mined commit
            repo TEXT NOT NULL,
            commit_sha TEXT NOT NULL,
            committed_at TEXT NOT NULL,
            pr_ref TEXT,
            class_name TEXT NOT NULL,
            file TEXT NOT NULL,
            declared TEXT,
            effective TEXT,
            dynamic INTEGER NOT NULL DEFAULT 0,
            spec_ready INTEGER,
            PRIMARY KEY (repo, commit_sha, class_name, file)
        );
        CREATE TABLE http_cache (        -- conditional-request cache of the GitHub collector
            url TEXT PRIMARY KEY,
            etag TEXT,
            last_modified TEXT,
            body TEXT NOT NULL,
            fetched_at TEXT NOT NULL
        );
        CREATE TABLE digest_ledger (     -- one row per (week, recipient) the SMTP server accepted
            week TEXT NOT NULL,
            recipient TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sent_at TEXT NOT NULL,
            PRIMARY KEY (week, recipient)
        );
        """,
    ),
    (
        "0002_lookup_indexes",
        """
        -- pr_row(ref) and a node's incoming relations: without these, each is a full scan,
        -- and one report per PR (the site) turns quadratic in the number of PRs
        CREATE INDEX IF NOT EXISTS prs_ref ON prs(ref);
        CREATE INDEX IF NOT EXISTS relations_target ON relations(target);
        """,
    ),
    ("0003_change_journal", _journal_sql()),
    (
        "0004_date_indexes",
        """
        -- a week's PRs (digest, site digest pages): one indexed range per date column
        CREATE INDEX IF NOT EXISTS prs_created_at ON prs(created_at);
        CREATE INDEX IF NOT EXISTS prs_merged_at ON prs(merged_at);
        CREATE INDEX IF NOT EXISTS prs_closed_at ON prs(closed_at);
        """,
    ),
    (
        "0005_builder_level_sets",
        """
        -- the levels a builder can report (a JSON list: branches of a conditional value, or
        -- what an overriding support method returns) and the same with their conditions
        ALTER TABLE builder_levels ADD COLUMN levels TEXT;
        ALTER TABLE builder_levels ADD COLUMN level_text TEXT;
        """,
    ),
    (
        "0006_symbol_moves",
        """
        -- a class that moved to another file keeps its value: the file it left
        ALTER TABLE symbol_changes ADD COLUMN before_file TEXT;
        """,
    ),
    (
        "0007_kb_meta",
        """
        -- what this knowledge base is: the profile its facts were derived with
        -- (profile.name, profile.source, profile.hash)
        CREATE TABLE IF NOT EXISTS kb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ),
    (
        "0008_evidence_items",
        """
        -- relation evidence is a JSON list of items, each with a kind (prkb/evidence.py).
        -- Text stored before that becomes one "legacy" item (shown as a quote), no text an
        -- empty list. prkb rebuild derives the items anew.
        UPDATE relations SET evidence = CASE WHEN evidence = '' THEN '[]'
            ELSE json_array(json_object('kind', 'legacy', 'text', evidence)) END
            WHERE NOT (json_valid(evidence) AND json_type(evidence) = 'array');
        """,
    ),
    (
        "0009_rule_reading",
        """
        -- the audit rule's reading of a class is "meets_rule" for every profile (it was
        -- "spec_ready", the CUDA-graph rule's word); the stored records say it the same way
        -- (in the canonical JSON of prs.raw a quoted name followed by ':' is only ever a key)
        ALTER TABLE builder_levels RENAME COLUMN spec_ready TO meets_rule;
        UPDATE prs SET raw = replace(raw, '"spec_ready":', '"meets_rule":')
            WHERE instr(raw, '"spec_ready":') > 0;
        """,
    ),
]


@dataclass(frozen=True)
class ProfileBinding:
    """The profile a knowledge base's facts were derived with: its name, how it was named
    (a bundled name or a file path) and the sha256 of its text."""

    name: str
    source: str
    hash: str
    # the version of prkb's derivation of facts they were made with (``ingest.ANALYSIS``);
    # "" for a knowledge base from before prkb recorded it
    analysis: str = ""


def is_damage(e: sqlite3.DatabaseError) -> bool:
    """Whether a database error means a damaged file: any but an operational error, or one
    that says so (a malformed image, text a damaged page made undecodable)."""
    if not isinstance(e, sqlite3.OperationalError):
        return True
    text = str(e)
    return "malformed" in text or "Could not decode to UTF-8" in text


def damaged(path: Path, detail: object) -> Damaged:
    """The one message for a damaged knowledge base file: what failed and what to do."""
    text = " ".join(str(detail).replace("*** in database main ***", "").split())
    detail = text if len(text) <= 160 else text[:157] + "..."
    return Damaged(
        f"knowledge base {path} is damaged ({detail}); nothing was written to it. Check it "
        f"with: sqlite3 {path} 'PRAGMA integrity_check', or rebuild it from a 'prkb export' "
        "file with 'prkb import' into a new file"
    )


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8", "surrogatepass")).hexdigest()


# the order in which every listing of PRs shows them: newest first (its merge, else close,
# else creation time), then by number
NEWEST_FIRST = "COALESCE(merged_at, closed_at, created_at, '') DESC, number DESC"


class StoreBase:
    """A connection to one knowledge base file: schema, transactions, state, journal.

    :class:`prkb.store.Store` adds the typed readers and writers of each concern.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise InputError(f"knowledge base {self.path} is a directory, not a SQLite file")
        memory = str(self.path) == ":memory:"
        if not memory and not self.path.parent.exists():
            raise InputError(f"knowledge base folder {self.path.parent} does not exist")
        folder = self.path.parent if str(self.path.parent) else Path(".")
        #: opened read-only: its folder (or the file) is not writable. Reading commands work;
        #: the first write says so (:meth:`transaction`).
        self.readonly = not memory and not (
            os.access(folder, os.W_OK)
            and (not self.path.exists() or os.access(self.path, os.W_OK))
        )
        if self.readonly and not self.path.exists():
            raise InputError(
                f"cannot create knowledge base {self.path}: its folder {folder} is read-only"
            )
        self._checked = memory  # integrity checked before the first write (new files: no need)
        self._binding: ProfileBinding | None = None  # recorded with the first write
        try:
            self.conn = self._connect(timeout)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.readonly:
                self.wal = self.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            else:
                mode = self._wal_mode(timeout)
                self.wal = mode == "wal"
                self.conn.execute("PRAGMA synchronous = NORMAL")
            self.migrate()
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise
            raise PrkbError(f"knowledge base {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise damaged(self.path, e) from None

    def _wal_mode(self, timeout: float) -> str:
        """Switch the file to WAL. Several processes opening a new file at once race for the
        lock the switch needs, and SQLite may answer "database is locked" at once, without
        waiting for the busy timeout: try again until the timeout has passed."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return str(self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def _connect(self, timeout: float) -> sqlite3.Connection:
        if not self.readonly:
            return sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        # WAL needs a -shm file beside the database: in a read-only folder, open the file
        # read-only, and if SQLite still cannot (no -shm there), as immutable (nobody can
        # write into that folder while we read)
        uri = self.path.resolve().as_uri()
        try:
            conn = sqlite3.connect(
                f"{uri}?mode=ro", timeout=timeout, isolation_level=None, uri=True
            )
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            return sqlite3.connect(
                f"{uri}?immutable=1", timeout=timeout, isolation_level=None, uri=True
            )

    # --- schema ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations"
            " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
        applied = []
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            if self.readonly:
                raise ReadOnly(
                    f"knowledge base {self.path} is read-only and was made by an older prkb "
                    f"(it needs migration {name}): copy it to a writable folder once"
                )
            with self.transaction():
                done_now = self.conn.execute(
                    "SELECT 1 FROM migrations WHERE name = ?", (name,)
                ).fetchone()
                if done_now:  # another process got there first
                    continue
                for stmt in _split_sql(sql):
                    self.conn.execute(stmt)
                self.conn.execute(
                    "INSERT INTO migrations(name, applied_at) VALUES (?, ?)",
                    (name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
                )
            applied.append(name)
        return applied

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM migrations ORDER BY name")]

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; rolled back on any exception.

        A read-only knowledge base refuses here, with one line; before the first write of a
        connection the file's structure is checked (``PRAGMA quick_check``), so prkb never
        writes into a damaged file.
        """
        if self.readonly:
            raise ReadOnly(
                f"knowledge base {self.path} is read-only (its folder or the file is not "
                "writable): reading commands work on it; to write, copy it to a writable "
                "folder or make the folder writable"
            )
        if not self._checked:
            self.check_integrity()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if self._binding is not None:  # the first write records the profile, if unrecorded
                self._record_profile(self._binding)
                self._binding = None
            yield self.conn
        except sqlite3.DatabaseError as e:
            self.conn.execute("ROLLBACK")
            if not is_damage(e):
                raise
            raise damaged(self.path, e) from None
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def check_integrity(self) -> None:
        """``PRAGMA quick_check``: raise :func:`damaged` unless the file is sound."""
        try:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as e:
            if not is_damage(e):
                raise
            raise damaged(self.path, e) from None
        if rows != ["ok"]:
            more = f" and {len(rows) - 1} more problems" if len(rows) > 1 else ""
            raise damaged(self.path, f"{rows[0]}{more}")
        self._checked = True

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the profile ------------------------------------------------------------------------

    def bind_profile(self, binding: ProfileBinding) -> None:
        """Record ``binding`` with this connection's first write, unless one is recorded."""
        self._binding = binding

    def set_profile(self, binding: ProfileBinding) -> None:
        """Record ``binding`` now, replacing any (``prkb rebuild``; call in a transaction)."""
        self.conn.execute("DELETE FROM kb_meta WHERE key LIKE 'profile.%'")
        self._record_profile(binding)

    def _record_profile(self, b: ProfileBinding) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO kb_meta(key, value) VALUES (?, ?)",
            [("profile.name", b.name), ("profile.source", b.source), ("profile.hash", b.hash),
             ("profile.analysis", b.analysis)],
        )

    @staticmethod
    def peek_profile(path: str | Path) -> ProfileBinding | None:
        """The profile recorded in the knowledge base at ``path``, read without creating,
        migrating or locking anything; None when there is no such file or no record."""
        p = Path(path)
        if str(p) == ":memory:" or not p.is_file():
            return None
        try:
            conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error:
            return None
        try:
            rows = dict(conn.execute(
                "SELECT key, value FROM kb_meta WHERE key LIKE 'profile.%'"
            ).fetchall())
        except sqlite3.Error:
            return None
        finally:
            conn.close()
        if "profile.name" not in rows:
            return None
        return ProfileBinding(rows["profile.name"], rows.get("profile.source", ""),
                              rows.get("profile.hash", ""), rows.get("profile.analysis", ""))

    # --- state ----------------------------------------------------------------------------

    def get_state(self, source: str, scope: str, key: str) -> str | None:
        row = self.conn.execute(
            "SELECT value FROM collect_state WHERE source=? AND scope=? AND key=?",
            (source, scope, key),
        ).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, source: str, scope: str, key: str, value: str) -> None:
        """Call inside a transaction that also writes what the state describes."""
        self.conn.execute(
            "INSERT INTO collect_state(source, scope, key, value) VALUES (?,?,?,?) "
            "ON CONFLICT(source, scope, key) DO UPDATE SET value=excluded.value",
            (source, scope, key, value),
        )

    def forget_git_cursors(self) -> None:
        """Unmark every mined commit and drop the git collector's cursors, so the next
        ``collect git`` mines the whole history again (call inside a transaction). Where each
        repository's clone is (``clone``) is kept: the stored records' code still comes from
        it, and reports read the changed classes from its files."""
        self.conn.execute("DELETE FROM mined_commits")
        self.conn.execute("DELETE FROM collect_state WHERE source = 'git' AND key != 'clone'")

    # --- queries --------------------------------------------------------------------------

    def pr_row(self, ref: str | int, repo: str | None = None) -> sqlite3.Row | None:
        ref = str(ref).lstrip("#")
        if repo:
            rows = self.conn.execute(
                "SELECT * FROM prs WHERE repo=? AND ref=?", (repo, ref)
            ).fetchall()
        else:
            rows = self.conn.execute("SELECT * FROM prs WHERE ref=?", (ref,)).fetchall()
        if not rows and len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref.lower()):
            rows = self.conn.execute(
                "SELECT * FROM prs WHERE ref LIKE ? OR merge_commit_sha LIKE ?",
                (f"sha:{ref.lower()}%", f"{ref.lower()}%"),
            ).fetchall()
        return rows[0] if rows else None

    def all_prs(self) -> list[sqlite3.Row]:
        return self.conn.execute(f"SELECT * FROM prs ORDER BY {NEWEST_FIRST}").fetchall()

    def _tuples(self, sql: str) -> Iterator[tuple[object, ...]]:
        """The rows of ``sql`` as plain tuples (several times cheaper than ``sqlite3.Row`` by
        name, for the bulk readers of every concern)."""
        cur = self.conn.cursor()
        cur.row_factory = None
        return cast(Iterator[tuple[object, ...]], cur.execute(sql))

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same state of the file (WAL: a
        consistent snapshot while collectors may write). Inside a transaction already, the
        reads join it."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    # --- change journal -------------------------------------------------------------------

    def change_cursor(self) -> tuple[int, str]:
        """Where the change journal stands: (seq, nonce) of its newest row, (0, "") if none."""
        row = self.conn.execute(
            "SELECT seq, nonce FROM kb_journal ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return (0, "") if row is None else (int(row[0]), str(row[1]))

    def changes_since(
        self, cursor: tuple[int, str] | list[Any] | None
    ) -> dict[str, set[str]] | None:
        """What writes touched after ``cursor`` (a value of :meth:`change_cursor`), by kind
        (``pr``: prs.id as text, ``node``: node key, ``class``: builder class), and what the
        cursor's own row names: a write of the same thing as the newest row adds no row (the
        writes of one ingest collapse into one), so a write made after the cursor was taken
        may be in that row; it is read again (at worst one thing named twice).

        None when the cursor does not belong to this file's history (another or a restored
        knowledge base, a pruned journal): the caller must then assume everything changed.
        """
        try:
            seq, nonce = int(cursor[0]), str(cursor[1])  # type: ignore[index]
        except (TypeError, ValueError, IndexError):
            return None
        if seq <= 0:
            return None
        row = self.conn.execute("SELECT nonce FROM kb_journal WHERE seq = ?", (seq,)).fetchone()
        if row is None or row[0] != nonce:
            return None
        out: dict[str, set[str]] = {"pr": set(), "node": set(), "class": set()}
        for kind, key in self.conn.execute(
            "SELECT kind, key FROM kb_journal WHERE seq >= ?", (seq,)
        ):
            if kind != "kb":  # the journal's own first row
                out.setdefault(str(kind), set()).add(str(key))
        return out

    def prune_journal(self, keep: int = JOURNAL_KEEP) -> int:
        """Drop all but the newest ``keep`` journal rows; returns how many went. A reader whose
        cursor is older than what is left gets None from :meth:`changes_since` (and rebuilds
        from everything), so this never makes a reader miss a change."""
        cur = self.conn.execute(
            "DELETE FROM kb_journal WHERE seq <= (SELECT max(seq) FROM kb_journal) - ?",
            (max(1, int(keep)),),
        )
        return int(cur.rowcount or 0)

    def integrity_ok(self) -> bool:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _split_sql(sql: str) -> list[str]:
    parts = []
    buf: list[str] = []
    for line in sql.splitlines():
        code = line.split("--", 1)[0]
        buf.append(code)
        if code.rstrip().endswith(";"):
            stmt = "\n".join(buf).strip()
            if stmt.strip(";").strip():
                parts.append(stmt)
            buf = []
    tail = "\n".join(buf).strip()
    if tail:
        parts.append(tail)
    return parts
