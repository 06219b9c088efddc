"""collect git, audit."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..progress import warn
from . import group, open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    collect = group(sub, "collect", "collect PRs that touch the tracked symbol from a source")
    p = collect.add_parser(
        "git",
        parents=[common],
        help="mine a local git clone (bare or not) for commits that touch the symbol family",
        description=(
            "Finds every commit on BRANCH whose Python diff adds or removes a line naming a family "
            "spelling (git's own pickaxe), parses the changed files before and after with ast, "
            "records per-class declaration changes, runs the consistency audit at each commit, "
            "and stores one record per PR (from the '(#N)' subject) or per commit. Incremental: "
            "a second run only looks at new commits. Reads git objects only, so a bare mirror "
            "works."
        ),
    )
    p.add_argument("path", help="path of the git repository (work tree or bare)")
    p.add_argument("--branch", default=None, help="branch to mine (default: the profile's, main)")
    p.add_argument("--since", metavar="REV", default=None, help="only commits after REV")
    p.add_argument(
        "--repo", default=None, help="owner/name to file records under (default: the profile's)"
    )
    p.add_argument(
        "--fork",
        metavar="OWNER/NAME",
        default=None,
        help="the GitHub repository (owner/name) whose commit pages hold this clone's own "
        "commits: a commit without a PR number links to its page there (default: the key "
        "fork of the profile's [profile] table, else --repo)",
    )
    p.add_argument("--no-audit", action="store_true", help="skip the consistency audit per commit")
    p.add_argument("--json", action="store_true", help="print the run's counts as JSON")
    p.set_defaults(func=cmd_collect_git)

    p = sub.add_parser(
        "audit",
        parents=[common],
        help="consistency audit of a source tree at a revision (read from git objects)",
        description=(
            "Resolves metadata builder hierarchies at REV and reports each builder whose effective "
            "level is UNIFORM_BATCH or ALWAYS while its decode threshold cannot grow under "
            "speculative decoding (rule cg-uniform-without-spec-decode). Exit code 1 when there "
            "are "
            "findings, 0 when none."
        ),
    )
    p.add_argument("path", help="path of the git repository (work tree or bare)")
    p.add_argument("--rev", default="HEAD", help="revision to audit (default: HEAD)")
    p.add_argument("--json", action="store_true", help="print builders and findings as JSON")
    p.set_defaults(func=cmd_audit)


def cmd_collect_git(args: argparse.Namespace) -> int:
    from ..collect.git import collect_git

    profile = profile_of(args)
    with open_store(args, create=True) as store:
        stats = collect_git(
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
    if args.json:
        print(json.dumps(stats.to_json(), ensure_ascii=False))
    else:
        print(stats.summary())
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from ..analyze.audit import audit_revision
    from ..gitobj import GitRepo

    profile = profile_of(args)
    with GitRepo(args.path) as repo:
        result = audit_revision(repo, args.rev, profile, warn=warn)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        print(result.summary())
    return 1 if result.findings else 0
