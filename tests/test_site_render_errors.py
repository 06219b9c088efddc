"""A page that fails in a worker process (``prkb.site.render.render_all``): its error reaches
the build as it was raised, the runs of pages still queued are skipped, and the pool ends by
close and join (its terminate could hang while its task thread was still handing out runs:
seen once in about fifty builds onto a full disk)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from prkb.site import render as site_render
from prkb.site.page import Page
from prkb.store import Store

PAGES = 2000  # json pages, each worth several PR pages: far above the pool's threshold


def _job(tmp_path: Path, failing: int) -> tuple[site_render.RenderJob, Path]:
    out = tmp_path / "out"
    (out / "p").mkdir(parents=True)

    def context(i: int) -> dict[str, Any]:
        if i == failing:
            raise OSError(28, "No space left on device")
        return {"i": i}

    pages = [Page(f"p/{i}.json", "", i, lambda i=i: context(i), kind="json")
             for i in range(PAGES)]
    store = Store(tmp_path / "kb.sqlite")  # a file: forked workers reconnect to it
    return site_render.RenderJob(pages, store, ["en"], None, out), out


def test_a_failing_page_stops_the_workers_and_its_error_is_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # a pool of two, on any machine
    job, out = _job(tmp_path, failing=0)
    with pytest.raises(OSError) as got:
        site_render.render_all(job, list(range(PAGES)))
    assert got.value.errno == 28 and "No space left" in str(got.value)
    # the run that failed stopped at its page, the other worker finished at most the run it
    # had and then skipped the rest (the first runs: 250 and 218 pages, guided_runs): never
    # the whole job, though the pool was joined (which waits for every queued run)
    first, second = site_render.guided_runs(list(range(PAGES)), 2)[:2]
    written = len(list((out / "p").iterdir()))
    assert written <= len(first) + len(second) < PAGES, written
    assert multiprocessing.active_children() == []  # every worker ended


def test_pages_that_do_not_fail_are_all_rendered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(The same job without a failure: every run is rendered, none skipped.)"""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    job, out = _job(tmp_path, failing=-1)
    done = site_render.render_all(job, list(range(PAGES)))
    assert sorted(done) == list(range(PAGES))
    assert len(list((out / "p").iterdir())) == PAGES


def test_work_done_meanwhile_and_results_taken_as_they_come(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``meanwhile`` runs once the workers have started and before any result is taken;
    ``take`` gets every page's result (the returned dict is then empty)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    job, _out = _job(tmp_path, failing=-1)
    seen: list[Any] = []

    def meanwhile() -> None:
        seen.append(("meanwhile", len(multiprocessing.active_children())))

    done = site_render.render_all(job, list(range(PAGES)), meanwhile=meanwhile,
                                  take=lambda i, one: seen.append(i))
    assert done == {}
    assert seen[0] == ("meanwhile", 2)  # the two workers running
    assert sorted(seen[1:]) == list(range(PAGES))


def test_work_done_meanwhile_that_fails_ends_the_pool_and_is_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    job, out = _job(tmp_path, failing=-1)

    def meanwhile() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        site_render.render_all(job, list(range(PAGES)), meanwhile=meanwhile)
    assert len(list((out / "p").iterdir())) < PAGES  # the queued runs were skipped
    assert multiprocessing.active_children() == []
