"""The knowledge base's change journal: what a write touched, read back by a cursor."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from kbrecords import github_pr

from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.store import MIGRATIONS, Store

PROFILE = load_profile(None)


def _newest(store: Store) -> tuple[str, str]:
    """What the newest journal row names (kind, key)."""
    row = store.conn.execute("SELECT kind, key FROM kb_journal ORDER BY seq DESC LIMIT 1")
    kind, key = row.fetchone()
    return str(kind), str(key)


def test_a_second_write_of_the_newest_thing_is_seen(tmp_path: Path) -> None:
    """The writes of one ingest collapse into one row per thing: a write of what the newest
    row names adds no row. A reader that took its cursor between two edits of one PR (a site
    built after the first) must still see the second: the cursor's own row is read again.
    Before, the second edit (labels only: one row, the PR's) was lost to the next build."""
    with Store(tmp_path / "kb.sqlite") as store:
        rec = github_pr(301)
        ingest(store, rec, PROFILE)
        pr_id = str(store.pr_row(301)["id"])  # type: ignore[index]
        ingest(store, {**rec, "labels": [{"name": "rocm"}], "updated_at": "2026-04-01T00:00:00Z"},
               PROFILE)
        cursor = store.change_cursor()  # a site built now
        assert _newest(store) == ("pr", pr_id)
        ingest(store, {**rec, "labels": [{"name": "v1"}], "updated_at": "2026-04-02T00:00:00Z"},
               PROFILE)
        assert store.change_cursor() == cursor  # no new row: folded into the newest one
        changed = store.changes_since(cursor)
        assert changed is not None and changed["pr"] == {pr_id}


def test_an_ingest_names_its_pr_node_and_builder_class(tmp_path: Path) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        start = store.change_cursor()
        assert start[0] > 0 and start[1]  # the migration's first row
        rec = github_pr(101)
        rec["prkb"] = {"builder_levels": [{"class": "RocmAttentionMetadataBuilder",
                                           "file": "vllm/x.py", "declared": "ALWAYS",
                                           "effective": "ALWAYS"}]}
        rec["merge_commit_sha"] = "a" * 40
        ingest(store, rec, PROFILE)
        pr_id = store.pr_row(101)["id"]  # type: ignore[index]
        changed = store.changes_since(start)
        assert changed is not None
        assert changed["pr"] == {str(pr_id)}
        assert "pr:101" in changed["node"]
        assert changed["class"] == {"RocmAttentionMetadataBuilder"}

        # the same record again writes nothing: the journal does not move (a cursor's own
        # row is read again: only what it names)
        mid = store.change_cursor()
        assert ingest(store, rec, PROFILE).outcome == "unchanged"
        assert store.change_cursor() == mid
        kind, key = _newest(store)
        assert store.changes_since(mid) == {"pr": set(), "node": set(), "class": set(),
                                            kind: {key}}

        # an edit names the PR again; the rows of one ingest make one journal row per thing
        rows_before = store.conn.execute("SELECT count(*) FROM kb_journal").fetchone()[0]
        ingest(store, {**rec, "title": "edited", "updated_at": "2026-04-01T00:00:00Z"}, PROFILE)
        changed = store.changes_since(mid)
        assert changed is not None and changed["pr"] == {str(pr_id)}
        rows_after = store.conn.execute("SELECT count(*) FROM kb_journal").fetchone()[0]
        assert rows_after - rows_before <= 6


def test_recomputed_relations_write_only_what_changed(tmp_path: Path) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        ingest(store, github_pr(201), PROFILE)
        ingest(store, github_pr(202, body="Follow-up to #201."), PROFILE)
        build_relations(store, PROFILE)
        assert store.conn.execute("SELECT count(*) FROM relations").fetchone()[0] > 0
        cursor = store.change_cursor()
        last = _newest(store)
        build_relations(store, PROFILE)
        assert store.change_cursor() == cursor
        ingest(store, github_pr(203, body="Fixes a regression from #202.",
                                updated_at="2026-03-02T00:00:00Z"), PROFILE)
        build_relations(store, PROFILE)
        changed = store.changes_since(cursor)
        assert changed is not None
        assert {"pr:202", "pr:203"} <= changed["node"]
        assert "pr:201" not in changed["node"] - {last[1]}  # the cursor's row: read again


def test_a_cursor_from_another_history_is_refused(tmp_path: Path) -> None:
    a_path, b_path = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Store(a_path) as a:
        ingest(a, github_pr(301), PROFILE)
    shutil.copy(a_path, b_path)
    with Store(a_path) as a, Store(b_path) as b:
        shared = a.change_cursor()
        assert b.changes_since(shared) is not None  # the copy shares this much history
        ingest(a, github_pr(302), PROFILE)
        ingest(b, github_pr(303), PROFILE)
        later_a = a.change_cursor()
        assert later_a[0] == b.change_cursor()[0]  # same sequence number, other changes
        assert b.changes_since(later_a) is None
        assert a.changes_since(later_a) is not None
        for bad in (None, [], ["x", "y"], [0, ""], [-1, "a"], [10**9, "nope"], "12"):
            assert b.changes_since(bad) is None  # type: ignore[arg-type]


def test_a_knowledge_base_from_before_the_journal_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS[:2]:
        conn.executescript(sql)
        conn.execute("INSERT INTO migrations VALUES (?, '2026-01-01T00:00:00Z')", (name,))
    conn.execute(
        "INSERT INTO prs(repo, ref, number, title, source, raw, raw_hash)"
        " VALUES ('vllm-project/vllm', '1', 1, 'old', 'curated', '{}', 'h')"
    )
    conn.commit()
    conn.close()
    with Store(path) as store:
        assert "0003_change_journal" in store.applied_migrations()
        cursor = store.change_cursor()
        assert cursor[0] > 0
        assert store.changes_since(cursor) == {"pr": set(), "node": set(), "class": set()}
        store.conn.execute("UPDATE prs SET title = 'new' WHERE number = 1")
        changed = store.changes_since(cursor)
        assert changed is not None and changed["pr"] == {"1"}


def test_pruning_keeps_the_newest_rows_and_refuses_older_cursors(tmp_path: Path) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        ingest(store, github_pr(401), PROFILE)
        old = store.change_cursor()
        for n in range(402, 408):
            ingest(store, github_pr(n), PROFILE)
        recent = store.change_cursor()
        ingest(store, github_pr(408), PROFILE)
        gone = store.prune_journal(keep=3)
        assert gone > 0
        assert store.conn.execute("SELECT count(*) FROM kb_journal").fetchone()[0] == 3
        assert store.changes_since(old) is None  # its row is gone: rebuild from everything
        changed = store.changes_since(recent)
        assert changed is not None and changed["pr"] == {str(store.pr_row(408)["id"])}  # type: ignore[index]
