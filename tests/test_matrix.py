"""prkb matrix: rows at a revision, the last PR from the KB, and the history page's data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from auditfixtures import base_tree, plain_builder, triton_mla
from gitrepo import GitRepoBuilder, kv_backend_history
from markdown_it import MarkdownIt

from prkb.cli import main
from prkb.collect.git import collect_git
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.publish.docsdrift import parse_table
from prkb.publish.matrix import matrix_history
from prkb.store import Store


@pytest.fixture()
def repo(tmp_path: Path):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/triton_mla.py"] = triton_mla("UNIFORM_BATCH")
    tree["vllm/attn/backends/fa.py"] = (
        "from ..backend import AttentionMetadataBuilder, CGSupport\n\n\n"
        "class FlashAttentionMetadataBuilder(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.ALWAYS if v() == 3 else CGSupport.UNIFORM_BATCH\n\n\n"
        "class FlashAttentionBackend:\n"
        "    @staticmethod\n    def get_name():\n        return 'FLASH_ATTN'\n\n"
        "    @staticmethod\n    def get_builder_cls():\n"
        "        return FlashAttentionMetadataBuilder\n"
    )
    tree["vllm/attn/backends/q.py"] = plain_builder(
        "QuantMetadataBuilder", "UNIFORM_BATCH", "_init_reorder_batch_threshold(1, True)")
    r.commit(tree, "tree")
    return r


def _store(path: Path) -> Store:
    store = Store(path)
    store.migrate()
    return store


def test_matrix_json_rows(repo, tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.sqlite"), "matrix", str(repo.path),
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["class"]: r for r in data["rows"]}
    assert not (tmp_path / "none.sqlite").exists()  # matrix never creates a KB
    tm = rows["TritonMLAMetadataBuilder"]
    assert tm["backend"] == "TRITON_MLA" and tm["meets_rule"] is False
    assert tm["effective"] == "UNIFORM_BATCH" and tm["last_pr"] is None
    fa = rows["FlashAttentionMetadataBuilder"]
    assert fa["backend"] == "FLASH_ATTN" and fa["dynamic"] is True
    assert fa["condition"] == "v() == 3" and fa["levels"] == ["ALWAYS", "UNIFORM_BATCH"]
    assert rows["QuantMetadataBuilder"]["meets_rule"] is True
    assert rows["MLACommonMetadataBuilder"]["comments"] == (
        "inherited from AttentionMetadataBuilder")


def test_matrix_markdown_is_a_docs_table_with_last_pr(repo, tmp_path, capsys):
    db = tmp_path / "kb.sqlite"
    first = repo.shas[0]
    second = repo.commit({"README.md": "later\n"}, "a later commit")
    with _store(db) as store:
        # #10 merged as the first commit, #12 as the second; #14, the newest, merged in
        # another repository (its commit is not in this one)
        changes = ((10, "2026-01-01", "ALWAYS", first), (12, "2026-03-01", "UNIFORM_BATCH", second),
                   (14, "2026-04-01", "NEVER", "f" * 40))
        for number, merged, level, sha in changes:
            cur = store.conn.execute(
                "INSERT INTO prs (repo, ref, number, title, source, raw, raw_hash, merged_at,"
                " merge_commit_sha) VALUES ('o/r', ?, ?, 't', 'test', '{}', 'h', ?, ?)",
                (str(number), number, merged, sha),
            )
            store.conn.execute(
                "INSERT INTO symbol_changes (pr_id, seq, file, class_name, attr, before, after,"
                " direction) VALUES (?, 0, 'vllm/attn/backends/triton_mla.py',"
                " 'TritonMLAMetadataBuilder',"
                " '_cudagraph_support', NULL, ?, 'added')",
                (cur.lastrowid, level),
            )
    assert main(["--db", str(db), "matrix", str(repo.path)]) == 0
    out = capsys.readouterr().out
    # the output reads back as the docs table drift check expects
    table = parse_table(out, load_profile())
    assert table.level_col == "cudagraph_support" and table.backend_col == "Attention Backend"
    rows = {r.cells["Builder"]: r for r in table.rows}
    assert rows["TritonMLAMetadataBuilder"].cells["Last PR"] == "#12"
    assert rows["TritonMLAMetadataBuilder"].levels == ["UNIFORM_BATCH"]
    assert "v() == 3" in rows["FlashAttentionMetadataBuilder"].cells["Dynamic"]
    assert MarkdownIt("commonmark").enable("table").render(out).count("<tr>") == len(rows) + 1
    # at the first commit, the last PR is the one merged at or before it
    assert main(["--db", str(db), "matrix", str(repo.path), "--rev", first]) == 0
    rows = {r.cells["Builder"]: r for r in parse_table(capsys.readouterr().out,
                                                       load_profile()).rows}
    assert rows["TritonMLAMetadataBuilder"].cells["Last PR"] == "#10"


def test_matrix_history_from_builder_levels(tmp_path, capsys):
    db = tmp_path / "kb.sqlite"
    with _store(db) as store:
        rows = [
            ("a" * 40, "2026-01-01T00:00:00Z", "1", "X", "NEVER", 0, None),
            ("b" * 40, "2026-02-01T00:00:00Z", "2", "X", "UNIFORM_BATCH", 0, 0),
            ("b" * 40, "2026-02-01T00:00:00Z", "2", "Y", "ALWAYS", 1, 1),
        ]
        for sha, at, pr, cls, eff, dyn, ready in rows:
            store.conn.execute(
                "INSERT INTO builder_levels (repo, commit_sha, committed_at, pr_ref, class_name,"
                " file, declared, effective, dynamic, meets_rule)"
                " VALUES ('o/r', ?, ?, ?, ?, 'f.py', ?, ?, ?, ?)",
                (sha, at, pr, cls, eff, eff, dyn, ready),
            )
        hist = matrix_history(store)
    assert [c["sha"][0] for c in hist["commits"]] == ["a", "b"]
    # a builder is its file and class, in a list by class then file
    assert [(b["class"], b["file"]) for b in hist["builders"]] == [("X", "f.py"), ("Y", "f.py")]
    x = hist["builders"][0]["levels"]
    assert [lv["effective"] for lv in x] == ["NEVER", "UNIFORM_BATCH"]
    assert x[1]["meets_rule"] is False and x[0]["meets_rule"] is None
    assert hist["builders"][1]["levels"][0]["dynamic"] is True
    assert main(["--db", str(db), "matrix", "--history", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == hist
    assert main(["--db", str(db), "matrix", "--history"]) == 0
    assert "UNIFORM_BATCH" in capsys.readouterr().out
    assert main(["--db", str(tmp_path / "absent.sqlite"), "matrix", "--history"]) == 2


def test_matrix_history_is_markdown_by_file_and_class_and_honours_rev(tmp_path, capsys):
    """Two classes of one name in two files are two builders (never one alternating between
    two levels); the default output is a Markdown table; --rev keeps the readings at or before
    a collected commit or a date."""
    db = tmp_path / "kb.sqlite"
    with _store(db) as store:
        rows = [
            ("a" * 40, "2026-01-01T00:00:00Z", "1", "v0/x.py", "NEVER"),
            ("a" * 40, "2026-01-01T00:00:00Z", "1", "v1/x.py", "UNIFORM_BATCH"),
            ("b" * 40, "2026-02-01T00:00:00Z", "2", "v0/x.py", "NEVER"),
            ("b" * 40, "2026-02-01T00:00:00Z", "2", "v1/x.py", "ALWAYS"),
            ("c" * 40, "2026-03-01T00:00:00Z", "3", "v1/x.py", "NEVER"),
        ]
        for sha, at, pr, file, eff in rows:
            store.conn.execute(
                "INSERT INTO builder_levels (repo, commit_sha, committed_at, pr_ref, class_name,"
                " file, declared, effective, dynamic, meets_rule)"
                " VALUES ('o/r', ?, ?, ?, 'XBuilder', ?, ?, ?, 0, NULL)",
                (sha, at, pr, file, eff, eff),
            )
    assert main(["--db", str(db), "matrix", "--history"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("| `XBuilder`")]
    assert out.splitlines()[0].startswith("| Builder | File |")
    # v0: one row (NEVER throughout); v1: a row per change
    assert [(ln.split(" | ")[1], ln.split(" | ")[5]) for ln in lines] == [
        ("`v0/x.py`", "NEVER"), ("`v1/x.py`", "UNIFORM_BATCH"), ("`v1/x.py`", "ALWAYS"),
        ("`v1/x.py`", "NEVER")]
    assert main(["--db", str(db), "matrix", "--history", "--rev", "bbbbbbb"]) == 0
    out = capsys.readouterr().out
    assert "ALWAYS" in out and "#3" not in out
    assert main(["--db", str(db), "matrix", "--history", "--rev", "2026-01-15"]) == 0
    out = capsys.readouterr().out
    assert "#1" in out and "#2" not in out
    assert main(["--db", str(db), "matrix", "--history", "--rev", "2026-01-15",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["file"] for r in data["rows"]} == {"v0/x.py", "v1/x.py"}
    assert main(["--db", str(db), "matrix", "--history", "--rev", "nothing"]) == 2


def test_matrix_history_json_keeps_same_named_builders_of_two_files_apart(tmp_path, capsys):
    """``matrix --history --format json`` (no --rev): one builder per file and class, each with
    its own readings, never one class whose readings alternate between two files."""
    db = tmp_path / "kb.sqlite"
    with _store(db) as store:
        for sha, at, file, eff in [("a" * 40, "2026-01-01T00:00:00Z", "v0/x.py", "NEVER"),
                                   ("a" * 40, "2026-01-01T00:00:00Z", "v1/x.py", "ALWAYS"),
                                   ("b" * 40, "2026-02-01T00:00:00Z", "v1/x.py", "NEVER")]:
            store.conn.execute(
                "INSERT INTO builder_levels (repo, commit_sha, committed_at, pr_ref, class_name,"
                " file, declared, effective, dynamic, meets_rule)"
                " VALUES ('o/r', ?, ?, '1', 'XBuilder', ?, ?, ?, 0, NULL)",
                (sha, at, file, eff, eff),
            )
    assert main(["--db", str(db), "matrix", "--history", "--format", "json"]) == 0
    builders = json.loads(capsys.readouterr().out)["builders"]
    assert [(b["class"], b["file"], [lv["effective"] for lv in b["levels"]])
            for b in builders] == [("XBuilder", "v0/x.py", ["NEVER"]),
                                   ("XBuilder", "v1/x.py", ["ALWAYS", "NEVER"])]


def test_matrix_last_pr_is_of_the_builders_own_file(tmp_path, capsys):
    """Two builders of one name in two files: the "Last PR" of each is the last PR that
    changed the declaration in its own file, never the other's."""
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/x_v0.py"] = plain_builder("XMetadataBuilder", "NEVER", None)
    tree["vllm/attn/backends/x_v1.py"] = plain_builder("XMetadataBuilder", "ALWAYS", None)
    sha = r.commit(tree, "builders")
    db = tmp_path / "kb.sqlite"
    with _store(db) as store:
        cur = store.conn.execute(
            "INSERT INTO prs (repo, ref, number, title, source, raw, raw_hash, merged_at,"
            " merge_commit_sha) VALUES ('o/r', '21', 21, 't', 'test', '{}', 'h', '2026-01-01',"
            " ?)", (sha,))
        store.conn.execute(
            "INSERT INTO symbol_changes (pr_id, seq, file, class_name, attr, before, after,"
            " direction) VALUES (?, 0, 'vllm/attn/backends/x_v1.py', 'XMetadataBuilder',"
            " '_cudagraph_support', 'UNIFORM_BATCH', 'ALWAYS', 'raised')", (cur.lastrowid,))
    assert main(["--db", str(db), "matrix", str(r.path), "--format", "json"]) == 0
    rows = {r["file"]: r for r in json.loads(capsys.readouterr().out)["rows"]
            if r["class"] == "XMetadataBuilder"}
    assert rows["vllm/attn/backends/x_v1.py"]["last_pr"] == "#21"
    assert rows["vllm/attn/backends/x_v0.py"]["last_pr"] is None


def test_matrix_names_the_class_column_by_the_profiles_holder_word(tmp_path, capsys):
    """The class column says what the profile calls its classes (``[wording] holder``,
    capitalised): "Backend" for the KV-update profile's backends (then "Backend class" beside
    the "Backend" name column), "Class" for a profile that says none; the JSON keeps its keys."""
    kv = "vllm-kv-update-in-forward"
    r = kv_backend_history(tmp_path / "src")
    db = tmp_path / "kb.sqlite"
    with Store(db) as store:
        collect_git(store, str(r.path), load_profile(kv), quiet=True, warn=lambda m: None)
    assert main(["--db", str(db), "--profile", kv, "matrix", str(r.path)]) == 0
    head = capsys.readouterr().out.splitlines()[1]
    assert head.startswith("| Backend | forward_includes_kv_cache_update | Comments | "
                           "Backend class | File |")
    assert main(["--db", str(db), "--profile", kv, "matrix", "--history"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| Backend | File | Date |") and "| `XAttnBackend` |" in out
    # a bool has no levels: the history's value column is "Value", not "Level"
    assert out.splitlines()[0].endswith("| PR | Value |")
    # the audit's count line names the profile's classes, in the singular for one
    assert main(["--db", str(db), "--profile", kv, "audit", str(r.path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(": 1 backend, 0 findings")
    assert main(["--db", str(db), "--profile", kv, "matrix", str(r.path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["class"] == "XAttnBackend"
    # a profile without a holder word: the generic "Class"
    text = (data_dir() / "profiles" / f"{kv}.toml").read_text("utf-8")
    bare = tmp_path / "bare.toml"
    bare.write_text(re.sub(r"(?m)^holders? = .*\n", "", text), encoding="utf-8")
    assert load_profile(str(bare)).word("holder", "en") == ""
    assert main(["--db", str(tmp_path / "none.sqlite"), "--profile", str(bare), "matrix",
                 str(r.path)]) == 0
    assert "| Comments | Class | File |" in capsys.readouterr().out.splitlines()[1]
