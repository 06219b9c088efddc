"""The GraphQL client and PR queries against the fake GitHub's GraphQL endpoint, which
validates every query against GitHub's real schema (tests/ghgraphql.py)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ghgraphql import require_schema, threads_of
from ghscale import scaled_repo
from ghserver import FakeGitHub, FakeRepo, _ts, file_entry, level_patch, make_pr, plain_patch

from prkb.collect.github import build_record
from prkb.collect.github_graphql import (
    BatchSizer,
    GraphQLClient,
    GraphQLError,
    GraphQLRateLimited,
    GraphQLUnavailable,
    graphql_endpoint,
)
from prkb.collect.github_graphql_prs import (
    NODES_PER_PR,
    NOT_A_PR,
    NOT_FOUND,
    Fetched,
    fetch_pull_requests,
    list_unmerged,
    rest_record,
)
from prkb.profile import load_profile

try:
    from prkb.records import normalize_record  # after the collector refactor (issue 14)
except ImportError:
    from prkb.collect.record import normalize_record

REPO = "vllm-project/vllm"
TOKEN = "ghp_" + "Gq1L" * 9
AITER = "vllm/v1/attention/backends/rocm_aiter_fa.py"


@pytest.fixture(autouse=True)
def _schema() -> None:
    require_schema()


def plain_repo(n: int, start: int = 5000) -> FakeRepo:
    repo = FakeRepo()
    for i in range(n):
        num = start + i
        repo.prs[num] = make_pr(
            num, f"[Misc] change {i}",
            [file_entry(AITER, level_patch("AiterFlashAttentionMetadataBuilder", "NEVER",
                                           "ALWAYS")),
             file_entry(f"docs/page_{i}.md", plain_patch("d", i), status="added")],
            day=i, body=f"Body {i}, see #{num - 1}." if i % 4 else "", labels=("ready",),
            merged=i % 3 != 0,
            reviews=[{"id": num * 10, "user": {"login": "rev"}, "state": "APPROVED",
                      "body": "ok", "submitted_at": _ts(i, 3)}],
            review_comments=[
                {"id": num * 10 + 1, "user": {"login": "rev"}, "path": AITER,
                 "diff_hunk": "@@ -1 +1 @@", "body": "why?", "created_at": _ts(i, 1),
                 "line": 7, "original_line": 6, "commit_id": "ab" * 20,
                 "original_commit_id": "cd" * 20},
                {"id": num * 10 + 2, "user": {"login": "dev"}, "path": AITER,
                 "diff_hunk": "@@ -1 +1 @@", "body": "because", "created_at": _ts(i, 2),
                 "in_reply_to_id": num * 10 + 1},
            ],
            comments=[{"id": num * 10 + 3, "user": {"login": "ci"}, "body": "green",
                       "created_at": _ts(i, 4)}],
        )
    return repo


@pytest.fixture()
def server() -> Iterator[FakeGitHub]:
    with FakeGitHub(plain_repo(60), token=TOKEN) as srv:
        yield srv


def client(srv: FakeGitHub, **kw: Any) -> GraphQLClient:
    return GraphQLClient.connect(token=TOKEN, api_url=srv.url, **kw)


def posts(srv: FakeGitHub) -> int:
    return sum(1 for r in srv.log if r.method == "POST")


def aliases(srv: FakeGitHub) -> list[int]:
    """PRs asked for by number in each query the server ran."""
    return [q["query"].count("issueOrPullRequest(") for q in srv.graphql.queries]


def comparable(rec: dict[str, Any]) -> dict[str, Any]:
    out = normalize_record(rec)
    for f in out["files"]:
        f["patch"] = None  # GraphQL has no patches: they stay from git (or REST)
    out["body"] = out["body"] or None  # real REST sends null for no description, as GraphQL ""
    return out


def test_a_batch_of_prs_is_one_request_and_matches_the_rest_record(server: FakeGitHub) -> None:
    gql = client(server)
    numbers = list(range(5000, 5040))
    got = list(fetch_pull_requests(gql, REPO, numbers, sizer=BatchSizer(NODES_PER_PR, start=40)))
    assert posts(server) == 1 and gql.stats.requests == 1 and aliases(server) == [40]
    assert [f.number for f in got] == numbers and all(f.node and not f.missing for f in got)
    assert gql.stats.points == server.graphql.queries[0]["cost"] > 0
    profile = load_profile()
    for f in got:
        assert f.node is not None
        pr = server.repo.prs[f.number]
        rest = build_record(
            pr, pr["_files"],
            {"reviews": pr["_reviews"], "review_comments": pr["_review_comments"],
             "comments": pr["_comments"]},
            REPO, profile,
        )
        mine = rest_record(f.node, REPO, home_repo=profile.repo)
        assert comparable(mine) == comparable(rest), f.number
        # both keep what rebuilds a thread: ids, the reply link, lines and commits
        first, reply = comparable(mine)["review_comments"]
        assert first["id"] == f.number * 10 + 1 and reply["in_reply_to_id"] == first["id"]
        assert (first["line"], first["original_line"]) == (7, 6)
        assert first["commit_id"] == "ab" * 20 and first["original_commit_id"] == "cd" * 20
        if pr["merged_at"] is None:  # REST's merge_commit_sha of an open PR: its test merge
            assert pr["merge_commit_sha"] and rest["merge_commit_sha"] is None
        assert mine["base"]["sha"] == pr["base"]["sha"] and mine["head"]["sha"] == pr["head"]["sha"]
    recs = [rest_record(f.node, REPO) for f in got if f.node]
    assert {r["state"] for r in recs} == {"merged", "open"}
    assert all(bool(r["merge_commit_sha"]) == (r["state"] == "merged") for r in recs)


def test_github_schema_refuses_what_github_refuses(server: FakeGitHub) -> None:
    gql = client(server)
    # REST's names are not GraphQL's: PullRequestChangedFile has path, not filename
    with pytest.raises(GraphQLError, match="filename"):
        gql.query('query { repository(owner: "vllm-project", name: "vllm") { '
                  "pullRequest(number: 5001) { files(first: 5) { nodes { filename } } } } }")
    with pytest.raises(GraphQLError, match="MISSING_PAGINATION_BOUNDARIES"):
        gql.query('query { repository(owner: "vllm-project", name: "vllm") { '
                  "pullRequest(number: 5001) { reviews { nodes { state } } } } }")
    with pytest.raises(GraphQLError, match="EXCESSIVE_PAGINATION"):
        gql.query('query { repository(owner: "vllm-project", name: "vllm") { '
                  "pullRequest(number: 5001) { comments(first: 101) { nodes { body } } } } }")
    with pytest.raises(GraphQLError, match="MAX_NODE_LIMIT_EXCEEDED"):
        gql.query('query { repository(owner: "vllm-project", name: "vllm") { '
                  "pullRequests(first: 100) { nodes { reviewThreads(first: 100) { nodes { "
                  "comments(first: 100) { nodes { body } } } } } } } }")
    assert server.graphql.queries == []  # nothing refused was executed
    # and the client's own queries pass the same checks
    assert len(list(fetch_pull_requests(gql, REPO, [5001, 5002]))) == 2
    assert len(server.graphql.queries) == 1


def test_overflowing_connections_are_paged(tmp_path: Path) -> None:
    repo = plain_repo(3)
    big = repo.prs[5001]
    big["labels"] = [{"name": f"l{k}"} for k in range(105)]
    big["_files"] = [file_entry(f"src/f{k}.py", plain_patch("x", k)) for k in range(230)]
    big["_reviews"] = [{"id": k, "user": {"login": f"r{k}"}, "state": "COMMENTED",
                        "body": f"review {k}", "submitted_at": _ts(1, k)} for k in range(120)]
    big["_comments"] = [{"id": k, "user": {"login": "u"}, "body": f"c{k}",
                         "created_at": _ts(2, k)} for k in range(250)]
    rc: list[dict[str, Any]] = []
    for t in range(70):  # 70 threads; thread 3 and thread 60 have 45 comments
        for k in range(45 if t in (3, 60) else 2):
            rc.append({"id": 10_000 + t * 100 + k, "user": {"login": "rev"},
                       "path": f"src/f{t}.py", "diff_hunk": f"@@ -{t} +{t} @@",
                       "body": f"t{t} c{k}", "created_at": _ts(3, t * 100 + k),
                       "in_reply_to_id": None if k == 0 else 10_000 + t * 100})
    big["_review_comments"] = rc
    with FakeGitHub(repo, token=TOKEN) as srv:
        gql = client(srv)
        got = {f.number: f for f in fetch_pull_requests(gql, REPO, [5000, 5001, 5002])}
        node = got[5001].node
        assert node is not None
        rec = rest_record(node, REPO)
        assert [lab["name"] for lab in rec["labels"]] == [f"l{k}" for k in range(105)]
        assert [f["filename"] for f in rec["files"]] == [f"src/f{k}.py" for k in range(230)]
        assert [r["body"] for r in rec["reviews"]] == [f"review {k}" for k in range(120)]
        assert [c["body"] for c in rec["comments"]] == [f"c{k}" for k in range(250)]
        assert len(threads_of(big)) == 70
        assert [c["body"] for c in rec["review_comments"]] == [c["body"] for c in rc]
        # the small PRs of the batch are complete too
        assert len(rest_record(got[5000].node or {}, REPO)["review_comments"]) == 2
        # one batch query, then follow-ups that bundle the pages of several connections:
        # files 3 pages, comments 3, labels 2, reviews 2, threads 2; thread comments after 20
        assert aliases(srv)[0] == 3
        assert gql.stats.requests == posts(srv) == len(srv.graphql.queries) <= 4
        follow = [q["query"] for q in srv.graphql.queries[1:]]
        assert all("issueOrPullRequest" not in q for q in follow)
        assert any("node(id:" in q for q in follow)  # a thread's own comments, by its id


def test_unknown_numbers_are_recorded_and_the_batch_kept(server: FakeGitHub) -> None:
    server.repo.issues.add(4990)  # an issue, not a PR
    gql = client(server)
    asked = [5003, 4990, 5004, 77777, 5005]
    got = {f.number: f for f in fetch_pull_requests(gql, REPO, asked)}
    assert posts(server) == 1
    assert got[4990] == Fetched(4990, None, NOT_A_PR)
    assert got[77777] == Fetched(77777, None, NOT_FOUND)
    assert all(got[n].node and got[n].node["number"] == n for n in (5003, 5004, 5005))


def test_unknown_repository_is_an_error(server: FakeGitHub) -> None:
    with pytest.raises(GraphQLError, match="nope/nope not found"):
        list(fetch_pull_requests(client(server), "nope/nope", [5001]))


def test_endpoint_follows_the_rest_base_url(server: FakeGitHub) -> None:
    assert graphql_endpoint("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_endpoint("https://api.github.com/") == "https://api.github.com/graphql"
    assert graphql_endpoint("https://ghe.example.com/api/v3") == \
        "https://ghe.example.com/api/graphql"
    assert graphql_endpoint("https://ghe.example.com/api/v3/") == \
        "https://ghe.example.com/api/graphql"
    with pytest.raises(Exception, match="http"):
        graphql_endpoint("ftp://x")
    gql = GraphQLClient.connect(token=TOKEN, api_url=server.url + "/api/v3")
    assert gql.endpoint == gql.requester.graphql_url  # PyGithub agrees
    assert len(list(fetch_pull_requests(gql, REPO, [5001]))) == 1
    assert [r.path for r in server.log] == ["/api/graphql"]


def test_no_token_is_a_one_line_fallback_error(server: FakeGitHub) -> None:
    for token in (None, ""):
        with pytest.raises(GraphQLUnavailable) as e:
            GraphQLClient.connect(token=token, api_url=server.url)
        assert "\n" not in str(e.value) and "REST" in str(e.value)
    assert server.requests == 0


def test_batch_size_follows_the_reported_cost(server: FakeGitHub) -> None:
    gql = client(server)
    list(fetch_pull_requests(gql, REPO, range(5000, 5060)))
    costs = [q["cost"] for q in server.graphql.queries]
    assert aliases(server) == [25, 35]  # cheap: grows to the cap of 50 (35 were left)
    assert costs[0] < 50
    server.reset_counters()
    server.graphql.queries.clear()
    server.gql_cost_factor = 8  # the same queries now cost eight times as much
    gql = client(server)
    list(fetch_pull_requests(gql, REPO, range(5000, 5060)))
    sizes = aliases(server)
    cost0 = server.graphql.queries[0]["cost"]
    assert sizes[0] == 25 and sizes[1] == int(50 / (cost0 / 25)) < 25
    assert sum(sizes) == 60 and all(q["cost"] <= 60 for q in server.graphql.queries[1:])
    # the node limit bounds the size too
    assert BatchSizer(NODES_PER_PR * 1000).size == 1


def test_low_budget_stops_cleanly_or_waits_for_the_reset(server: FakeGitHub) -> None:
    server.gql_remaining = 130  # the first batch leaves less than the reserve of 100
    gql = client(server, max_wait=5)
    got: list[Fetched] = []
    with pytest.raises(GraphQLRateLimited, match="points left"):
        got.extend(fetch_pull_requests(gql, REPO, range(5000, 5060)))
    assert len(got) == 25 and posts(server) == 1  # the first batch kept, nothing more sent
    # a reset one second ahead is waited for (the fake's clock is moved instead of sleeping)
    server.reset_counters()
    server.gql_remaining, server.gql_reset_at = 0, __import__("time").time() + 1
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        server.gql_reset_at = 0  # the reset has come

    gql = client(server, max_wait=5, sleep=sleep)
    got = list(fetch_pull_requests(gql, REPO, range(5000, 5030)))
    assert len(got) == 30 and all(f.node for f in got)
    assert len(waits) == 1 and 0 < waits[0] <= 5  # one RATE_LIMITED answer, then the reset


def test_points_per_minute_are_spread(server: FakeGitHub) -> None:
    now = [1000.0]
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    gql = client(server, points_per_minute=20, sleep=sleep, clock=lambda: now[0])
    list(fetch_pull_requests(gql, REPO, range(5000, 5050), sizer=BatchSizer(NODES_PER_PR,
                                                                           start=25,
                                                                           maximum=25)))
    costs = [q["cost"] for q in server.graphql.queries]
    assert len(costs) == 2 and costs[0] + costs[1] > 20
    assert waits == [60.0]


def test_token_never_appears_in_logs_or_errors(
    server: FakeGitHub, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    gql = client(server)
    list(fetch_pull_requests(gql, REPO, [5001, 99999]))
    for bad in ("query { viewer { nosuchfield } }", "query { repository(owner: \"x\") { id } }"):
        with pytest.raises(GraphQLError) as e:
            gql.query(bad)
        texts.append(str(e.value))
    other = GraphQLClient.connect(token=TOKEN[::-1], api_url=server.url)  # a wrong token: 401
    with pytest.raises(GraphQLError) as e:
        list(fetch_pull_requests(other, REPO, [5001]))
    assert e.value.status == 401
    texts.append(str(e.value))
    server.gql_remaining = 0
    with pytest.raises(GraphQLRateLimited) as e2:
        list(fetch_pull_requests(client(server, max_wait=0), REPO, [5001]))
    texts.append(str(e2.value))
    out, err = capfd.readouterr()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert any("github" in r.name for r in caplog.records)  # PyGithub did log its requests
    everything = "\n".join([*texts, out, err, logged, repr(gql.stats)])
    assert TOKEN not in everything and TOKEN[::-1] not in everything
    assert TOKEN[4:20] not in everything


def test_unmerged_listing_stops_at_the_watermark() -> None:
    repo = plain_repo(30)  # merged and open ones
    for i in range(260):
        n = 8000 + i
        repo.prs[n] = make_pr(n, f"[Bugfix] alternative {i}",
                              [file_entry(f"src/u{i}.py", plain_patch("u", i))],
                              day=100 + i, merged=False)
        if i % 2:
            repo.prs[n]["state"] = "closed"  # closed without merging
            repo.prs[n]["closed_at"] = repo.prs[n]["updated_at"]
    repo.prs[8259]["_files"] = [file_entry(f"src/w{k}.py", plain_patch("w", k))
                                for k in range(150)]
    unmerged = sorted((p for p in repo.prs.values() if not p["merged_at"]),
                      key=lambda p: p["updated_at"], reverse=True)
    with FakeGitHub(repo, token=TOKEN) as srv:
        gql = client(srv)
        every = list(list_unmerged(gql, REPO))
        assert [p.number for p in every] == [p["number"] for p in unmerged]
        assert {p.state for p in every} == {"open", "closed"}
        assert every[0].number == 8259 and every[0].paths == [f"src/w{k}.py" for k in range(150)]
        assert posts(srv) == 3 + 1  # 270 listed: 3 pages, and one follow-up for 150 paths
        srv.reset_counters()
        mark = unmerged[119]["updated_at"]  # the last run saw everything up to here
        again = list(list_unmerged(gql, REPO, since=mark))
        assert [p.number for p in again] == [p["number"] for p in unmerged[:120]]
        assert posts(srv) == 2 + 1
        srv.reset_counters()
        assert [p.number for p in list_unmerged(gql, REPO, since=every[0].updated_at)] == [8259]
        srv.reset_counters()
        srv.touch(8000, "2099-01-01T00:00:00Z")
        fresh = list(list_unmerged(gql, REPO, since="2030-01-01T00:00:00Z"))
        assert [p.number for p in fresh] == [8000] and posts(srv) == 1


def test_a_repository_of_vllm_size_is_generated_lazily() -> None:
    t0 = time.perf_counter()
    repo = scaled_repo()
    assert len(repo.prs) == 30_000 and time.perf_counter() - t0 < 5
    assert len(repo.touching) == 50 and len(repo.touching_unmerged) == 5
    with FakeGitHub(repo, token=TOKEN) as srv:
        gql = client(srv)
        asked = sorted(repo.touching)
        got = list(fetch_pull_requests(gql, REPO, asked, sizer=BatchSizer(NODES_PER_PR,
                                                                         start=50)))
        assert posts(srv) == 1 and all(f.node for f in got)
        rec = rest_record(got[0].node or {}, REPO)
        assert rec["state"] == "merged" and rec["reviews"] and rec["review_comments"]
        path = repo.changes[asked[0]][0]
        assert rec["files"][0]["filename"] == path
        # the newest unmerged PRs, down to a watermark: only the listed pages are built
        newest = sorted((repo.prs.meta(n)[1], n) for n in repo.prs
                        if repo.prs.meta(n)[0] != "MERGED")[-150:]
        srv.reset_counters()
        listed = list(list_unmerged(gql, REPO, since=newest[0][0]))
        assert [p.number for p in listed] == [n for _u, n in reversed(newest)]
        assert posts(srv) == 2 and repo.prs.built < 400
        assert sum(1 for n in repo.prs if repo.prs.meta(n)[0] != "MERGED") == 10_000
