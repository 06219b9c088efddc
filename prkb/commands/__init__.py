"""CLI command groups, one module each (``register(sub, common)``), in --help order."""

from __future__ import annotations

import argparse
import sys
from typing import Any

COMMAND_MODULES = [
    "kbcmds",  # demo, import, export, list, show
    "reportcmds",  # report
    "collectcmds",  # collect SOURCE: one subcommand per collector (prkb.collect.plugin)
    "auditcmds",  # audit
    "checkcmds",  # check (a pull request: base against head)
    "graphcmds",  # graph, timeline, lineage
    "matrixcmds",  # matrix, docs-drift
    "sitecmds",  # site build, site serve
    "digestcmds",  # digest (weekly email, exactly once)
    "profilecmds",  # profile check, profile keys
]

_GROUPS: dict[tuple[int, str], tuple[Any, Any]] = {}


def group(sub: Any, name: str, help_text: str) -> Any:
    """A nested command group (e.g. ``collect``) shared by several modules."""
    key = (id(sub), name)
    # the parser itself is kept with its group: an id can be reused once a parser is freed
    # (a second main() in one process), and a stale group then meant 'conflicting subparser'
    if key not in _GROUPS or _GROUPS[key][0] is not sub:
        parser = sub.add_parser(name, help=help_text, description=help_text)
        inner = parser.add_subparsers(dest=f"{name}_command", metavar="SOURCE")
        parser.set_defaults(func=lambda args, p=parser: (p.print_help(), 2)[1])
        _GROUPS[key] = (sub, inner)
    return _GROUPS[key][1]


def open_store(args: argparse.Namespace, *, create: bool = False) -> Any:
    """The knowledge base of ``--db``; its first write records the command's profile.

    Only a command that writes records (``create``: collect, import) makes a new file, and
    says so on stderr; any other refuses a path where no knowledge base is, naming it (a
    mistyped ``--db`` used to leave an empty knowledge base behind and read it)."""
    from pathlib import Path

    from ..errors import InputError
    from ..ingest import binding_of
    from ..paths import default_db_path
    from ..store import Store

    path = Path(default_db_path(getattr(args, "db", None)))
    new = not path.exists()
    if new and not create:
        raise InputError(
            f"no knowledge base at {path}: give --db (or $PRKB_DB) the file that "
            "'prkb collect', 'prkb import' or 'prkb demo' wrote")
    store = Store(path)
    if new and not getattr(args, "quiet", False):
        print(f"prkb: created a new knowledge base at {path}", file=sys.stderr)
    store.bind_profile(binding_of(profile_of(args), getattr(args, "profile", None)))
    return store


def profile_of(args: argparse.Namespace) -> Any:
    """The profile of this command: ``--profile``, else the one the knowledge base records,
    else the default; checked against the knowledge base's record (once per command)."""
    resolved = getattr(args, "resolved_profile", None)
    if resolved is not None:
        return resolved
    from ..ingest import profile_for
    from ..paths import default_db_path
    from ..progress import warn

    if getattr(args, "rebuilding", False):  # prkb rebuild: the asked profile replaces the record
        from ..profile import load_profile

        args.resolved_profile = load_profile(getattr(args, "profile", None))
        if getattr(args, "profile", None) is None:
            args.resolved_profile = profile_for(default_db_path(getattr(args, "db", None)), None)
        return args.resolved_profile
    resolved = profile_for(default_db_path(getattr(args, "db", None)),
                           getattr(args, "profile", None), warn=warn)
    args.resolved_profile = resolved
    return resolved
