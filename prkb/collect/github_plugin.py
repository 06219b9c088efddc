"""``prkb collect github``: the GitHub collector
(:func:`prkb.collect.github_assisted.collect_github`) as a
:class:`~prkb.collect.plugin.Collector`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..profile import Profile
    from ..store import Store
    from .github import GithubStats


class GithubPlugin:
    """Collect through GitHub's API: its options and its run."""

    name = "github"
    help = "collect a GitHub repository's PRs that touch the symbol family (PyGithub)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``OWNER/REPO``, ``--since``, ``--max``, ``--api-url``, ``--from-kb | --list-all``."""
        parser.description = (
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
        )
        parser.add_argument("repo", metavar="OWNER/REPO", help="repository, e.g. vllm-project/vllm")
        parser.add_argument(
            "--since", metavar="YYYY-MM-DD", default=None,
            help="only PRs updated on or after this date (default: all, or since the last run)",
        )
        parser.add_argument(
            "--max", dest="max_prs", metavar="N", type=int, default=None,
            help="examine at most N new or changed PRs in this run (run again to continue)",
        )
        parser.add_argument(
            "--api-url", metavar="URL", default=None,
            help="API root (GitHub Enterprise: https://HOST/api/v3; default "
            "https://api.github.com)",
        )
        how = parser.add_mutually_exclusive_group()
        how.add_argument(
            "--from-kb", dest="discovery", action="store_const", const="kb",
            help="start from the PRs the knowledge base knows (git's, and the numbers their "
            "texts and relations name) and read them through GraphQL in batches; list only open "
            "and closed-unmerged PRs (default when the knowledge base holds git-collected "
            "records of the repository)",
        )
        how.add_argument(
            "--list-all", dest="discovery", action="store_const", const="list",
            help="read every PR's file list to find the PRs that touch the family (one request "
            "per PR: the default without git-collected records)",
        )
        parser.set_defaults(discovery="auto")

    def run(self, args: argparse.Namespace, store: Store, profile: Profile) -> GithubStats:
        """:func:`~prkb.collect.github_assisted.collect_github` with the parsed options, the token
        of the environment and a progress bar."""
        from ..progress import bar, warn
        from .github import token_from_env
        from .github_assisted import collect_github
        from .github_http import DEFAULT_API_URL

        token = token_from_env()
        if token is None:
            warn(
                "no GH_TOKEN or GITHUB_TOKEN set: running unauthenticated "
                "(GitHub allows 60 requests an hour)"
            )
        counted = [0]  # PRs the bar has advanced by

        def progress(s: GithubStats) -> None:
            b.note(
                f"read {s.fetched} listed {s.listed} examined {s.examined} kept {s.kept} "
                f"requests {s.requests} "
                f"rate left {'-' if s.rate_left is None else s.rate_left}"
            )
            done = s.examined + s.skipped + s.fetched
            if done > counted[0]:
                b.advance(done - counted[0])
                counted[0] = done

        with bar("github", quiet=args.quiet) as b:
            return collect_github(
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
