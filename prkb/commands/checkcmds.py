"""check (a pull request's base against its head)."""

from __future__ import annotations

import argparse
from typing import Any

from ..progress import warn
from . import profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "check",
        parents=[common],
        help="audit a pull request: findings new at HEAD, fixed, declaration changes, docs drift",
        description=(
            "Runs the consistency audit at BASE and at HEAD (git objects only) and reports the "
            "findings new at HEAD (matched by rule, file and class; renamed files and moved "
            "classes are not new), the findings the change fixes, the declaration changes it "
            "makes, and the documentation drift it introduces. Exit code 1 when a finding of "
            "the --fail-on class exists, 0 otherwise, 2 on bad input (an unknown revision, a "
            "shallow clone without BASE)."
        ),
    )
    p.add_argument("path", help="path of the git repository (work tree or bare)")
    p.add_argument("--base", required=True, metavar="REV", help="the pull request's base")
    p.add_argument("--head", default="HEAD", metavar="REV",
                   help="the pull request's head (default: HEAD)")
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text",
                   help="output: text, json, sarif (SARIF 2.1.0 for code scanning), github "
                        "(workflow commands: annotations on the diff)")
    p.add_argument("--fail-on", choices=["new", "any", "none"], default="new",
                   help="exit 1 on new findings (default), on any finding at HEAD, or never")
    p.add_argument("--doc", default=None,
                   help="the Markdown file with the backend table (default: the profile's)")
    p.add_argument("--readme-url", default=None, metavar="URL",
                   help="README address for the rules' helpUri in SARIF (default: prkb's "
                        "Documentation URL from its package metadata, if any)")
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    from ..check import render, run_check

    profile = profile_of(args)
    report = run_check(args.path, args.base, args.head, profile, warn=warn, doc=args.doc)
    print(render(report, args.format, profile, args.fail_on, args.readme_url))
    return 1 if report.failing(args.fail_on) else 0
