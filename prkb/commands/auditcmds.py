"""audit (a source tree at a revision, read from git objects); collect git is the git
collector's plug-in, prkb/collect/git_plugin.py."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..progress import warn
from . import profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "audit",
        parents=[common],
        help="consistency audit of a source tree at a revision (read from git objects)",
        description=(
            "Reads the class hierarchy of the profile's classes at REV (the subclasses of "
            "audit.builder_bases, or every class that sets or inherits the value) and reports "
            "each one the profile's audit rule flags (its [check.rules] say what each rule "
            "means). Exit code 1 when there are findings, 0 when none (always 0 for a profile "
            "without a rule)."
        ),
    )
    p.add_argument("path", help="path of the git repository (work tree or bare)")
    p.add_argument("--rev", default="HEAD", help="revision to audit (default: HEAD)")
    p.add_argument("--json", action="store_true", help="print builders and findings as JSON")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    from ..analyze.audit import audit_revision
    from ..gitrepo import GitRepo

    profile = profile_of(args)
    with GitRepo(args.path) as repo:
        result = audit_revision(repo, args.rev, profile, warn=warn)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        print(result.summary(profile.holder_en(), profile.holder_en(plural=True)))
    return 1 if result.findings else 0
