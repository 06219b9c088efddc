"""The ``prkb`` command: thin; parses options and calls the library.

Each command group lives in ``prkb/commands/<name>.py`` with a ``register(sub, common)``
function; ``prkb/commands/__init__.py`` lists them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .commands import COMMAND_MODULES
from .errors import PrkbError
from .lifetime import leave_to_exit
from .progress import safe_term
from .secrets import redact
from .store import damaged, is_damage


def common_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="knowledge base file (default: $PRKB_DB, else ./prkb.sqlite)",
    )
    common.add_argument(
        "--profile",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="profile name under data/profiles/ or a .toml path (default: vllm-cudagraph)",
    )
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="no progress bars",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="prkb",
        parents=[common],
        description=(
            "PR-analysis knowledge base: collects the pull requests that touch a tracked symbol "
            "(a profile says which: `prkb profile check NAME` shows it; the default profile is "
            "vllm-cudagraph), analyses each change, links PRs into a typed graph, and writes "
            "reports, a site and a digest."
        ),
        epilog="Run 'prkb demo' to build a knowledge base from the bundled data and write reports.",
    )
    parser.add_argument("--version", action="version", version=f"prkb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        mod = importlib.import_module(f".commands.{name}", __package__)
        mod.register(sub, common)
    return parser


def _db(args: argparse.Namespace) -> Path:
    from .paths import default_db_path

    return Path(default_db_path(getattr(args, "db", None)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for key, default in (("db", None), ("profile", None), ("quiet", False)):
        if not hasattr(args, key):
            setattr(args, key, default)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        # the whole profile is checked once, before any command reads it (or a file), and
        # against the profile the knowledge base records
        from .commands import profile_of

        profile_of(args)
        rc = args.func(args)
    except PrkbError as e:
        print(f"prkb: error: {safe_term(redact(str(e)))}", file=sys.stderr)
        return e.exit_code
    except sqlite3.OperationalError as e:
        if is_damage(e):  # text a damaged page made undecodable, a malformed image
            print(f"prkb: error: {safe_term(redact(str(damaged(_db(args), e))))}",
                  file=sys.stderr)
            return 1
        msg = str(e)
        if "locked" in msg or "busy" in msg:
            msg = f"the knowledge base is busy (another prkb is writing it): {msg}"
        elif "readonly" in msg or "read-only" in msg:
            msg = f"{_db(args)} is read-only: {msg}"
        print(f"prkb: error: knowledge base: {safe_term(redact(msg))}", file=sys.stderr)
        return 3
    except sqlite3.DatabaseError as e:  # a damaged page met while reading
        print(f"prkb: error: {safe_term(redact(str(damaged(_db(args), e))))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("prkb: interrupted; everything committed so far is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return int(rc or 0)


def run() -> None:
    """The ``prkb`` command: :func:`main`, then the process ends without the interpreter's
    last collection of cyclic garbage over everything it made (a site build leaves hundreds
    of thousands of containers: that pass took about 0.08 s after a 10,000-PR build), and
    without freeing one by one what its work left to the end of the process
    (:mod:`prkb.lifetime`: a site build's data, 0.09 s). :func:`main` itself leaves the
    collector as it was and frees what it made (tests call it in their own process)."""
    leave_to_exit()
    rc = main()
    gc.freeze()
    raise SystemExit(rc)


if __name__ == "__main__":
    run()
