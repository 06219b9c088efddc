"""report: a PR report in Chinese and/or English, as Markdown, plain text or HTML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from . import open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "report",
        parents=[common],
        help="a report of one PR (Chinese and/or English; Markdown, text or HTML)",
        description=(
            "Writes the report of PR N from the knowledge base: header, executive summary, "
            "motivation, implementation breakdown, key files, key code, review highlights, "
            "risks and impact, related PRs. Every statement comes from the stored facts; what "
            "the knowledge base lacks is reported as unknown. The same knowledge base gives "
            "byte-identical output."
        ),
        epilog=(
            "examples: prkb report 47144 | prkb report 45149 --lang en --format txt | "
            "prkb report 47144 --format html -o pr-47144.html"
        ),
    )
    p.add_argument("number", help="PR number (or commit sha for records without a PR)")
    p.add_argument(
        "--lang",
        choices=("zh", "en", "both"),
        default="both",
        help="language: zh, en, or both (Chinese then English; the default)",
    )
    p.add_argument(
        "--format",
        dest="fmt",
        choices=("md", "txt", "html"),
        default="md",
        help="md (Markdown, the default), txt (plain text for e-mail) or html (standalone page)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout"
    )
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..render.report import render_reports

    langs = ("zh", "en") if args.lang == "both" else (args.lang,)
    profile = profile_of(args)
    with open_store(args) as store:
        text = render_reports(store, args.number, langs, fmt=args.fmt, profile=profile)
    if args.output:
        out = Path(args.output)
        write_atomic(out, text)  # one error line, never a traceback; the umask is respected
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
