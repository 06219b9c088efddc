"""Suite-wide test options: ``--slow``, hypothesis profiles, and the hardening figures.

``--slow`` loads the hypothesis profile "slow" (ten times the examples of "default") and runs
tests marked ``slow``. Property tests scale their own example counts with
:func:`examples`, so the default run of ``tests/test_hardening_*.py`` generates at least
10,000 cases in total and the slow run ten times as many.

Hardening tests record what they did through the session fixture ``figures``
(``figures.add("input", "cases generated", n)``); at the end of the run one line per area is
printed (``hardening input: 10400 cases generated, ..., 0 failures``), also under xdist.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

BASE_EXAMPLES = 100  # the "default" profile's max_examples: unchanged for other suites

settings.register_profile(
    "default",
    max_examples=BASE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "slow",
    parent=settings.get_profile("default"),
    max_examples=BASE_EXAMPLES * 10,
)

AREAS = ("input", "faults", "concurrency", "outputs", "accuracy")
_AREA = re.compile(r"test_(?:hardening_)?(input|faults|concurrency|outputs|accuracy)\.py")
_ORDER = (
    "cases generated", "faults injected", "records compared", "hostile strings tried", "commits",
    "facts checked",
)


def examples(n: int) -> int:
    """``n`` examples under the default profile, scaled with the loaded profile (--slow)."""
    return max(1, n * settings.default.max_examples // BASE_EXAMPLES)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="run tests marked slow and ten times the hypothesis examples (profile 'slow')",
    )


def pytest_configure(config: pytest.Config) -> None:
    settings.load_profile("slow" if config.getoption("--slow") else "default")
    config.stash[_FIGS] = Figures()
    config.stash[_FAILS] = Counter()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="long-running: enable with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


class Figures:
    """Counters per hardening area: ``add(area, what, n)``."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.notes: dict[str, list[str]] = {}

    def add(self, area: str, what: str, n: int = 1) -> None:
        assert area in AREAS, area
        self.counts[(area, what)] += n

    def note(self, area: str, text: str) -> None:
        """A word for the area's summary line, e.g. the seed of a random fault schedule."""
        assert area in AREAS, area
        if text not in self.notes.setdefault(area, []):
            self.notes[area].append(text)

    def merge(self, data: dict[str, Any]) -> None:
        for key, n in data.get("counts", {}).items():
            area, _, what = key.partition("|")
            self.counts[(area, what)] += n
        for area, texts in data.get("notes", {}).items():
            for t in texts:
                self.note(area, t)

    def dump(self) -> dict[str, Any]:
        return {"counts": {f"{a}|{w}": n for (a, w), n in self.counts.items()},
                "notes": self.notes}


_FIGS = pytest.StashKey[Figures]()
_FAILS = pytest.StashKey[Counter[str]]()


@pytest.fixture(scope="session")
def figures(pytestconfig: pytest.Config) -> Figures:
    return pytestconfig.stash[_FIGS]


@pytest.fixture(scope="session")
def fault_seed(pytestconfig: pytest.Config, figures: Figures) -> int:
    """One seed per run for random fault schedules: $PRKB_FAULT_SEED, else the xdist run id
    (the same in every worker), else a random one. Printed, and shown on the summary line."""
    env = os.environ.get("PRKB_FAULT_SEED")
    worker = getattr(pytestconfig, "workerinput", None)
    if env:
        seed = int(env)
    elif worker and worker.get("testrunuid"):
        seed = int(hashlib.sha256(str(worker["testrunuid"]).encode()).hexdigest(), 16) % 10**6
    else:
        seed = random.SystemRandom().randrange(1, 10**6)
    print(f"fault seed: {seed} (PRKB_FAULT_SEED={seed} replays it)")
    figures.note("faults", f"seed {seed}")
    return seed


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    m = _AREA.search(report.nodeid)
    if m and report.failed:
        _config().stash[_FAILS][m.group(1)] += 1


_CONFIG: list[pytest.Config] = []


def _config() -> pytest.Config:
    return _CONFIG[-1]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG.append(session.config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out: Any = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker: hand the figures to the controller
        out["prkb_figures"] = session.config.stash[_FIGS].dump()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    data = getattr(node, "workeroutput", {}).get("prkb_figures")
    if data:
        _config().stash[_FIGS].merge(data)


def summary_lines(figs: Figures, fails: Counter[str]) -> list[str]:
    lines = []
    for area in AREAS:
        items = {w: n for (a, w), n in figs.counts.items() if a == area}
        if not items and not fails.get(area):
            continue
        keys = sorted(items, key=lambda w: (_ORDER.index(w) if w in _ORDER else 99, w))
        parts = [f"{items[k]} {k}" for k in keys]
        parts.append(f"{fails.get(area, 0)} failures")
        parts.extend(figs.notes.get(area, []))
        lines.append(f"hardening {area}: " + ", ".join(parts))
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if getattr(config, "workeroutput", None) is not None:
        return
    lines = summary_lines(config.stash[_FIGS], config.stash[_FAILS])
    if lines:
        terminalreporter.section("hardening figures")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def bundled(tmp_path: Path) -> Any:
    """Every bundled snapshot imported into a new knowledge base, then the relations built
    (what ``prkb demo`` does); a :class:`prkb.store.Store`."""
    from prkb.collect.snapshot import import_jsonl
    from prkb.graph import build_relations
    from prkb.paths import data_dir
    from prkb.profile import load_profile
    from prkb.store import Store

    profile = load_profile()
    st = Store(tmp_path / "kb.sqlite")
    for snap in sorted((data_dir() / "snapshots").glob("*.jsonl")):
        import_jsonl(st, snap, profile)
    build_relations(st, profile)
    return st


@pytest.fixture
def site_kb(tmp_path: Path) -> Iterator[Any]:
    """The site tests' knowledge base (:func:`sitekb.make_kb`: curated seeds, a hostile PR, two
    synthetic PRs, relations built) in ``tmp_path/kb.sqlite``; an open
    :class:`prkb.store.Store`, closed after the test."""
    from sitekb import make_kb

    with make_kb(tmp_path / "kb.sqlite") as store:
        yield store


@pytest.fixture
def digest_db(tmp_path: Path) -> Path:
    """The digest tests' knowledge base (:func:`digestkb.digest_kb`: PRs inside, before and
    after 2026-W21, one relation) in ``tmp_path/kb.sqlite``; its path."""
    from digestkb import digest_kb

    return digest_kb(tmp_path)
