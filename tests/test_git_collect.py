"""The git collector on small real repositories that replay vLLM's patterns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from githistory import FA, FI, MLA, MLA_SRC, TRITON, UTILS, base, build_history, triton
from gitrepo import GitRepoBuilder, git

from prkb.collect.git import collect_git
from prkb.errors import InputError
from prkb.profile import load_profile
from prkb.store import Store


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepoBuilder, dict[str, str]]:
    return build_history(tmp_path_factory.mktemp("hist") / "src")


def collect(db: Path, repo: Path, **kw: object) -> tuple[Store, object, list[str]]:
    warnings: list[str] = []
    store = Store(db)
    stats = collect_git(store, str(repo), load_profile(), quiet=True, warn=warnings.append, **kw)
    return store, stats, warnings


def changes(store: Store, ref: str) -> list[tuple[str, str, str | None, str | None, str]]:
    return sorted(
        (c["class"], c["attr"], c["before"], c["after"], c["direction"])
        for c in store.pr_facts(ref)["symbol_changes"]
    )


def test_collects_every_spelling_with_pr_numbers(history, tmp_path):
    repo, shas = history
    store, _, warnings = collect(tmp_path / "kb.sqlite", repo.path)
    assert warnings == []
    refs = {r["ref"] for r in store.conn.execute("SELECT ref FROM prs")}
    assert refs == {
        "101", "102", "103", "104", "105", "42885", "47144", "47200", "200", f"sha:{shas['nopr']}",
    }  # not the README commit, not the runner's longer identifier, not the docs commit
    assert changes(store, "101") == [
        ("AttentionMetadataBuilder", "attn_cudagraph_support", None, "NEVER", "added"),
        ("FlashAttentionMetadataBuilder", "full_cudagraph_supported", None, "True", "added"),
    ]
    assert changes(store, "102") == [
        ("FlashInferMetadataBuilder", "attn_cudagraph_support", None,
         "UNIFORM_SINGLE_TOKEN_DECODE", "added"),
    ]  # the old level name is normalised


def test_renames_are_one_entry_per_class(history, tmp_path):
    repo, _ = history
    store, _, _ = collect(tmp_path / "kb.sqlite", repo.path)
    facts = store.pr_facts("103")["symbol_changes"]
    assert {(c["class"], c["attr"], c["before_attr"], c["direction"]) for c in facts} == {
        ("AttentionMetadataBuilder", "cudagraph_support", "attn_cudagraph_support", "renamed"),
        ("FlashInferMetadataBuilder", "cudagraph_support", "attn_cudagraph_support", "renamed"),
    }
    base = store.pr_facts("105")["symbol_changes"]
    assert [(c["attr"], c["before_attr"], c["direction"]) for c in base] == [
        ("_cudagraph_support", "cudagraph_support", "renamed")
    ]


def test_conditional_value_dynamic_override_and_sha_key(history, tmp_path):
    repo, shas = history
    store, _, _ = collect(tmp_path / "kb.sqlite", repo.path)
    cond = store.pr_facts(shas["nopr"])
    assert cond["number"] is None and cond["ref"] == f"sha:{shas['nopr']}"
    (c,) = cond["symbol_changes"]
    assert c["before"] == "True" and c["before_attr"] == "full_cudagraph_supported"
    assert c["after"] == (
        "AttentionCGSupport.ALWAYS if FA_VERSION == 3 else AttentionCGSupport.UNIFORM_BATCH"
    )
    assert "dynamic-support" in [t["code"] for t in cond["risk_tags"]]
    assert changes(store, "104") == [
        ("FlashInferMetadataBuilder", "get_cudagraph_support", None, "UNIFORM_BATCH",
         "dynamic-added")
    ]


def test_audit_flags_42885_and_not_its_fix(history, tmp_path):
    repo, _ = history
    store, _, _ = collect(tmp_path / "kb.sqlite", repo.path)
    f42885 = store.pr_facts("42885")
    assert [(f["rule"], f["class"]) for f in f42885["findings"]] == [
        ("cg-uniform-without-spec-decode", "TritonMLAMetadataBuilder")
    ]
    assert f42885["findings"][0]["message_zh"]
    assert "audit-finding" in [t["code"] for t in f42885["risk_tags"]]
    fix = store.pr_facts("47144")
    assert fix["findings"] == []
    assert changes(store, "47144") == [
        ("TritonMLAMetadataBuilder", "_cudagraph_support", "UNIFORM_BATCH",
         "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")
    ]
    # the revert brings the inconsistency back: new again at that commit
    revert = store.pr_facts("47200")
    assert [f["class"] for f in revert["findings"]] == ["TritonMLAMetadataBuilder"]
    # the merge commit counts as one change on the branch
    merge = store.pr_facts("200")
    assert merge["title"] == "[Bugfix] TritonMLA single-token decode"
    assert [c["direction"] for c in merge["symbol_changes"]] == ["lowered"]
    # builder levels at the collected commits feed the support matrix history
    rows = store.conn.execute(
        "SELECT pr_ref, effective FROM builder_levels WHERE class_name='TritonMLAMetadataBuilder'"
        " ORDER BY committed_at"
    ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("42885", "UNIFORM_BATCH"), ("47144", "UNIFORM_SINGLE_TOKEN_DECODE"),
        ("47200", "UNIFORM_BATCH"), ("200", "UNIFORM_SINGLE_TOKEN_DECODE"),
    ]


def test_lineage_blames_the_pr_that_set_the_lines(history, tmp_path):
    repo, shas = history
    store, _, _ = collect(tmp_path / "kb.sqlite", repo.path)
    raw = json.loads(store.pr_row("47144")["raw"])
    assert {x["commit"] for x in raw["prkb"]["lineage"]} == {shas["42885"]}
    assert raw["body"] is None  # git records carry no PR description
    revert = json.loads(store.pr_row("47200")["raw"])
    assert revert["body"] == f"This reverts commit {shas['47144']}."


def test_rerun_does_nothing_and_new_commits_are_incremental(history, tmp_path):
    repo, _ = history
    db = tmp_path / "kb.sqlite"
    store, _, _ = collect(db, repo.path)
    before = [tuple(r) for r in store.conn.execute("SELECT ref, raw_hash FROM prs ORDER BY ref")]
    store.close()
    store, again, _ = collect(db, repo.path)
    assert again.up_to_date and again.hits == 0 and again.mined == 0
    # a clone with one more commit: only that commit is mined
    clone = GitRepoBuilder(tmp_path / "clone")
    git(tmp_path, "clone", "-q", str(repo.path), str(clone.path))
    git(clone.path, "config", "user.name", "T")
    git(clone.path, "config", "user.email", "t@example.org")
    clone.commit({TRITON: triton("NEVER")}, "[Bugfix] Disable TritonMLA graphs (#300)")
    store.close()
    store, inc, _ = collect(db, clone.path)
    assert (inc.hits, inc.mined) == (1, 1)
    after = [tuple(r) for r in store.conn.execute("SELECT ref, raw_hash FROM prs ORDER BY ref")]
    assert set(before) < set(after) and len(after) == len(before) + 1


def test_forgotten_cursor_reruns_change_nothing(history, tmp_path):
    """A run killed before it saved its cursor: the next run skips what is mined, and
    mining everything again from scratch stores byte-identical records."""
    repo, _ = history
    db = tmp_path / "kb.sqlite"
    store, _, _ = collect(db, repo.path)
    dump = [tuple(r) for r in store.conn.execute("SELECT ref, raw FROM prs ORDER BY ref")]
    with store.transaction() as c:
        c.execute("DELETE FROM collect_state")
    store.close()
    store, again, _ = collect(db, repo.path)
    assert again.mined == 0 and again.already == again.hits == 10
    with store.transaction() as c:
        c.execute("DELETE FROM collect_state")
        c.execute("DELETE FROM mined_commits")
    store.close()
    store, full, _ = collect(db, repo.path)
    assert full.mined == 10 and full.new == 0 and full.updated == 0 and full.unchanged == 10
    assert dump == [tuple(r) for r in store.conn.execute("SELECT ref, raw FROM prs ORDER BY ref")]


def test_bare_repository_and_since(history, tmp_path):
    repo, shas = history
    bare = repo.bare_clone(tmp_path / "mirror.git")
    store, stats, _ = collect(tmp_path / "kb.sqlite", bare, since=shas["47144"])
    assert {r[0] for r in store.conn.execute("SELECT ref FROM prs")} == {"47200", "200"}
    assert stats.hits == 2


def test_bad_paths_and_branches(tmp_path, history):
    repo, _ = history
    with pytest.raises(InputError, match="not a git repository"):
        collect(tmp_path / "kb.sqlite", tmp_path)
    with pytest.raises(InputError, match="no such directory"):
        collect(tmp_path / "kb.sqlite", tmp_path / "nope")
    with pytest.raises(InputError, match="unknown branch 'nope'"):
        collect(tmp_path / "kb.sqlite", repo.path, branch="nope")


def test_missing_blob_is_skipped_with_one_warning(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({UTILS: base("_cudagraph_support")}, "[Core] base (#1)")
    bad = r.commit(
        {FA: "class FlashAttentionMetadataBuilder:\n    _cudagraph_support = X.ALWAYS\n"},
        "[Perf] FA always (#2)",
    )
    r.commit(
        {FI: "class FlashInferMetadataBuilder:\n    _cudagraph_support = X.UNIFORM_BATCH\n"},
        "[Perf] FI uniform (#3)",
    )
    r.delete_object(r.blob_sha(bad, FA))
    store, _, warnings = collect(tmp_path / "kb.sqlite", r.path)
    # the commit with the missing blob is kept; only the unreadable file is skipped
    assert {x[0] for x in store.conn.execute("SELECT ref FROM prs")} == {"1", "2", "3"}
    assert changes(store, "2") == []
    assert changes(store, "3") == [
        ("FlashInferMetadataBuilder", "_cudagraph_support", None, "UNIFORM_BATCH", "added")
    ]
    assert any(FA in w and "missing" in w for w in warnings), warnings
    assert all("Traceback" not in w for w in warnings)


def test_cli_collect_git_json_and_quiet(history, tmp_path):
    repo, _ = history
    db = tmp_path / "kb.sqlite"
    cmd = [sys.executable, "-m", "prkb", "--db", str(db), "collect", "git", str(repo.path)]
    out = subprocess.run([*cmd, "--json", "-q"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["hits"] == 10 and data["new"] == 10
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "nothing new" in out.stdout
    bad = subprocess.run([*cmd, "--branch", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("prkb: error:") and "Traceback" not in bad.stderr


def test_shallow_boundary_commit_is_skipped_not_misread(history, tmp_path):
    repo, _ = history
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{repo.path}", str(shallow))
    store, stats, warnings = collect(tmp_path / "kb.sqlite", shallow)
    assert sum("shallow clone" in w and "skipped" in w for w in warnings) == 1
    assert stats.skipped_boundary == 1
    # nothing at the boundary is recorded as newly "added"
    for row in store.conn.execute("SELECT direction FROM symbol_changes"):
        assert row[0] != "added"


def test_the_other_fix_declaring_query_len_support_clears_the_finding(tmp_path):
    """#47310's way: keep UNIFORM_BATCH and let the threshold grow. That commit names no
    family spelling (the pickaxe does not see it), yet the next mined commit's audit knows."""
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({UTILS: base("_cudagraph_support"), MLA: MLA_SRC}, "[Core] base and MLA (#1)")
    r.commit({TRITON: triton("UNIFORM_BATCH")}, "[Perf][MLA] Triton full graphs (#42885)")
    fixed = triton("UNIFORM_BATCH").replace(
        "from vllm.v1.attention.backends.utils import AttentionCGSupport",
        "from vllm.v1.attention.backends.utils import AttentionCGSupport\n"
        "from vllm.model_executor.layers.attention.mla_attention import QueryLenSupport",
    ) + "    query_len_support = QueryLenSupport.UNIFORM\n"
    r.commit({TRITON: fixed}, "[Bugfix][ROCm] TritonMLA: declare query_len_support (#47310)")
    r.commit(
        {FA: "from vllm.v1.attention.backends.utils import AttentionMetadataBuilder as B\n\n\n"
             "class FlashAttentionMetadataBuilder(B):\n"
             "    _cudagraph_support = AttentionCGSupport.ALWAYS\n"},
        "[Perf] FlashAttention always (#50000)",
    )
    store, stats, _ = collect(tmp_path / "kb.sqlite", r.path)
    assert stats.hits == 3  # #47310 changes no family line
    assert [f["class"] for f in store.pr_facts("42885")["findings"]] == [
        "TritonMLAMetadataBuilder"
    ]
    assert store.pr_facts("50000")["findings"] == []
    row = store.conn.execute(
        "SELECT effective, meets_rule FROM builder_levels "
        "WHERE pr_ref='50000' AND class_name='TritonMLAMetadataBuilder'"
    ).fetchone()
    assert (row[0], row[1]) == ("UNIFORM_BATCH", 1)
    # #47310 names no symbol, but it changes an input of the rule in a file with a finding:
    # it is collected, and it is the commit that fixed the finding
    assert (stats.rule_input_hits, stats.rule_input_kept, stats.findings_fixed) == (1, 1, 1)
    fix = store.pr_facts("47310")
    assert fix["symbol_changes"] == []
    assert any("input of the audit rule" in n for n in fix["notes"])
    ((key, prs),) = store.finding_fixes().items()
    assert key == ("cg-uniform-without-spec-decode", TRITON, "TritonMLAMetadataBuilder")
    assert [p.number for p in prs] == [47310]
    (sc,) = fix["state_changes"]
    assert (sc["value"], sc["before"], sc["after"]) == (
        "query_len_support", "QueryLenSupport.SINGLE_ONLY", "QueryLenSupport.UNIFORM")


def test_symlinks_are_not_read_as_python_and_every_warning_is_counted(tmp_path):
    """A symlink's blob is its target path, not source: a link whose target names the family
    is neither parsed (no 'not valid Python' warning) nor audited. The run's summary counts
    every warning it printed, the collector's own included."""
    import os

    from gitrepo import git

    repo = GitRepoBuilder.init(tmp_path / "src")
    base = "vllm/v1/attention/backends"
    repo.commit({f"{base}/real_attn.py": (
        "class RealMetadataBuilder(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n")},
        "[Feature] a real builder (#1)")
    os.symlink("../_cudagraph_support = (weird target", repo.path / base / "link_attn.py")
    git(repo.path, "add", "--", f"{base}/link_attn.py")
    repo.commit(None, "[Misc] a link named after the symbol (#2)")
    store, _stats, warnings = collect(tmp_path / "kb.sqlite", repo.path)
    assert not [w for w in warnings if "link_attn.py" in w], warnings
    assert changes(store, "1") == [
        ("RealMetadataBuilder", "_cudagraph_support", None, "UNIFORM_SINGLE_TOKEN_DECODE",
         "added")]
    with store:
        notes = [json.loads(r[0])["prkb"]["notes"]
                 for r in store.conn.execute("SELECT raw FROM prs")]
    assert not [n for ns in notes for n in ns if "link_attn" in n]
    # a missing blob warns; the summary counts that warning
    repo.commit({f"{base}/real_attn.py": (
        "class RealMetadataBuilder(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n")},
        "[Perf] raise it (#3)")
    blob = repo.blob_sha("HEAD", f"{base}/real_attn.py")
    repo.delete_object(blob)
    _store2, stats2, warnings2 = collect(tmp_path / "kb2.sqlite", repo.path)
    assert warnings2 and len(stats2.warnings) == len(warnings2)
    assert f"{len(warnings2)} warnings" in stats2.summary()


def test_a_record_without_a_change_says_why_it_was_kept(tmp_path, capsys):
    """A commit whose level line only moved changes no declaration: `prkb show` says so and
    names the files whose changed lines name the symbol."""
    from prkb.cli import main

    repo = GitRepoBuilder.init(tmp_path / "src")
    path = "vllm/v1/attention/backends/moved_attn.py"
    decl = "    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    repo.commit({path: "class MovedMetadataBuilder(AttentionMetadataBuilder):\n" + decl
                 + "    supports_sinks = False\n"}, "[Feature] a builder (#1)")
    repo.commit({path: "class MovedMetadataBuilder(AttentionMetadataBuilder):\n"
                 "    supports_sinks = False\n" + decl}, "[Misc] tidy (#2)")
    db = tmp_path / "kb.sqlite"
    collect(db, repo.path)[0].close()
    assert main(["--db", str(db), "show", "2", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["symbol_changes"] == []
    assert any(n.startswith("no declaration changed; kept because changed lines name the "
                            f"symbol in {path} (") for n in facts["notes"]), facts["notes"]
    assert main(["--db", str(db), "show", "2"]) == 0
    out = capsys.readouterr().out
    assert "no declaration change recorded" in out and "note: no declaration changed" in out
