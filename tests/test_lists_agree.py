"""Lists written out by hand (for a fast start-up or for readers) name exactly what the code
has: a new relation type or report format that one of them leaves out fails here, not
silently (a graph edge in the default colour, a format the CLI refuses)."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

from prkb.cli import build_parser
from prkb.commands.graphcmds import _TYPES_HELP
from prkb.graph.relations import RELATION_TYPES
from prkb.paths import data_dir, templates_dir
from prkb.render.report import FORMATS

ROOT = Path(__file__).resolve().parent.parent


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    raise AssertionError(f"no subcommand {name}")


def test_report_format_choices_are_the_formats() -> None:
    report = _subparser(build_parser(), "report")
    (fmt,) = [a for a in report._actions if "--format" in a.option_strings]
    assert tuple(fmt.choices or ()) == FORMATS
    assert all(f in (fmt.help or "") for f in FORMATS)


def test_every_relation_type_is_named_everywhere_it_is_listed() -> None:
    types = set(RELATION_TYPES)
    names = _TYPES_HELP.split(":", 1)[1].split("(default")[0]
    listed = {x.strip() for x in names.split(",")}
    assert listed == types, "commands/graphcmds.py _TYPES_HELP"
    rules = tomllib.loads((data_dir() / "relations.toml").read_text(encoding="utf-8"))
    assert sorted(rules["relations"]["priority"]) == sorted(types), "relations.toml priority"
    css = (templates_dir() / "site" / "static" / "site.css").read_text(encoding="utf-8")
    for t in types:
        # a colour (the dark scheme may keep the light one), and the legend's class
        assert f"--rel-{t}:" in css, f"site.css --rel-{t}"
        assert f".rel-{t} " in css, f"site.css .rel-{t}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    para = readme[readme.index("Relations (`"):]
    para = para[:para.index(") come from")]
    assert set(re.findall(r"`([a-z-]+)`", para)) == types, "README's relation list"
