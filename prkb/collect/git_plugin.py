"""``prkb collect git``: the git collector (:func:`prkb.collect.git.collect_git`) as a
:class:`~prkb.collect.plugin.Collector`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..profile import Profile
    from ..store import Store
    from .git import GitCollectStats


class GitPlugin:
    """Mine a local clone: its options and its run."""

    name = "git"
    help = "mine a local git clone (bare or not) for commits that touch the symbol family"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``PATH``, ``--branch``, ``--since``, ``--repo``, ``--fork``, ``--no-audit``."""
        parser.description = (
            "Finds every commit on BRANCH whose Python diff adds or removes a line naming a "
            "family spelling (git's own pickaxe), parses the changed files before and after "
            "with ast, records per-class declaration changes, runs the consistency audit at "
            "each commit, and stores one record per PR (from the '(#N)' subject) or per commit. "
            "Incremental: a second run only looks at new commits. Reads git objects only, so a "
            "bare mirror works."
        )
        parser.add_argument("path", help="path of the git repository (work tree or bare)")
        parser.add_argument(
            "--branch", default=None, help="branch to mine (default: the profile's, main)")
        parser.add_argument("--since", metavar="REV", default=None, help="only commits after REV")
        parser.add_argument(
            "--repo", default=None,
            help="owner/name to file records under (default: the profile's)",
        )
        parser.add_argument(
            "--fork",
            metavar="OWNER/NAME",
            default=None,
            help="the GitHub repository (owner/name) whose commit pages hold this clone's own "
            "commits: a commit without a PR number links to its page there (default: the key "
            "fork of the profile's [profile] table, else --repo)",
        )
        parser.add_argument(
            "--no-audit", action="store_true", help="skip the consistency audit per commit")

    def run(self, args: argparse.Namespace, store: Store, profile: Profile) -> GitCollectStats:
        """:func:`~prkb.collect.git.collect_git` with the parsed options."""
        from ..progress import warn
        from .git import collect_git

        return collect_git(
            store,
            args.path,
            profile,
            branch=args.branch,
            since=args.since,
            repo=args.repo,
            fork=args.fork,
            audit=not args.no_audit,
            quiet=args.quiet,
            warn=warn,
        )
