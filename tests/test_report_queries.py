"""The digest's bulk readers of what PRs changed (prkb/store/report_queries.py): the same
rows per PR as one query per PR reads, for many PRs at once."""

from __future__ import annotations

import json
from typing import Any

from prkb.store import Store


def test_bulk_readers_give_each_pr_its_own_rows(bundled: Store) -> None:
    conn = bundled.conn
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM prs ORDER BY id")]
    assert len(ids) > 20
    # row ids with no PR (empty, not missing), enough for several queries of 500 ids
    asked = [*ids, *range(max(ids) + 1000, max(ids) + 1600)]
    # in any order, repeated
    changes = bundled.symbol_changes_of(list(reversed(asked)) + ids[:3])
    findings = bundled.findings_of(asked)
    paths = bundled.paths_of(asked)
    codes = bundled.risk_codes_of(asked)
    states = bundled.state_changes_of(asked)
    assert set(changes) == set(findings) == set(paths) == set(codes) == set(states) == set(asked)

    def rows(sql: str, pr_id: int) -> list[dict[str, Any]]:
        cur = conn.execute(sql, (pr_id,))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur]

    seen = {"changes": 0, "findings": 0, "codes": 0, "states": 0}
    for pr_id in asked:
        want = rows("SELECT * FROM symbol_changes WHERE pr_id=? ORDER BY seq", pr_id)
        assert changes[pr_id] == want
        seen["changes"] += len(want)
        want = rows("SELECT * FROM findings WHERE pr_id=? ORDER BY seq", pr_id)
        assert findings[pr_id] == want
        seen["findings"] += len(want)
        assert paths[pr_id] == {p for r in conn.execute(
            "SELECT path, previous_path FROM files WHERE pr_id=?", (pr_id,)) for p in r if p}
        want_codes = [r[0] for r in conn.execute(
            "SELECT code FROM risk_tags WHERE pr_id=?", (pr_id,))]
        assert sorted(codes[pr_id]) == sorted(want_codes)
        seen["codes"] += len(want_codes)
        row = conn.execute("SELECT analysis FROM prs WHERE id=?", (pr_id,)).fetchone()
        got = json.loads(row[0] or "{}").get("state_changes") if row else None
        assert states[pr_id] == (got if isinstance(got, list) else None)
        seen["states"] += states[pr_id] is not None
    # the bundled data has rows of every kind: the comparison compared something
    assert all(seen.values()), seen
    assert bundled.symbol_changes_of([]) == {}


def test_in_chunks_binds_every_value_once_a_few_hundred_at_a_time() -> None:
    from prkb.store.rows import IN_CHUNK, in_chunks

    values = list(range(2 * IN_CHUNK + 7))
    runs = list(in_chunks(values))
    assert [len(c) for c, _ in runs] == [IN_CHUNK, IN_CHUNK, 7]
    assert [v for c, _ in runs for v in c] == values
    assert all(marks == ",".join(["?"] * len(c)) for c, marks in runs)
    assert list(in_chunks([])) == []


def test_the_facts_of_many_prs_are_each_prs_own(bundled: Store) -> None:
    """``facts_from_rows`` (a run of PR pages at once) gives each PR what reading it alone
    gives: its files and changes in order, and its relations seen from it, each once, in
    the order of type, source and target, checked against one plain query per PR; with a
    relation of a PR to itself and relations between PRs read in one batch and across the
    batches of 500 (more PRs than one batch)."""
    conn = bundled.conn
    numbers = [int(r[0]) for r in conn.execute(
        "SELECT number FROM prs WHERE number IS NOT NULL ORDER BY id")]
    a, b = numbers[0], numbers[1]
    with bundled.transaction() as tx:
        tx.execute("INSERT INTO relations(source, target, type, evidence, confidence, origin)"
                   " VALUES (?, ?, 'mentions', '[]', 0.5, 'text')", (f"pr:{a}", f"pr:{a}"))
        tx.execute("INSERT INTO relations(source, target, type, evidence, confidence, origin)"
                   " VALUES (?, ?, 'depends-on', '[]', 0.7, 'text')", (f"pr:{b}", f"pr:{a}"))
    rows = bundled.all_prs()
    many = [*rows, *[rows[i % len(rows)] for i in range(600)]]  # past one batch, repeated
    got = bundled.facts_from_rows(many)
    assert len(got) == len(many)
    seen = 0
    for row, facts in zip(many, got, strict=True):
        assert facts == bundled.facts_from_rows([row])[0] == bundled.facts_from_row(row)
        key = f"pr:{row['number']}" if row["number"] is not None else \
            f"commit:{row['merge_commit_sha']}"
        want = []
        for r in conn.execute("SELECT type, source, target, confidence FROM relations"
                              " WHERE source=? OR target=? ORDER BY type, source, target",
                              (key, key)):
            out = r[1] == key
            other = r[2] if out else r[1]
            want.append((r[0], int(other[3:]) if other.startswith("pr:") else other,
                          "out" if out else "in", r[3]))
        assert [(x["type"], x["other"], x["direction"], x["confidence"])
                for x in facts["relations"]] == want
        assert [f["path"] for f in facts["files"]] == [r[0] for r in conn.execute(
            "SELECT path FROM files WHERE pr_id=? ORDER BY seq", (row["id"],))]
        assert [c["class"] for c in facts["symbol_changes"]] == [r[0] for r in conn.execute(
            "SELECT class_name FROM symbol_changes WHERE pr_id=? ORDER BY seq", (row["id"],))]
        seen += len(want)
    assert seen > len(many)  # relations were compared
    by_number = {f["number"]: f for f in got}
    assert [(x["type"], x["other"], x["direction"]) for x in by_number[a]["relations"]
            if x["other"] in (a, b)] == [("depends-on", b, "in"), ("mentions", a, "out")]
    assert bundled.pr_rows_by_id([rows[0]["id"], 10**9]) == {rows[0]["id"]: rows[0]}
