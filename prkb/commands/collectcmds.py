"""collect SOURCE: one subcommand per collector (``prkb.collect.plugin``: the bundled ones and
those other packages declare in the entry-point group ``prkb.collectors``)."""

from __future__ import annotations

import argparse
import functools
import json
from typing import Any

from ..collect.plugin import Collector, CollectReport, add_json_option, collectors
from ..errors import PrkbError
from ..progress import warn
from . import group, open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    collect = group(sub, "collect", "collect PRs that touch the tracked symbol from a source")
    for collector in collectors(warn, common):
        p = collect.add_parser(
            collector.name, parents=[common], help=collector.help, description=collector.help)
        collector.add_arguments(p)
        add_json_option(p)
        p.set_defaults(func=functools.partial(cmd_collect, collector))


def cmd_collect(collector: Collector, args: argparse.Namespace) -> int:
    profile = profile_of(args)
    with open_store(args, create=True) as store:
        report = collector.run(args, store, profile)
    if not isinstance(report, CollectReport):  # a plug-in's mistake: what it stored is kept
        raise PrkbError(
            f"collector {collector.name!r} ran, but returned {type(report).__name__}, not a "
            "report with summary() and to_json()")
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print(report.summary())
    return 0
