"""What the ``prkb`` command leaves to the end of its process (``prkb.lifetime``): never freed
object by object there, freed as usual in a library call; a site build leaves its data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prkb import lifetime
from prkb.profile import load_profile
from prkb.site.build import Build, build_site
from prkb.store import Store

_SCRIPT = """
import gc, sys
from prkb import lifetime

class Data:
    def __del__(self):
        sys.stdout.write("freed\\n")

if sys.argv[1] == "command":
    lifetime.leave_to_exit()
lifetime.leave([Data() for _ in range(3)])
gc.freeze()
sys.stdout.write("end\\n")
"""


@pytest.mark.parametrize(("how", "out"), [("command", "end\n"),
                                          ("library", "freed\nfreed\nfreed\nend\n")])
def test_what_the_command_leaves_is_never_freed_one_by_one(how: str, out: str) -> None:
    got = subprocess.run([sys.executable, "-c", _SCRIPT, how], capture_output=True, text=True,
                         check=True)
    assert got.stdout == out and got.stderr == ""


def test_a_site_build_leaves_its_data_to_the_command(
    site_kb: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    left: list[object] = []
    monkeypatch.setattr(lifetime, "_left", left)
    build_site(site_kb, tmp_path / "a", load_profile(None), search=False)
    assert left == []  # a library call: nothing kept
    monkeypatch.setattr(lifetime, "_on", True)
    build_site(site_kb, tmp_path / "b", load_profile(None), search=False)
    (build,) = left
    assert isinstance(build, Build) and build.data.prs and build.plan.pages


def test_the_command_turns_it_on() -> None:
    got = subprocess.run(
        [sys.executable, "-c", "import prkb.cli, prkb.lifetime as l, sys; "
         "sys.argv = ['prkb', '--version']\n"
         "try:\n    prkb.cli.run()\nexcept SystemExit:\n    print(l._on)"],
        capture_output=True, text=True, check=True)
    assert got.stdout.strip().endswith("True")
