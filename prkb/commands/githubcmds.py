"""collect github."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..progress import bar, warn
from . import group, open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    collect = group(sub, "collect", "collect PRs that touch the tracked symbol from a source")
    p = collect.add_parser(
        "github",
        parents=[common],
        help="collect a GitHub repository's PRs that touch the symbol family (PyGithub)",
        description=(
            "With git-collected records of the repository in the knowledge base (collect git "
            "first), starts from the PRs they name and reads them through GitHub's GraphQL API "
            "in batches (git's code facts, GitHub's discussion: one record), lists only open and "
            "closed-unmerged PRs (100 a request) and searches the family spellings; a candidate's "
            "patch decides. Otherwise lists the repository's pull requests by last update, "
            "newest first, reads each PR's file list, and keeps the PRs whose patches add or "
            "remove a line naming a family "
            "spelling (or a dynamic-support method) as a whole identifier. For a kept PR it also "
            "reads reviews, review comments and conversation comments, then analyses and stores "
            "it like an imported record. Incremental and resumable: a second run asks only for "
            "what changed (an unchanged first page costs one conditional request answered 304), "
            "and a run stopped at any point continues where it stopped. Token from GH_TOKEN, "
            "else GITHUB_TOKEN; without one it runs within the unauthenticated limit."
        ),
    )
    p.add_argument("repo", metavar="OWNER/REPO", help="repository, e.g. vllm-project/vllm")
    p.add_argument(
        "--since", metavar="YYYY-MM-DD", default=None,
        help="only PRs updated on or after this date (default: all, or since the last run)",
    )
    p.add_argument(
        "--max", dest="max_prs", metavar="N", type=int, default=None,
        help="examine at most N new or changed PRs in this run (run again to continue)",
    )
    p.add_argument(
        "--api-url", metavar="URL", default=None,
        help="API root (GitHub Enterprise: https://HOST/api/v3; default https://api.github.com)",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--from-kb", dest="discovery", action="store_const", const="kb",
        help="start from the PRs the knowledge base knows (git's, and the numbers their texts "
        "and relations name) and read them through GraphQL in batches; list only open and "
        "closed-unmerged PRs (default when the knowledge base holds git-collected records of "
        "the repository)",
    )
    how.add_argument(
        "--list-all", dest="discovery", action="store_const", const="list",
        help="read every PR's file list to find the PRs that touch the family (one request "
        "per PR: the default without git-collected records)",
    )
    p.set_defaults(discovery="auto")
    p.add_argument("--json", action="store_true", help="print the run's counts as JSON")
    p.set_defaults(func=cmd_collect_github)


def cmd_collect_github(args: argparse.Namespace) -> int:
    from ..collect.github import GithubStats, token_from_env
    from ..collect.github_http import DEFAULT_API_URL
    from ..collect.github_kb import collect_github

    profile = profile_of(args)
    token = token_from_env()
    if token is None:
        warn(
            "no GH_TOKEN or GITHUB_TOKEN set: running unauthenticated "
            "(GitHub allows 60 requests an hour)"
        )
    with open_store(args, create=True) as store, bar("github", quiet=args.quiet) as b:

        def progress(s: GithubStats) -> None:
            b.note(
                f"read {s.fetched} listed {s.listed} examined {s.examined} kept {s.kept} "
                f"requests {s.requests} "
                f"rate left {'-' if s.rate_left is None else s.rate_left}"
            )
            if s.examined + s.skipped + s.fetched > b_count[0]:
                b.advance(s.examined + s.skipped + s.fetched - b_count[0])
                b_count[0] = s.examined + s.skipped + s.fetched

        b_count = [0]
        stats = collect_github(
            store,
            args.repo,
            profile,
            token=token,
            api_url=args.api_url or DEFAULT_API_URL,
            since=args.since,
            max_prs=args.max_prs,
            on_progress=progress,
            warn=warn,
            discovery=args.discovery,
        )
    if args.json:
        print(json.dumps(stats.to_json(), ensure_ascii=False))
    else:
        print(stats.summary())
    return 0
