"""Requests spent by the GitHub collector, on a local fake GitHub (REST and GraphQL).

    python3 bench/github_collect.py [--scenario synthetic|vllm|both] [--prs 500] [--touching 50]
        [--vllm-prs 30000]

Scenario "vllm" (issue 15): 30,000 PRs (a third open or closed unmerged), a git repository
whose history holds the 50 merged ones that touch the family as squash commits "(#N)", and 5
unmerged ones that touch it. Side by side, first run and second run with nothing new:
(a) today's REST discovery (every PR's file list) into an empty knowledge base; (b) `collect
git` on the repository, then git-assisted GraphQL discovery. Requests are counted by the
server, GraphQL points are the costs it charged.

Scenario "synthetic" (the original):
Starts the fake GitHub REST API of the tests on 127.0.0.1 with synthetic PRs, runs
``collect_github`` into a temporary knowledge base twice (the second time with nothing
changed), then runs a naive baseline written with PyGithub's high-level objects that fetches
every PR's details, files, reviews, review comments and conversation comments. Requests are
counted by the server.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ghscale import scaled_repo, write_history  # noqa: E402
from ghserver import FakeGitHub, synthetic_repo  # noqa: E402
from github import Auth, Github  # noqa: E402
from gitrepo import GitRepoBuilder  # noqa: E402

from prkb.collect.git import collect_git  # noqa: E402
from prkb.collect.github import collect_github  # noqa: E402
from prkb.collect.github_assisted import collect_github as collect_github_assisted  # noqa: E402
from prkb.profile import load_profile  # noqa: E402
from prkb.store import Store  # noqa: E402

TOKEN = "ghp_" + "bench" * 8


def naive(url: str, repo_name: str) -> int:
    """Every PR: details, files, reviews, review comments, issue comments. Returns PRs seen."""
    gh = Github(auth=Auth.Token(TOKEN), base_url=url, per_page=100, seconds_between_requests=None)
    repo = gh.get_repo(repo_name)
    n = 0
    for pr in repo.get_pulls(state="all", sort="updated", direction="desc"):
        pr.update()  # the full PR object
        list(pr.get_files())
        list(pr.get_reviews())
        list(pr.get_review_comments())
        list(pr.get_issue_comments())
        n += 1
    gh.close()
    return n


def synthetic(args: argparse.Namespace) -> bool:
    profile = load_profile()
    repo = synthetic_repo(args.prs, args.touching)
    with FakeGitHub(repo, token=TOKEN) as srv, tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "kb.sqlite") as store:
            t0 = time.perf_counter()
            first = collect_github(store, repo.full_name, profile, token=TOKEN, api_url=srv.url)
            t1 = time.perf_counter()
            req1 = srv.requests
            list_pages = srv.count("/pulls", 200) - srv.count("/pulls/", 200)
            files = srv.count("/files")
            srv.reset_counters()
            second = collect_github(store, repo.full_name, profile, token=TOKEN, api_url=srv.url)
            req2 = srv.requests
            not_modified = srv.count("", 304)
        srv.reset_counters()
        t2 = time.perf_counter()
        seen = naive(srv.url, repo.full_name)
        t3 = time.perf_counter()
        req_naive = srv.requests
    kept = max(first.kept, 1)
    per_kept = (req1 - list_pages - files) / kept
    print(f"synthetic repository: {args.prs} PRs, {args.touching} touching the family")
    print(f"collector, first run:  {req1} requests for {first.examined} examined PRs, "
          f"{first.kept} kept ({t1 - t0:.1f} s)")
    print(f"  per examined PR:     {req1 / max(first.examined, 1):.3f} requests")
    print(f"  discovery:           {list_pages} list pages + {files} file lists = "
          f"{(list_pages + files) / max(first.examined, 1):.3f} per examined PR")
    print(f"  per kept PR:         {per_kept:.2f} requests beyond discovery "
          f"(total per kept PR {req1 / kept:.1f})")
    print(f"collector, second run (nothing changed): {req2} requests "
          f"({not_modified} answered 304), {100 * req2 / max(req1, 1):.2f}% of the first run; "
          f"examined {second.examined}")
    print(f"naive baseline:        {req_naive} requests for {seen} PRs "
          f"({req_naive / max(seen, 1):.2f} per PR; {t3 - t2:.1f} s); its second run costs the "
          f"same")
    print(f"collector / naive:     {req1 / max(req_naive, 1):.3f} on the first run, "
          f"{req2 / max(req_naive, 1):.4f} on the second")
    ok = (list_pages + files) / max(first.examined, 1) <= 1.05 and per_kept <= 4 \
        and req2 < 0.01 * req1
    print("targets met" if ok else "TARGETS MISSED")
    return ok


class Tally:
    """Requests of one run, read off the server's log."""

    def __init__(self, srv: FakeGitHub, queries_before: int, seconds: float) -> None:
        self.requests = srv.requests
        self.rest = sum(1 for r in srv.log if r.method == "GET")
        self.files = sum(1 for r in srv.log if r.method == "GET" and r.path.endswith("/files"))
        qs = srv.graphql.queries[queries_before:] if srv._graphql is not None else []
        self.graphql = sum(1 for r in srv.log if r.method == "POST")
        self.points = sum(int(q["cost"]) for q in qs)
        self.batches = [q["query"].count("...PR") for q in qs if "fragment PR on" in q["query"]]
        self.listing = sum(1 for q in qs if "pullRequests(first" in q["query"])
        self.seconds = seconds


def run_counted(srv: FakeGitHub, fn: Any) -> tuple[Any, Tally]:
    srv.reset_counters()
    before = len(srv.graphql.queries)
    t0 = time.perf_counter()
    stats = fn()
    return stats, Tally(srv, before, time.perf_counter() - t0)


def kept_numbers(db: Path) -> set[int]:
    with Store(db) as store:
        return {n for n, _s, _r in store.collected_prs("vllm-project/vllm")}


def vllm(args: argparse.Namespace) -> bool:
    profile = load_profile()
    repo = scaled_repo(total=args.vllm_prs, touching=50, touching_unmerged=5)
    name = repo.full_name
    with FakeGitHub(repo, token=TOKEN) as srv, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git = GitRepoBuilder.init(root / "src")
        t0 = time.perf_counter()
        write_history(repo, git)
        db_b = root / "b.sqlite"
        with Store(db_b) as store:
            collect_git(store, str(git.path), profile, quiet=True, warn=lambda m: None)
        t_git = time.perf_counter() - t0
        db_a = root / "a.sqlite"

        def rest() -> Any:
            with Store(db_a) as store:
                return collect_github(store, name, profile, token=TOKEN, api_url=srv.url)

        def assisted() -> Any:
            with Store(db_b) as store:
                return collect_github_assisted(store, name, profile, token=TOKEN,
                                               api_url=srv.url, discovery="kb")

        a1, ta1 = run_counted(srv, rest)
        _a2, ta2 = run_counted(srv, rest)
        b1, tb1 = run_counted(srv, assisted)
        _b2, tb2 = run_counted(srv, assisted)
        kept_a, kept_b = kept_numbers(db_a), kept_numbers(db_b)
    merged = len(repo.touching)
    unmerged_listed = b1.listed
    candidates = tb1.files
    merged_batches = sum(1 for b in tb1.batches if b >= 25)
    print(f"vLLM-shaped repository: {args.vllm_prs} PRs ({args.vllm_prs // 3} unmerged),"
          f" {merged} merged + {len(repo.touching_unmerged)} unmerged touching the "
          f"family; git history written and collected in {t_git:.1f} s")
    rows = [
        ("requests, first run", ta1.requests, tb1.requests),
        ("  REST requests", ta1.rest, tb1.rest),
        ("  REST file lists", ta1.files, tb1.files),
        ("  GraphQL queries", ta1.graphql, tb1.graphql),
        ("  GraphQL points", ta1.points, tb1.points),
        ("PRs kept", a1.kept, len(kept_b)),
        ("seconds, first run", f"{ta1.seconds:.1f}", f"{tb1.seconds:.1f}"),
        ("requests, second run (nothing new)", ta2.requests, tb2.requests),
        ("  GraphQL points", ta2.points, tb2.points),
        ("seconds, second run", f"{ta2.seconds:.1f}", f"{tb2.seconds:.1f}"),
    ]
    print(f"{'':38} {'(a) REST discovery':>20} {'(b) git + GraphQL':>20}")
    for label, x, y in rows:
        print(f"{label:38} {x!s:>20} {y!s:>20}")
    per_merged = merged_batches / max(merged, 1)
    print(f"(b) known PRs read in GraphQL batches of {tb1.batches}; {tb1.listing} listing pages "
          f"for {unmerged_listed} unmerged PRs; {candidates} candidates' file lists")
    checks = {
        f"merged kept PRs: {per_merged:.3f} requests each (<= 0.2, batches of 25+)":
            per_merged <= 0.2 and all(b >= 25 for b in tb1.batches[:merged_batches]),
        f"unmerged: {tb1.listing} listing pages <= {-(-unmerged_listed // 100) + 1} "
        f"(one per 100 listed), one file list per candidate ({candidates} = examined "
        f"{b1.examined})": tb1.listing <= -(-unmerged_listed // 100) + 1
        and candidates == b1.examined,
        f"(b) {tb1.requests} <= a tenth of (a)'s {ta1.requests}": tb1.requests * 10 <= ta1.requests,
        f"(b) second run {tb2.requests} <= 2 requests": tb2.requests <= 2,
        f"kept sets identical ({len(kept_a)} PRs)": kept_a == kept_b
        and kept_a == repo.touching | repo.touching_unmerged,
    }
    for what, ok in checks.items():
        print(f"  {'ok  ' if ok else 'MISS'} {what}")
    ok = all(checks.values())
    print("targets met" if ok else "TARGETS MISSED")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", choices=("synthetic", "vllm", "both"), default="both")
    ap.add_argument("--prs", type=int, default=500)
    ap.add_argument("--touching", type=int, default=50)
    ap.add_argument("--vllm-prs", type=int, default=30_000)
    args = ap.parse_args()
    ok = True
    if args.scenario in ("synthetic", "both"):
        ok = synthetic(args) and ok
    if args.scenario in ("vllm", "both"):
        ok = vllm(args) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
