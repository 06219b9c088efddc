"""matrix, docs-drift."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import InputError
from ..progress import warn
from . import profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "matrix",
        parents=[common],
        help="support matrix: every class's value of the profile's symbol at a revision",
        description=(
            "One row per class that holds the profile's value at REV (the subclasses of the "
            "profile's audit.builder_bases, or every class that sets or inherits the value), "
            "read from git objects: the registered backend name (through the profile's "
            "audit.backend_builder_method and backend_name_method, where static), the class, "
            "its file, the declared and effective value (inherited where not declared), "
            "whether an overriding method decides it at run time (and the condition), what "
            "the profile's audit rule reads of it, and, when a knowledge base exists (--db, "
            "$PRKB_DB or ./prkb.sqlite), the PR that last changed the declaration. Markdown "
            "output uses the columns of the project's docs table plus these extras. With "
            "--history, reads the values the git collector recorded at each collected commit "
            "instead (no PATH needed)."
        ),
    )
    p.add_argument("path", nargs="?", help="path of the git repository (work tree or bare)")
    p.add_argument("--rev", default="HEAD",
                   help="revision to read (default: HEAD); with --history: a collected "
                        "commit's sha or a date, showing the readings at or before it")
    p.add_argument("--format", choices=["md", "json"], default="md",
                   help="output format (default: md, a Markdown table)")
    p.add_argument("--history", action="store_true",
                   help="per class (file and class), its value at each commit collected in "
                        "the knowledge base, one Markdown row per change")
    p.set_defaults(func=cmd_matrix)

    p = sub.add_parser(
        "docs-drift",
        parents=[common],
        help="compare the documentation's backend table with the code at a revision",
        description=(
            "Reads the backend table of a Markdown document at REV (default: the profile's "
            "docs.table_doc) and reports stale rows (documented level differs from the code), "
            "missing builders (level not the default but not listed, while the document says "
            "unlisted means the default) and orphan rows (no builder matches). Exit code 1 when "
            "there is drift, 0 when none, 2 when the table cannot be found or parsed."
        ),
    )
    p.add_argument("path", help="path of the git repository (work tree or bare)")
    p.add_argument("--rev", default="HEAD", help="revision to read (default: HEAD)")
    p.add_argument("--doc", default=None, help="the Markdown file inside the repository")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_docs_drift)


def _store_if_present(args: argparse.Namespace) -> Any:
    from ..paths import default_db_path
    from ..store import Store

    path = default_db_path(getattr(args, "db", None))
    if not path.exists():
        return None
    return Store(path)


def cmd_matrix(args: argparse.Namespace) -> int:
    from ..publish.matrix import (
        history_markdown,
        history_rows,
        history_until,
        matrix_at,
        matrix_history,
        to_markdown,
    )

    profile = profile_of(args)
    if args.history:
        store = _store_if_present(args)
        if store is None:
            raise InputError("matrix --history needs a knowledge base (--db, $PRKB_DB or "
                             "./prkb.sqlite) filled by 'prkb collect git'")
        with store:
            hist = matrix_history(store)
        until = history_until(hist, args.rev)
        if args.format == "json":
            if until is not None:  # the readings at or before REV, per builder (file, class)
                hist = {"until": until, "rows": history_rows(hist, until=until)}
            print(json.dumps(hist, ensure_ascii=False, indent=1))
        else:
            print(history_markdown(hist, profile, until=until), end="")
        return 0
    if not args.path:
        raise InputError("matrix needs PATH (a git repository), or --history")
    store = _store_if_present(args)
    try:
        rev, rows = matrix_at(args.path, args.rev, profile, store, warn=warn)
    finally:
        if store is not None:
            store.close()
    if args.format == "json":
        print(json.dumps({"rev": rev, "rows": rows}, ensure_ascii=False, indent=1))
    else:
        print(to_markdown(rows, profile, rev), end="")
    return 0


def cmd_docs_drift(args: argparse.Namespace) -> int:
    from ..publish.docsdrift import drift_at

    report = drift_at(args.path, args.rev, profile_of(args), args.doc, warn=warn)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(report.summary())
    return 1 if report.drift else 0
