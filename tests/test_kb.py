"""The knowledge base, snapshot import/export, and the reading commands, through the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from kbrecords import github_pr

from prkb.collect.snapshot import import_jsonl
from prkb.ingest import ingest
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.store import MIGRATIONS, Store

ROOT = Path(__file__).resolve().parents[1]
CURATED = data_dir() / "snapshots" / "curated-seeds.jsonl"


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "prkb", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_schema_is_migrated_by_name_in_wal_mode(tmp_path):
    store = Store(tmp_path / "kb.sqlite")
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert store.wal
    store.close()
    again = Store(tmp_path / "kb.sqlite")  # reopening applies nothing twice
    assert again.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert again.integrity_ok()


def test_import_is_idempotent_and_reports_bad_lines(tmp_path):
    snap = tmp_path / "snap.jsonl"
    good = [github_pr(1), github_pr(2)]
    lines = [
        json.dumps(good[0]),
        "{not json",
        json.dumps({"number": "abc", "title": "x"}),
        json.dumps({"title": "no number"}),
        json.dumps(good[1]),
        json.dumps({**github_pr(3), "files": "nope"}),
    ]
    snap.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = Store(tmp_path / "kb.sqlite")
    profile = load_profile()
    rep = import_jsonl(store, snap, profile)
    assert (rep.new, rep.lines) == (2, 6)
    assert [e.split(":")[1].split(" ")[0] for e in rep.errors] == ["2", "3", "4", "6"]
    assert "'number' must be an integer" in rep.errors[1]
    assert "(PR 3)" in rep.errors[3] and "'files' must be a list" in rep.errors[3]
    before = store.conn.execute("SELECT id, raw_hash FROM prs ORDER BY id").fetchall()
    rep2 = import_jsonl(store, snap, profile)
    assert (rep2.new, rep2.updated, rep2.unchanged) == (0, 0, 2)
    assert store.conn.execute("SELECT id, raw_hash FROM prs ORDER BY id").fetchall() == before
    assert store.conn.execute("SELECT count(*) FROM symbol_changes").fetchone()[0] == 2


def test_newer_updated_at_wins_and_older_is_ignored(tmp_path):
    store = Store(tmp_path / "kb.sqlite")
    profile = load_profile()
    assert ingest(store, github_pr(5), profile).outcome == "new"
    newer = github_pr(5, title="[ROCm] newer", updated_at="2026-03-02T00:00:00Z")
    assert ingest(store, newer, profile).outcome == "updated"
    older = github_pr(5, title="[ROCm] older", updated_at="2026-02-01T00:00:00Z")
    assert ingest(store, older, profile).outcome == "older"
    assert store.pr_facts(5)["title"] == "[ROCm] newer"
    assert store.conn.execute("SELECT count(*) FROM prs").fetchone()[0] == 1


def test_patch_analysis_gives_per_class_facts_and_tags(tmp_path):
    store = Store(tmp_path / "kb.sqlite")
    ingest(store, github_pr(7), load_profile())
    facts = store.pr_facts(7)
    assert facts["symbol_changes"] == [
        {
            "file": "vllm/v1/attention/backends/rocm_attn.py",
            "class": "RocmAttentionMetadataBuilder",
            "attr": "_cudagraph_support",
            "before": "UNIFORM_BATCH",
            "after": "ALWAYS",
            "direction": "raised",
            "before_attr": None,
            "before_file": None,
        }
    ]
    codes = [t["code"] for t in facts["risk_tags"]]
    assert codes == ["core-path", "missing-tests", "platform-specific", "level-raised"]
    assert facts["platforms"] == ["rocm"]
    assert {t["zh"] for t in facts["risk_tags"]} >= {"缺少测试覆盖", "仅特定平台"}


def test_show_json_shape_and_unknown_pr(tmp_path):
    db = str(tmp_path / "kb.sqlite")
    assert run("--db", db, "import", str(CURATED)).returncode == 0
    out = run("show", "47144", "--json", env={"PRKB_DB": db})
    facts = json.loads(out.stdout)
    for key in (
        "number", "title", "state", "author", "created_at", "merged_at", "merge_commit_sha",
        "url", "files", "symbol_changes", "tests_touched", "platforms", "risk_tags", "findings",
        "relations",
    ):
        assert key in facts, key
    assert set(facts["files"][0]) >= {"path", "status", "additions", "deletions"}
    assert set(facts["risk_tags"][0]) == {"code", "zh", "en"}
    # import builds the relations: #45149 needed #47766
    rel = json.loads(run("--db", db, "show", "45149", "--json").stdout)["relations"]
    assert {"type": "depends-on", "other": 47766, "direction": "out"}.items() <= rel[0].items()
    missing = run("--db", db, "show", "999999")
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"prkb: error: no PR 999999 in the knowledge base {db}"


def test_show_json_has_the_discussion_the_report_quotes(tmp_path):
    """``show --json`` gives what the report reads of the discussion (status, author, topics
    with their decisive quotes) and the description, so a script sees what a reader sees."""
    db = str(tmp_path / "kb.sqlite")
    assert run("--db", db, "import", str(CURATED)).returncode == 0
    facts = json.loads(run("--db", db, "show", "45149", "--json").stdout)
    disc = facts["discussion"]
    assert disc["status"] == "topics" and facts["body"].strip()
    quotes = [t["decisive"]["text"] for t in disc["topics"] if t["decisive"]]
    report = run("--db", db, "report", "45149", "--lang", "en").stdout
    assert len(quotes) == 3 and all(q[:50] in report for q in quotes)


def test_db_flag_beats_env_beats_default(tmp_path):
    env_db = tmp_path / "env.sqlite"
    flag_db = tmp_path / "flag.sqlite"
    run("import", str(CURATED), env={"PRKB_DB": str(env_db)}, cwd=tmp_path)
    run("--db", str(flag_db), "import", str(CURATED), env={"PRKB_DB": str(env_db)})
    run("import", str(CURATED), cwd=tmp_path, env={"PRKB_DB": ""})
    for db in (env_db, flag_db, tmp_path / "prkb.sqlite"):
        assert sqlite3.connect(db).execute("SELECT count(*) FROM prs").fetchone()[0] == 4


def test_export_import_round_trip_is_exact(tmp_path):
    db1, db2 = str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")
    run("--db", db1, "import", str(CURATED))
    out = tmp_path / "out.jsonl"
    assert run("--db", db1, "export", str(out)).returncode == 0
    run("--db", db2, "import", str(out))
    assert run("--db", db2, "export", "-").stdout == out.read_text(encoding="utf-8")


def test_list_json_and_table(tmp_path):
    db = str(tmp_path / "kb.sqlite")
    run("--db", db, "import", str(CURATED))
    rows = json.loads(run("--db", db, "list", "--json").stdout)
    by = {r["number"]: r for r in rows}
    assert by[47144]["changes"] == (
        "TritonMLAMetadataBuilder: UNIFORM_BATCH -> UNIFORM_SINGLE_TOKEN_DECODE"
    )
    assert "missing-tests" in by[47144]["risk_tags"]
    table = run("--db", db, "list")
    assert table.returncode == 0 and "#47144" in table.stdout
    # piped: a header, then one line per PR in the order of --json; a cell longer than 60
    # columns is cut with an ellipsis (--wide: whole)
    lines = table.stdout.splitlines()
    assert len(lines) == len(rows) + 1 and lines[0].split() == [
        "PR", "date", "title", "declaration", "changes", "risk", "tags"]
    for line, row in zip(lines[1:], rows, strict=True):
        assert line.startswith(f"#{row['number']} "), (line, row)
        for cell in (row["title"], row["changes"], ", ".join(row["risk_tags"])):
            assert (cell if len(cell) <= 60 else cell[:59] + "…") in line, (cell, line)
    assert max(len(x) for x in lines) <= 6 + 2 + 10 + 2 + 3 * (60 + 2)
    assert "TritonMLAMetadataBuilder: UNIFORM_BATCH -> UNIFORM_SINGLE_T…" in table.stdout
    wide = run("--db", db, "list", "--wide").stdout.splitlines()
    for line, row in zip(wide[1:], rows, strict=True):
        assert row["title"] in line and row["changes"] in line, (line, row)


def test_list_reads_the_same_facts_as_show(tmp_path):
    """``prkb list`` reads every PR in three queries (``Store.pr_listing``); what it says of
    each is what ``facts_from_row`` (``prkb show``) says."""
    from prkb.commands.kbcmds import short_changes

    with Store(tmp_path / "kb.sqlite") as store:
        import_jsonl(store, CURATED, load_profile(None))
        listing = store.pr_listing()
        facts = [store.facts_from_row(r) for r in store.all_prs()]
    assert [x["ref"] for x in listing] == [f["ref"] for f in facts] and len(facts) > 3
    for x, f in zip(listing, facts, strict=True):
        for key in ("number", "title", "state", "created_at", "closed_at", "merged_at"):
            assert x[key] == f[key], key
        assert x["risk_tags"] == [t["code"] for t in f["risk_tags"]]
        assert short_changes(x["symbol_changes"]) == short_changes(f["symbol_changes"])
    assert any(x["symbol_changes"] for x in listing) and any(x["risk_tags"] for x in listing)


def test_a_table_fits_a_terminal_and_folds_its_long_cells():
    """On a terminal (a width), the widest columns narrow until a line fits and a long cell
    folds onto more lines, columns aligned by display cells (a Chinese character is two);
    without a width, one line a row. Control characters are made visible either way."""
    from rich.cells import cell_len

    from prkb.progress import text_table

    rows = [["#1", "修复推测解码的图捕获回退，" * 4, "A: NEVER -> ALWAYS; B: ALWAYS -> NEVER"],
            ["#22", "short", "x\x1b[31m\nred"]]
    lines = list(text_table(["PR", "title", "changes"], rows, width=40))
    assert all(cell_len(line) <= 40 for line in lines), lines
    assert len(lines) > 3  # the long title folded
    # the second column starts at the same cell on every line that has a first column
    starts = {cell_len(line[: line.index(c)]) for line in lines for c in ("修", "short")
              if c in line and line.startswith("#")}
    assert starts == {5}, (starts, lines)
    first = lines[1:next(i for i, line in enumerate(lines) if line.startswith("#22"))]
    folded = "".join(line[5:].split("  ")[0] for line in first)
    assert folded.replace(" ", "") == rows[0][1].replace(" ", "")  # nothing lost
    assert "\x1b" not in "".join(lines) and "\\x1b[31m red" in "".join(lines)
    piped = list(text_table(["PR", "title", "changes"], rows))
    assert len(piped) == 3 and rows[0][1] in piped[1]


def test_demo_runs_offline_from_bundled_data(tmp_path):
    res = run("demo", cwd=tmp_path, env={"PRKB_DB": ""})
    assert res.returncode == 0, res.stderr
    assert "reports written to" in res.stdout
    for name in ("pr-47144.zh.md", "pr-47144.en.md", "pr-45149.zh.md", "pr-45149.en.md"):
        text = (tmp_path / "prkb-demo" / name).read_text(encoding="utf-8")
        assert "47144" in text or "45149" in text
    # the knowledge base every command uses is there right after
    facts = json.loads(run("show", "42885", "--json", cwd=tmp_path, env={"PRKB_DB": ""}).stdout)
    assert facts["findings"][0]["class"] == "TritonMLAMetadataBuilder"
    again = run("demo", cwd=tmp_path, env={"PRKB_DB": ""})
    assert "0 new, 0 updated" in again.stdout


def test_bad_db_path_is_one_line(tmp_path):
    res = run("--db", str(tmp_path / "no" / "such" / "kb.sqlite"), "import", str(CURATED))
    assert res.returncode == 2
    assert res.stderr.strip().startswith("prkb: error: knowledge base folder")
    # a read command on a mistyped path names it and creates nothing
    typo = tmp_path / "kb.sqllite"
    for cmd in (["list"], ["show", "1"], ["report", "1"], ["site", "build", "--out",
                                                           str(tmp_path / "site")]):
        res = run("--db", str(typo), *cmd)
        assert res.returncode == 2, cmd
        assert res.stderr.strip() == (
            f"prkb: error: no knowledge base at {typo}: give --db (or $PRKB_DB) the file that "
            "'prkb collect', 'prkb import' or 'prkb demo' wrote"), cmd
        assert not typo.exists() and not (tmp_path / "site").exists()
    res = run("--db", str(tmp_path), "list")
    assert "is a directory" in res.stderr and "Traceback" not in res.stderr
    missing = run("--db", str(tmp_path / "kb.sqlite"), "import", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_export_leaves_an_existing_file_alone_without_force(tmp_path):
    db = str(tmp_path / "kb.sqlite")
    assert run("--db", db, "import", str(CURATED)).returncode == 0
    out = tmp_path / "out.jsonl"
    before = b"keep me\n\x00not a snapshot\n"
    out.write_bytes(before)
    res = run("--db", db, "export", str(out))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("prkb: error: ")
    assert str(out) in res.stderr and "--force" in res.stderr
    assert out.read_bytes() == before  # untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out")] == ["out.jsonl"]

    forced = run("--db", db, "export", "--force", str(out))
    assert forced.returncode == 0, forced.stderr
    assert out.read_text(encoding="utf-8") == run("--db", db, "export", "-").stdout
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4
    assert not (tmp_path / "out.jsonl.tmp").exists()

    fresh = tmp_path / "fresh.jsonl"  # a new file needs no --force
    assert run("--db", db, "export", str(fresh)).returncode == 0
    assert fresh.read_bytes() == out.read_bytes()
    assert "--force" in run("export", "--help").stdout


def test_import_exits_1_when_a_line_fails_and_still_stores_the_good_ones(tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        json.dumps(github_pr(11)) + "\n" + '{"number": 12, "title": "cut off\n'
        + json.dumps(github_pr(13)) + "\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "kb.sqlite")
    res = run("--db", db, "-q", "import", str(mixed))
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    err = res.stderr.strip().splitlines()
    assert err[0].startswith("warning: mixed.jsonl:2: not JSON")  # the per-line message
    assert err[-1] == (f"prkb: {mixed}: 1 of 3 lines failed and were left out; "
                       "the other 2 were imported")
    assert len(err) == 2
    assert "3 lines, 2 new, 0 updated, 0 unchanged, 0 older, 1 errors" in res.stdout
    rows = sqlite3.connect(db).execute("SELECT ref FROM prs ORDER BY ref").fetchall()
    assert rows == [("11",), ("13",)]

    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(github_pr(11)) + "\n" + json.dumps(github_pr(13)) + "\n",
                    encoding="utf-8")
    clean = run("--db", str(tmp_path / "clean.sqlite"), "-q", "import", str(good))
    assert clean.returncode == 0, clean.stderr
    assert clean.stderr == ""
    assert "2 lines, 2 new" in clean.stdout
    as_json = run("--db", db, "-q", "import", "--json", str(mixed))
    assert as_json.returncode == 1
    counts = json.loads(as_json.stdout)
    assert counts["failed"] == 1 and counts["unchanged"] == 2 and len(counts["errors"]) == 1


def test_ingest_all_writes_each_cursor_with_its_record_and_the_last_after_relations(
    tmp_path, monkeypatch
):
    import pytest

    import prkb.graph
    from prkb.ingest import Collected, IngestResult, StateUpdate, ingest_all

    store = Store(tmp_path / "kb.sqlite")
    profile = load_profile()
    seen: list[tuple[object, str, str | None]] = []
    refused: list[object] = []

    def items():
        yield Collected(github_pr(5), [StateUpdate("t", "s", "pr:5", "a")], tag=5)
        yield Collected(None, [StateUpdate("t", "s", "pr:none", "a")], tag="null")
        yield Collected.only_cursor([StateUpdate("t", "s", "listed", "yes")])
        yield Collected.only_cursor([StateUpdate("t", "s", "tip", "end")], after_relations=True)

    def progress(it: Collected, res: IngestResult) -> None:
        seen.append((it.tag, res.outcome, store.get_state("t", "s", "pr:5")))

    counts = ingest_all(
        store, items(), profile, progress=progress,
        on_error=lambda it, _e: refused.append(it.tag),
    )
    assert seen == [(5, "new", "a")]  # the cursor was written with its record
    assert refused == ["null"] and store.get_state("t", "s", "pr:none") is None
    assert store.get_state("t", "s", "listed") == "yes"
    assert (counts.new, counts.failed, counts.items) == (1, 1, 4)
    assert counts.relations is not None and store.get_state("t", "s", "tip") == "end"

    # nothing changed: "changed" does not rebuild; a failed rebuild leaves the last cursor
    again = ingest_all(store, [Collected(github_pr(5))], profile, relations="changed")
    assert (again.unchanged, again.relations) == (1, None)

    def broken(*_a: object) -> None:
        raise RuntimeError("killed while building relations")

    monkeypatch.setattr(prkb.graph, "build_relations", broken)
    with pytest.raises(RuntimeError):
        ingest_all(store, [
            Collected(github_pr(6), [StateUpdate("t", "s", "pr:6", "b")]),
            Collected.only_cursor([StateUpdate("t", "s", "tip", "later")], after_relations=True),
        ], profile)
    assert store.get_state("t", "s", "pr:6") == "b"
    assert store.get_state("t", "s", "tip") == "end"
    store.close()


def test_control_characters_are_stripped_from_titles_everywhere(tmp_path):
    """An ESC sequence, a right-to-left override and a newline in a PR title reach no output:
    the title is stored as one clean line, so the list, the report and the site's page title
    all show it so."""
    hostile = "Fix \x1b[31mred\x1b[0m \u202eevil\u200f\u202c\nsecond line"
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(github_pr(901, title=hostile)) + "\n", encoding="utf-8")
    db = tmp_path / "kb.sqlite"
    assert run("--db", str(db), "import", str(src)).returncode == 0
    clean = "Fix [31mred [0m evil second line"
    with Store(db) as store:
        assert store.pr_facts("901")["title"] == clean
    listed = run("--db", str(db), "list").stdout
    assert clean in listed and "\x1b" not in listed and "\u202e" not in listed
    report = run("--db", str(db), "report", "901", "--lang", "en", "--format", "md").stdout
    assert "Title: “Fix \\[31mred \\[0m evil second line”" in report and "\x1b" not in report
    assert run("--db", str(db), "site", "build", "--out", str(tmp_path / "site"),
               "--no-search").returncode == 0
    page = (tmp_path / "site" / "en" / "pr" / "901.html").read_text(encoding="utf-8")
    assert f"<title>#901 {clean}" in page or clean in page.split("</title>")[0]
    assert "\u202e" not in page and "\x1b" not in page


def test_site_build_without_a_base_url_warns(tmp_path):
    db = str(tmp_path / "kb.sqlite")
    assert run("--db", db, "import", str(CURATED)).returncode == 0
    res = run("--db", db, "-q", "site", "build", "--out", str(tmp_path / "s"), "--no-search")
    assert res.returncode == 0 and "warning: no --base-url" in res.stderr
    res = run("--db", db, "-q", "site", "build", "--out", str(tmp_path / "s"), "--no-search",
              "--base-url", "https://kb.example.org/")
    assert res.returncode == 0 and "base-url" not in res.stderr
