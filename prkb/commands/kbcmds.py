"""demo, import, export, list, show, report."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..errors import InputError
from ..evidence import summary as evidence_summary
from ..models import NOT_DECLARED, record_label
from ..progress import bar, json_term, safe_term, text_table, warn
from . import open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "demo",
        parents=[common],
        help="build a knowledge base from the bundled data and write two reports",
        description=(
            "Imports every snapshot under data/snapshots/ into the knowledge base (--db, $PRKB_DB "
            "or ./prkb.sqlite), prints a summary, and writes Chinese and English reports for the "
            "two seed PRs into a folder under the current directory. Needs no network."
        ),
    )
    p.add_argument(
        "-o", "--out", default="prkb-demo", help="folder for the reports (default: prkb-demo)"
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "import",
        parents=[common],
        help="import a JSONL snapshot (one PR per line)",
        description=(
            "Imports a JSONL snapshot in GitHub's REST shape and analyses each PR. Bad lines are "
            "reported with their line number and skipped; good lines are imported, and the exit "
            "code is then 1 (0 when every line is good). Re-importing the same file changes "
            "nothing."
        ),
    )
    p.add_argument("file", type=Path)
    p.add_argument("--json", action="store_true", help="print the import counts as JSON")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "rebuild",
        parents=[common],
        help="re-derive every record's facts with a profile (after a profile change)",
        description=(
            "A knowledge base records the profile its facts were derived with, and refuses "
            "another one. 'prkb rebuild --profile NAME' re-analyses every stored record with "
            "NAME (levels read from patches, risk tags, platforms, findings), rebuilds the "
            "relations and records NAME. Records from git keep the declaration facts the git "
            "collector computed; their commits are unmarked, so the next 'collect git' mines "
            "them again under NAME. Without --profile it re-derives with the recorded profile "
            "(after its text changed)."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=cmd_rebuild, rebuilding=True)

    p = sub.add_parser(
        "export",
        parents=[common],
        help="export the knowledge base as JSONL",
        description=(
            "Writes every PR as one JSON line in GitHub's REST shape (plus 'source'). An existing "
            "FILE is left alone (exit 2) unless --force is given; it is then replaced atomically."
        ),
    )
    p.add_argument("file", help="output file, or - for stdout")
    p.add_argument(
        "--force", action="store_true", help="replace FILE when it already exists"
    )
    p.add_argument(
        "--trim-patches",
        action="store_true",
        help="keep only the patch lines that mention the tracked symbol (for bundling)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "list", parents=[common],
        help="one row per PR: number, date, title, declaration changes, tags"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--wide", action="store_true",
                   help="every cell whole: folded to the terminal's width, or one full line "
                        "per PR in a pipe (by default a long cell is cut with an ellipsis)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "show",
        parents=[common],
        help="the facts of one PR",
        description=(
            "Prints the stored facts of PR N (or a commit sha for records without a PR). With "
            "--json, also its description (or commit message) and its discussion as the report "
            "reads it: status (unknown, bots-only, empty, topics), author and topics with their "
            "quotes."
        ),
    )
    p.add_argument("number", help="PR number (or commit sha)")
    p.add_argument("--json", action="store_true", help="print JSON (the default is a summary)")
    p.set_defaults(func=cmd_show)


def cmd_import(args: argparse.Namespace) -> int:
    from ..collect.snapshot import import_jsonl
    profile = profile_of(args)
    with open_store(args, create=True) as store, bar("import", quiet=args.quiet) as b:
        report = import_jsonl(
            store, args.file, profile, on_progress=lambda _n: b.advance(),
            relations="changed",
        )
    for err in report.errors:
        warn(err)
    if args.json:
        print(json.dumps({k: v for k, v in vars(report).items()}, ensure_ascii=False))
    else:
        print(
            f"{args.file}: {report.lines} lines, {report.new} new, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.older} older, {len(report.errors)} errors"
        )
    if report.failed:
        kept = report.lines - report.failed
        print(
            f"prkb: {safe_term(str(args.file))}: {report.failed} of {report.lines} lines failed "
            f"and were left out; the other {kept} were imported",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from ..ingest import binding_of, rebuild

    profile = profile_of(args)
    with open_store(args) as store, bar("re-deriving", quiet=args.quiet) as b:
        b.total(len(store.all_prs()))
        counts = rebuild(store, profile, binding_of(profile, args.profile),
                         progress=lambda i, n: b.advance())
    out = {"records": counts.records, "updated": counts.updated,
           "git_records": counts.git_records, "profile": profile.name}
    if args.json:
        print(json_term(json.dumps(out, ensure_ascii=False)))
        return 0
    print(safe_term(f"re-derived {counts.records} records with profile {profile.name} "
                    f"({counts.updated} changed); relations rebuilt"))
    if counts.git_records:
        print(safe_term(f"{counts.git_records} records come from git: their declaration facts "
                        "are the collector's; run 'prkb collect git' again to mine them under "
                        f"{profile.name}"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..collect.snapshot import export_jsonl

    profile = profile_of(args)
    if args.file != "-" and not args.force:
        out = Path(args.file)
        if out.exists() or out.is_symlink():
            raise InputError(f"{out} already exists: use --force to replace it")
    with open_store(args) as store:
        if args.file == "-":
            n = export_jsonl(store, sys.stdout, trim=args.trim_patches, profile=profile)
        else:
            out = Path(args.file)
            buf = io.StringIO()
            n = export_jsonl(store, buf, trim=args.trim_patches, profile=profile)
            write_atomic(out, buf.getvalue())
            print(f"wrote {n} records to {out}", file=sys.stderr)
    return 0


def short_changes(changes: list[dict[str, Any]]) -> str:
    parts = []
    for c in changes:
        if c["direction"].startswith("dynamic"):
            # the override's returns (after), or what it returned before it went
            value = c["after"] or c["before"]
            parts.append(f"{c['class']}: {c['direction']}" + (f" ({value})" if value else ""))
        else:
            parts.append(f"{c['class']}: {_absent(c['before'])} -> {_absent(c['after'])}")
    return "; ".join(parts)


def cmd_list(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        rows = store.pr_listing()
    listing = [
        {
            "number": f["number"],
            "ref": f["ref"],
            "date": (f["merged_at"] or f["closed_at"] or f["created_at"] or "")[:10],
            "title": f["title"],
            "state": f["state"],
            "changes": short_changes(f["symbol_changes"]),
            "risk_tags": f["risk_tags"],
        }
        for f in rows
    ]
    if args.json:
        print(json_term(json.dumps(listing, ensure_ascii=False, indent=1)))
        return 0
    # one line per PR, fitting the terminal (or cells of at most 60 columns in a pipe), long
    # cells cut with an ellipsis; --wide: whole cells (folded on a terminal)
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    lines = text_table(
        ["PR", "date", "title", "declaration changes", "risk tags"],
        [[record_label(x["number"], x["ref"]), x["date"], x["title"],
          x["changes"], ", ".join(x["risk_tags"])] for x in listing],
        width=width, truncate=not args.wide)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def _absent(value: str | None) -> str:
    """A declared value, or ``(not declared)`` where the class declares none (never ``None``,
    which reads as a Python value)."""
    return NOT_DECLARED if value is None else value


def _side(value: str | None, source: str | None) -> str:
    """One side of a state change for ``show``: ``VALUE [source]``, ``no builder``, ``unset``."""
    if source is None:
        return "no builder"
    return f"{value if value is not None else 'unset'} [{source}]"


def cmd_show(args: argparse.Namespace) -> int:
    from ..analyze.topics import discussion_json

    profile = profile_of(args)
    with open_store(args) as store:
        row, facts = store.pr_row_and_facts(args.number)
        rec = store.raw_record(row)
    # what the report quotes: the description (or commit message) and the discussion's topics
    facts["body"] = rec.get("body")
    facts["discussion"] = discussion_json(rec)
    for c in facts["symbol_changes"]:  # what the value is: which directions it can have
        c["kind"] = profile.kind_of(c["attr"])
    if args.json:
        print(json_term(json.dumps(facts, ensure_ascii=False, indent=1)))
        return 0
    title = record_label(facts["number"], facts["ref"])
    print(safe_term(f"{title} {facts['title']}"))
    print(
        f"  state: {facts['state']}  merged: {facts['merged_at'] or '-'}  author: "
        f"{safe_term(facts['author'] or '-')}"
    )
    for c in facts["symbol_changes"]:
        print(
            safe_term(
                f"  {c['file']}: {c['class']}.{c['attr']} {_absent(c['before'])} -> "
                f"{_absent(c['after'])} "
                f"({c['direction']})"
            )
        )
    if not facts["symbol_changes"]:
        print("  no declaration change recorded")
    if facts["state_changes"] is None:
        print(safe_term(f"  effective state: {facts['state_changes_unknown']}"))
    for c in facts["state_changes"] or []:
        print(safe_term(
            f"  effective {c['value']} of {c['class']} ({c['file']}): "
            f"{_side(c['before'], c['before_source'])} -> {_side(c['after'], c['after_source'])}"
        ))
    for note in facts.get("notes", []):
        print(safe_term(f"  note: {note}"))
    if facts["risk_tags"]:
        print("  risk: " + ", ".join(t["en"] for t in facts["risk_tags"]))
    for fd in facts["findings"]:
        print(safe_term(f"  finding {fd['rule']}: {fd['message_en']}"))
        by = fd.get("fixed_by")
        if by:
            print(safe_term(f"    fixed by {record_label(by['number'], by['ref'])}"))
    for r in facts["relations"]:
        arrow = "->" if r["direction"] == "out" else "<-"
        print(safe_term(f"  {r['type']} {arrow} {r['other']}: {evidence_summary(r['evidence'])}"))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo(args)
