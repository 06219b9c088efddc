"""End to end on a real git repository: the git collector's records (declaration changes and
blamed lines) become timeline and lineage edges, and ``prkb timeline`` follows a rename."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder

from prkb.cli import main
from prkb.graph import build_relations
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()
PATH = "vllm/v1/attention/backends/foo_attn.py"


def source(attr: str, level: str, extra: str = "") -> str:
    return (
        "from typing import ClassVar\n\n"
        "class FooBuilder(AttentionMetadataBuilder):\n"
        f"    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{level}\n"
        f"{extra}"
    )


def test_collected_history_links_by_timeline_and_blame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("prkb.collect.git")
    from prkb.collect.git import collect_git

    repo = GitRepoBuilder.init(tmp_path / "repo")
    repo.commit({"README.md": "x\n"}, "init")
    repo.commit({PATH: source("cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE")},
                "[Attention] add Foo (#10)")
    repo.commit({PATH: source("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE")},
                "rename the support attribute (#20)")
    repo.commit({PATH: source("_cudagraph_support", "UNIFORM_BATCH")},
                "[Perf] Foo: uniform batch (#30)")
    repo.commit({PATH: source("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE")},
                "[Bugfix] Foo: lower the level again (#40)",
                body="The raise was added in #30 and crashes with MTP.")
    db = tmp_path / "kb.sqlite"
    with Store(db) as st:
        collect_git(st, str(repo.path), PROFILE, quiet=True, warn=lambda _m: None)
        build_relations(st, PROFILE)
        rows = {
            (r["source"], r["target"]): (r["type"], r["origin"])
            for r in st.conn.execute("SELECT * FROM relations")
        }
    assert rows[("pr:20", "pr:10")][0] == "modifies-declaration-of"
    # #20 only renamed the attribute: #30's change points past it to the value #10 set
    assert ("pr:30", "pr:20") not in rows
    # text ("added in #30" in a [Bugfix]), the timeline (lowered after a raise) and the blame of
    # the changed line all point at #30; the strongest type wins
    assert rows[("pr:40", "pr:30")][0] == "fixes-regression-from"
    # #20 only renamed the line #30 changed: timeline and blame both pass it and land on #10
    assert rows[("pr:30", "pr:10")] == ("modifies-declaration-of", "timeline")

    assert main(["--db", str(db), "timeline", "FooBuilder", "--json"]) == 0
    tl = json.loads(capsys.readouterr().out)
    assert [c["pr"] for c in tl["changes"]] == [10, 20, 30, 40]
    assert tl["spellings"] == ["cudagraph_support", "_cudagraph_support"]
    assert tl["declared_now"] == "UNIFORM_SINGLE_TOKEN_DECODE"

    assert main(["--db", str(db), "lineage", "40", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [a["number"] for a in res["ancestors"]] == [30, 10]
