"""Git-assisted GitHub collection: `collect git` finds the PRs, GraphQL fills them in.

A lazily generated repository (tests/ghscale.py) on the fake GitHub, whose GraphQL endpoint
validates every query against GitHub's real schema; the merged PRs that touch the family are
written into a real git repository as squash commits "(#N)" and collected with `collect git`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ghgraphql import require_schema
from ghscale import World
from ghserver import FakeGitHub

from prkb.collect.git import collect_git
from prkb.collect.github import GithubStats
from prkb.collect.github_assisted import collect_github
from prkb.profile import load_profile
from prkb.store import Store

# heavy: a large generated GitHub history over the local API server: not in the fast tier
pytestmark = pytest.mark.heavy

REPO = "vllm-project/vllm"
TOKEN = "ghp_" + "KbG1t" * 8


@pytest.fixture(autouse=True)
def _schema() -> None:
    require_schema()


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture()
def server(world: World) -> Iterator[FakeGitHub]:
    with FakeGitHub(world.repo, token=TOKEN) as srv:
        yield srv


def run(world: World, srv: FakeGitHub, *, token: str | None = TOKEN, api: str = "",
        warnings: list[str] | None = None, **kw: Any) -> GithubStats:
    with Store(world.db) as store:
        return collect_github(store, REPO, load_profile(), token=token, api_url=srv.url + api,
                              warn=(warnings if warnings is not None else []).append, **kw)


def stored(world: World) -> dict[int, dict[str, Any]]:
    with Store(world.db) as store:
        return {n: rec for n, _src, rec in store.collected_prs(REPO)}


def test_git_found_prs_get_their_discussion_in_a_few_batches(world: World,
                                                             server: FakeGitHub) -> None:
    before = stored(world)
    assert set(before) == world.repo.touching  # git found the merged ones, code only
    assert all(r["source"] == "git" and not r["reviews"] for r in before.values())
    stats = run(world, server)
    assert stats.mode == "kb" and stats.complete
    after = stored(world)
    assert set(after) == world.kept  # the unmerged ones came from the listing
    for n in world.repo.touching:
        rec, pr = after[n], world.repo.prs[n]
        assert rec["source"] == "git+github"
        # code facts from git: the squash commit, its patch and the declaration change
        assert rec["merge_commit_sha"] == world.shas[n] != pr["merge_commit_sha"]
        assert rec["files"] == before[n]["files"] and rec["files"][0]["patch"]
        assert rec["prkb"]["symbol_changes"] == before[n]["prkb"]["symbol_changes"]
        # discussion from GitHub
        assert rec["title"] == pr["title"] and rec["body"] == pr["body"]
        assert rec["created_at"] == pr["created_at"] and rec["html_url"] == pr["html_url"]
        assert [r["state"] for r in rec["reviews"]] == ["APPROVED"]
        assert rec["review_comments"][0]["id"] == pr["_review_comments"][0]["id"]
        assert [c["body"] for c in rec["comments"]] == ["All checks passed."]
    for n in world.repo.touching_unmerged:
        rec = after[n]
        assert rec["source"] == "github" and rec["state"] in ("open", "closed")
        assert rec["merge_commit_sha"] is None and rec["files"][0]["patch"]
    # REST: one file list per candidate; GraphQL: the watch query, batches, 9 listing pages
    rest = [r for r in server.log if r.method == "GET"]
    candidates = {r.path.split("/")[-2] for r in rest}
    assert all(r.path.endswith("/files") for r in rest), {r.path for r in rest}
    unmerged = sum(1 for n in world.repo.prs if n - 10_000 < 900 and (n - 10_000) % 3 == 0)
    listed_pages = -(-unmerged // 100)
    assert stats.listed == unmerged
    assert stats.examined == len(candidates) < unmerged // 5
    assert stats.graphql <= listed_pages + 6, [q["query"][:60] for q in server.graphql.queries]
    assert stats.requests == stats.graphql + len(rest) == server.requests


def test_rerun_with_nothing_new_is_one_request_and_a_change_is_read(world: World,
                                                                    server: FakeGitHub) -> None:
    run(world, server)
    first = stored(world)
    server.reset_counters()
    again = run(world, server)
    assert server.requests == again.requests <= 2 and again.complete
    assert again.kept == 0 and again.examined == 0
    assert stored(world) == first
    # a new comment on a git-found PR: read again, merged again, nothing else
    n = sorted(world.repo.touching)[3]
    server.touch(n, "2030-01-01T00:00:00Z", comment="Confirmed on MI300 with MTP.")
    server.reset_counters()
    third = run(world, server)
    rec = stored(world)[n]
    assert rec["comments"][-1]["body"] == "Confirmed on MI300 with MTP."
    assert rec["source"] == "git+github" and rec["files"] == first[n]["files"]
    assert third.fetched == 1 and third.requests <= 3 and third.updated == 1


def test_report_shows_the_discussion_and_the_graph_the_alternative(world: World,
                                                                   server: FakeGitHub) -> None:
    run(world, server)
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "prkb", "--db", str(world.db), "-q", "report", str(world.fix),
         "--lang", "en"], capture_output=True, text=True, env=env, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    assert "graphs were captured too wide" in text  # the motivation, from GitHub
    assert "Checked with spec decode." in text  # a review highlight
    with Store(world.db) as store:
        facts = store.pr_facts(world.closed, REPO)
    assert facts["state"] == "closed"
    # both fix the same regression: the closed one is the alternative the merged fix replaced
    # (older and closed unmerged: "supersedes", else "alternative-to")
    alt = [(r["type"], r["direction"]) for r in facts["relations"] if r["other"] == world.fix]
    assert alt in ([("supersedes", "in")], [("alternative-to", "out")]), facts["relations"]


def test_github_first_then_git_merges_the_same_way(tmp_path: Path) -> None:
    w = World(tmp_path / "a")
    with FakeGitHub(w.repo, token=TOKEN) as srv:
        run(w, srv)
    merged = stored(w)
    # the other order: GitHub's records first (listing every PR), then git
    other = tmp_path / "b.sqlite"
    with FakeGitHub(w.repo, token=TOKEN) as srv, Store(other) as store:
        collect_github(store, REPO, load_profile(), token=TOKEN, api_url=srv.url,
                       discovery="list")
        assert {n for n, _s, _r in store.collected_prs(REPO)} == w.kept
        collect_git(store, str(w.git.path), load_profile(), quiet=True, warn=lambda m: None)
        both = {n: r for n, _s, r in store.collected_prs(REPO)}
    for n in w.repo.touching:
        assert both[n]["source"] == "git+github"
        for key in ("title", "body", "reviews", "comments", "merge_commit_sha", "files"):
            assert both[n][key] == merged[n][key], (n, key)


def test_without_a_token_rest_reads_the_known_numbers(world: World, server: FakeGitHub) -> None:
    warnings: list[str] = []
    stats = run(world, server, token=None, warnings=warnings)
    assert len([w for w in warnings if "GraphQL" in w]) == 1
    assert server.count("graphql") == 0
    after = stored(world)
    assert set(after) == world.repo.touching  # nothing unmerged without the listing
    assert all(after[n]["source"] == "git+github" and after[n]["reviews"]
               for n in world.repo.touching)
    # the PR, its reviews, review comments and comments; the numbers they name cost two
    known = len(world.repo.touching)
    assert stats.requests <= 4 * known + 2 * (stats.fetched - known) + stats.missing


def test_enterprise_endpoint_follows_api_url(world: World, server: FakeGitHub) -> None:
    stats = run(world, server, api="/api/v3")
    assert stats.complete and set(stored(world)) == world.kept
    posts = {r.path for r in server.log if r.method == "POST"}
    assert posts == {"/api/graphql"}


def test_cli_from_kb_and_json(world: World, server: FakeGitHub) -> None:
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin",
           "GH_TOKEN": TOKEN}
    out = subprocess.run(
        [sys.executable, "-m", "prkb", "--db", str(world.db), "collect", "github", REPO,
         "--api-url", server.url, "--from-kb", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert got["mode"] == "kb" and got["kept"] == len(world.kept) and got["complete"]
    assert TOKEN not in out.stdout + out.stderr
