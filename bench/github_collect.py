"""Requests spent by the GitHub collector, against a naive baseline, on a local fake GitHub.

    python3 bench/github_collect.py [--prs 500] [--touching 50]

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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ghserver import FakeGitHub, synthetic_repo  # noqa: E402
from github import Auth, Github  # noqa: E402

from prkb.collect.github import collect_github  # noqa: E402
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prs", type=int, default=500)
    ap.add_argument("--touching", type=int, default=50)
    args = ap.parse_args()
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
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
