"""Collectors as plug-ins: the :class:`Collector` protocol and how ``prkb collect`` finds them.

A collector is one source of records (a git clone, the GitHub API, ...). It names its
``prkb collect`` subcommand (``name``), says in one line what it reads (``help``), adds its
own options to that subcommand's parser (``add_arguments``) and runs (``run``: the parsed
options, the open knowledge base and the profile in, a :class:`CollectReport` out). The
command adds ``--json`` (the report's :meth:`~CollectReport.to_json` instead of its
:meth:`~CollectReport.summary`) and the common options (``--db``, ``--profile``, ``-q``).

Collectors are found through the entry-point group ``prkb.collectors`` (prkb declares its own
in ``pyproject.toml``; another package adds a source by declaring one)::

    [project.entry-points."prkb.collectors"]
    gitlab = "prkb_gitlab:GitlabCollector"

An entry point names a class (made with no arguments) or an object. The bundled collectors
are used even when the entry points are not installed (a source tree run without
``pip install``). A plug-in that cannot be imported or does not follow the protocol is left
out with one warning naming its entry point; of two entry points of one name, the bundled
one (else the first by distribution) is used and a warning names both.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..profile import Profile
    from ..store import Store

GROUP = "prkb.collectors"
# the bundled collectors, in ``prkb collect --help`` order; the same as pyproject.toml declares
BUNDLED: dict[str, str] = {
    "git": "prkb.collect.git_plugin:GitPlugin",
    "github": "prkb.collect.github_plugin:GithubPlugin",
}
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


@runtime_checkable
class CollectReport(Protocol):
    """What a collector's run did: one line for people, a JSON object for scripts."""

    def summary(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


@runtime_checkable
class Collector(Protocol):
    """One source of records, as ``prkb collect NAME`` runs it.

    ``name``: the subcommand word (lowercase letters, digits, ``-``, ``_``), the same as its
    entry point's name. ``help``: one line, shown by ``prkb collect --help`` (and as the
    subcommand's description unless :meth:`add_arguments` sets ``parser.description``).
    The records it stores carry a ``source`` of its choosing (a lowercase name, e.g.
    ``gitlab``); reports, the site and the digest show any such name.
    """

    name: str
    help: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this collector's options (and positionals) to its subcommand's parser."""
        ...

    def run(self, args: argparse.Namespace, store: Store, profile: Profile) -> CollectReport:
        """Collect into ``store`` (records through :func:`prkb.ingest.ingest_all`, which
        returns a report) with the options parsed from :meth:`add_arguments`."""
        ...


def collectors(
    warn: Callable[[str], None], common: argparse.ArgumentParser | None = None
) -> list[Collector]:
    """The usable collectors of the installed entry points of :data:`GROUP` and the bundled
    ones, the bundled first, then the others by name.

    ``common``: the parent parser the subcommands get, so a plug-in whose options clash with
    it (or with ``--json``) is left out here, not when the command line is built."""
    out: list[Collector] = []
    for name, same in _by_name(_with_bundled(list(entry_points(group=GROUP)))).items():
        if len(same) > 1:
            warn(f"{len(same)} collectors are named {name!r}: "
                 + " and ".join(_describe(ep) for ep in same)
                 + f"; 'prkb collect {name}' uses the first")
        ep = same[0]
        try:
            loaded = ep.load()
            obj = loaded() if isinstance(loaded, type) else loaded
        except Exception as e:  # a plug-in's import or constructor: anything can fail
            warn(f"collector {_describe(ep)} cannot be loaded ({type(e).__name__}: {e}); "
                 f"'prkb collect {name}' is not available")
            continue
        problem = _problem(obj, name) or _options_problem(obj, common)
        if problem:
            warn(f"collector {_describe(ep)} is left out: {problem}")
            continue
        out.append(obj)
    return out


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """The ``--json`` option every collector's subcommand has (after its own options)."""
    parser.add_argument("--json", action="store_true", help="print the run's counts as JSON")


def _with_bundled(points: list[EntryPoint]) -> list[EntryPoint]:
    """``points`` with each bundled collector whose entry point is not installed, without
    repeats (a source tree's ``.egg-info`` beside the installed metadata)."""
    seen = {(ep.name, ep.value) for ep in points}
    extra = [EntryPoint(name, value, GROUP) for name, value in BUNDLED.items()
             if (name, value) not in seen]
    out: list[EntryPoint] = []
    kept: set[tuple[str, str]] = set()
    for ep in extra + points:
        if (ep.name, ep.value) not in kept:
            kept.add((ep.name, ep.value))
            out.append(ep)
    return out


def _by_name(points: list[EntryPoint]) -> dict[str, list[EntryPoint]]:
    """Entry points by name: the bundled names first (their own entry point first), then
    the others by name; within a name by distribution and value."""

    def order(ep: EntryPoint) -> tuple[int, int, str, str, str]:
        bundled = list(BUNDLED).index(ep.name) if ep.name in BUNDLED else len(BUNDLED)
        own = 0 if BUNDLED.get(ep.name) == ep.value else 1
        return bundled, own, ep.name, _dist_name(ep), ep.value

    out: dict[str, list[EntryPoint]] = {}
    for ep in sorted(points, key=order):
        out.setdefault(ep.name, []).append(ep)
    return out


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "prkb"


def _describe(ep: EntryPoint) -> str:
    """``'gitlab = pkg.mod:Obj' (entry point of pkg)``."""
    return f"'{ep.name} = {ep.value}' (entry point of {_dist_name(ep)})"


def _problem(obj: Any, name: str) -> str | None:
    """What keeps ``obj`` from being the collector ``name``, if anything."""
    if not isinstance(obj, Collector):
        missing = [a for a in ("name", "help", "add_arguments", "run") if not hasattr(obj, a)]
        return (f"{type(obj).__name__} does not follow the Collector protocol "
                f"(no {', '.join(missing)})")
    if not _NAME.fullmatch(name):
        return ("a collector's name is lowercase letters, digits, '-' and '_' "
                f"(at most 40), not {name!r:.60}")
    if obj.name != name:
        return f"its name is {obj.name!r:.60}, not the entry point's {name!r}"
    if not isinstance(obj.help, str) or not obj.help.strip():
        return "its help is not a line of text"
    if not callable(obj.add_arguments) or not callable(obj.run):
        return "its add_arguments or run is not callable"
    return None


def _options_problem(obj: Collector, common: argparse.ArgumentParser | None) -> str | None:
    """Whether the collector's options can be added to its subcommand's parser (tried on a
    parser of its own, so a failure leaves the command line whole)."""
    probe = argparse.ArgumentParser(
        prog=f"prkb collect {obj.name}", parents=[common] if common is not None else [],
        add_help=True)
    try:
        obj.add_arguments(probe)
        add_json_option(probe)
    except Exception as e:  # argparse.ArgumentError for a clash, or the plug-in's own bug
        return f"its options cannot be added ({type(e).__name__}: {e})"
    return None
