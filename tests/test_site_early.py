"""A cold build's PR pages rendered by a forked child while the plan is made
(``prkb.site.early``): the same site, a failing child's pages rendered by the build, and a
build that ends early stops the child."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from sitekb import files, make_kb

from prkb.profile import load_profile
from prkb.site import build as site_build
from prkb.site import early
from prkb.site import render as site_render
from prkb.site.build import build_site


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("early") / "kb.sqlite"
    make_kb(path).close()
    return path


def _build(kb: Path, out: Path) -> Any:
    from prkb.store import Store

    with Store(kb) as store:
        return build_site(store, out, load_profile(None), search=False)


def _links(out: Path) -> Any:
    return json.loads((out / ".prkb-links.json").read_text())


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[early.EarlyPages]:
    """Early pages for any build of a few PRs (all of their PR pages, the hostile PR's
    included), each child kept for the test."""
    monkeypatch.setattr(early, "MIN_PRS", 0)
    monkeypatch.setattr(early, "SHARE", 1)
    started: list[early.EarlyPages] = []
    real = early.start

    def start(*args: Any, **kwargs: Any) -> early.EarlyPages | None:
        got = real(*args, **kwargs)
        if got is not None:
            started.append(got)
        return got

    monkeypatch.setattr(site_build, "start_early", start)
    return started


def test_early_pages_make_the_same_site(kb: Path, tmp_path: Path,
                                        spied: list[early.EarlyPages],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with_child = _build(kb, tmp_path / "a")
    assert len(spied) == 1
    assert sorted(spied[0].paths) == sorted(
        p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a").glob("*/pr/*.html"))
    assert "en/pr/90001.html" in spied[0].paths
    got = spied[0].results()  # already collected by the build: kept
    assert got is not None and sorted(got) == sorted(spied[0].paths)
    monkeypatch.setattr(early, "MIN_PRS", 10**9)
    without = _build(kb, tmp_path / "b")
    assert len(spied) == 1  # no child the second time
    assert files(tmp_path / "a") == files(tmp_path / "b")
    assert _links(tmp_path / "a") == _links(tmp_path / "b")
    manifest = [json.loads((tmp_path / d / ".prkb-manifest.json").read_text())["pages"]
                for d in "ab"]
    assert manifest[0] == manifest[1]
    assert with_child.rendered == without.rendered == with_child.pages


def test_no_early_pages_when_pages_can_be_kept(kb: Path, tmp_path: Path,
                                               spied: list[early.EarlyPages]) -> None:
    _build(kb, tmp_path / "a")
    assert len(spied) == 1
    again = _build(kb, tmp_path / "a")  # the previous pages are there: not a cold build
    assert len(spied) == 1 and again.rendered == 0


def test_a_failing_child_leaves_its_pages_to_the_build(
    kb: Path, tmp_path: Path, spied: list[early.EarlyPages], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _build(kb, tmp_path / "ref")

    def fail(job: Any, indexes: Any, send: Any) -> None:
        # a page written half, then the child dies without a word
        page = job.pages[indexes[0]]
        (job.tmp / page.path).parent.mkdir(parents=True, exist_ok=True)
        (job.tmp / page.path).write_bytes(b"half")
        raise SystemExit(1)

    monkeypatch.setattr(site_render, "_run_child", fail)
    stats = _build(kb, tmp_path / "out")
    assert len(spied) == 2 and spied[1].results() is None
    assert stats.rendered == stats.pages
    assert files(tmp_path / "out") == files(tmp_path / "ref")


def test_a_build_that_ends_early_stops_the_child(
    kb: Path, tmp_path: Path, spied: list[early.EarlyPages], monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow_child(job: Any, indexes: Any, send: Any) -> None:
        import time
        time.sleep(60)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(site_render, "_run_child", slow_child)
    monkeypatch.setattr(site_build, "plan_pages", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _build(kb, tmp_path / "out")
    assert len(spied) == 1
    assert spied[0].run.process is None  # stopped and joined
    assert not multiprocessing.active_children()
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob("*.prkb-*")) and not list(tmp_path.glob(".out*"))
