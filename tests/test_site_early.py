"""A cold build's digest week pages rendered by a child forked before the gather
(``prkb.site.early``): the same site whether the child renders every week, some or none; a
failing child's pages, or pages made from other weeks than the plan's, removed and rendered
by the build; a build that ends early stops the child."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest
from sitekb import files, make_kb

from prkb.profile import load_profile
from prkb.site import build as site_build
from prkb.site import early
from prkb.site.build import LANGS, build_site


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("early") / "kb.sqlite"
    make_kb(path).close()
    return path


@pytest.fixture(scope="module")
def reference(kb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with no early child."""
    out = tmp_path_factory.mktemp("reference") / "site"
    assert early.MIN_PRS > 100  # the test knowledge base is smaller: no child
    _build(kb, out)
    return out


def _build(kb: Path, out: Path) -> Any:
    from prkb.store import Store

    with Store(kb) as store:
        return build_site(store, out, load_profile(None), search=False)


def _state(out: Path) -> tuple[Any, Any]:
    """The links file and the manifest's pages (every page's hashes)."""
    return (json.loads((out / ".prkb-links.json").read_text()),
            json.loads((out / ".prkb-manifest.json").read_text())["pages"])


def _weeks(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.glob("*/digest/*-W*.html"))


class Spy:
    """Every child started (each kept, with what the build took from it)."""

    def __init__(self) -> None:
        self.started: list[early.EarlyWeeks] = []
        self.taken: list[dict[str, Any]] = []


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> Spy:
    """A child for any cold build, however few its PRs."""
    monkeypatch.setattr(early, "MIN_PRS", 0)
    spy = Spy()
    real_start, real_results = early.start, early.EarlyWeeks.results

    def start(*args: Any, **kwargs: Any) -> early.EarlyWeeks | None:
        got = real_start(*args, **kwargs)
        if got is not None:
            spy.started.append(got)
        return got

    def results(self: early.EarlyWeeks, made_from: Any) -> Any:
        got = real_results(self, made_from)
        spy.taken.append(got)
        return got

    monkeypatch.setattr(site_build, "start_early", start)
    monkeypatch.setattr(early.EarlyWeeks, "results", results)
    return spy


def test_a_child_that_renders_every_week_makes_the_same_site(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # never asked to stop: the child renders every week before the build takes its pages
    monkeypatch.setattr(early.EarlyWeeks, "stop_soon", lambda self: None)
    stats = _build(kb, tmp_path / "a")
    assert len(spied.started) == 1 and len(spied.taken) == 1
    weeks = _weeks(tmp_path / "a")
    assert len(weeks) >= 4  # both languages of at least two weeks
    assert sorted(spied.taken[0]) == weeks
    assert files(tmp_path / "a") == files(reference)
    assert _state(tmp_path / "a") == _state(reference)
    assert stats.rendered == stats.pages


def test_a_child_stopped_after_one_page_makes_the_same_site(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = early._render_weeks

    def after_one(*args: Any) -> Any:  # the child: asked to stop once it rendered a page
        stopping = args[-1]
        render_run = early.render_run

        def then_stop(job: Any, indexes: list[int]) -> Any:
            got = render_run(job, indexes)
            stopping.set()
            return got

        early.render_run = then_stop  # type: ignore[assignment]  # (in the child only)
        return real(*args)

    monkeypatch.setattr(early, "_render_weeks", after_one)
    # only the child's own stop: the build's (once it has planned) could come before the
    # child's first page on a loaded machine
    monkeypatch.setattr(early.EarlyWeeks, "stop_soon", lambda self: None)
    _build(kb, tmp_path / "a")
    assert len(spied.taken) == 1
    oldest = min(Path(w).name for w in _weeks(reference))
    assert list(spied.taken[0]) == [f"{LANGS[0]}/digest/{oldest}"]  # the oldest week's first
    assert files(tmp_path / "a") == files(reference)
    assert _state(tmp_path / "a") == _state(reference)


def test_a_child_stopped_before_it_renders_leaves_every_page_to_the_build(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = early._render_weeks

    def stopped(*args: Any) -> Any:  # the child: asked to stop before its first page
        args[-1].set()
        return real(*args)

    monkeypatch.setattr(early, "_render_weeks", stopped)
    _build(kb, tmp_path / "a")
    assert spied.taken == [{}]
    assert files(tmp_path / "a") == files(reference)
    assert _state(tmp_path / "a") == _state(reference)


def test_a_failing_child_leaves_its_pages_to_the_build(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fail(store: Any, profile: Any, langs: list[str], base_url: Any, tmp: Path,
             *rest: Any) -> Any:
        # a page written half, a page of a week that is no page, then the child dies
        week = _weeks(reference)[0]
        (tmp / week).parent.mkdir(parents=True, exist_ok=True)
        (tmp / week).write_bytes(b"half")
        (tmp / "en" / "digest" / "2001-W01.html").parent.mkdir(parents=True, exist_ok=True)
        (tmp / "en" / "digest" / "2001-W01.html").write_bytes(b"stray")
        raise SystemExit(1)

    monkeypatch.setattr(early, "_render_weeks", fail)
    stats = _build(kb, tmp_path / "out")
    assert len(spied.started) == 1 and spied.started[0].run.results() is None
    assert spied.taken == [{}]
    assert stats.rendered == stats.pages
    assert files(tmp_path / "out") == files(reference)


def test_pages_made_from_other_weeks_than_the_plan_are_removed(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the child's read sees one more week than the gather (the knowledge base changed between
    # the two reads): its pages are not the plan's
    real = early.week_prs

    def one_more(data: Any, profile: Any) -> dict[str, list[int]]:
        return {**real(data, profile), "2001-W01": [1]}

    monkeypatch.setattr(early, "week_prs", one_more)
    monkeypatch.setattr(early.EarlyWeeks, "stop_soon", lambda self: None)
    _build(kb, tmp_path / "out")
    assert spied.taken == [{}]
    assert not list((tmp_path / "out").glob("*/digest/2001-W01.html"))
    assert files(tmp_path / "out") == files(reference)
    assert _state(tmp_path / "out") == _state(reference)


def test_the_child_forks_outside_the_read_and_reads_after_the_cursor(
    kb: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prkb.store import Store

    seen = tmp_path / "seen"
    real_cursor, real_child = Store.change_cursor, early._render_weeks

    def cursor(self: Store) -> Any:
        got = real_cursor(self)
        seen.with_suffix(".cursor").write_text(str(time.monotonic_ns()))
        return got

    def child(store: Store, *args: Any) -> Any:
        # the connection as it came through the fork, then when the child reads
        seen.with_suffix(".fork").write_text(str(store.conn.in_transaction))
        real_stamps = store.site_pr_stamps

        def stamps() -> Any:
            seen.with_suffix(".read").write_text(str(time.monotonic_ns()))
            return real_stamps()

        store.site_pr_stamps = stamps  # type: ignore[method-assign]
        return real_child(store, *args)

    monkeypatch.setattr(Store, "change_cursor", cursor)
    monkeypatch.setattr(early, "_render_weeks", child)
    monkeypatch.setattr(early.EarlyWeeks, "stop_soon", lambda self: None)
    _build(kb, tmp_path / "a")
    assert spied.taken and spied.taken[0]
    assert seen.with_suffix(".fork").read_text() == "False"
    assert int(seen.with_suffix(".read").read_text()) > int(
        seen.with_suffix(".cursor").read_text())


def test_a_child_never_let_read_gives_up_and_leaves_its_pages_to_the_build(
    kb: Path, reference: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(early, "WAIT", 0.05)
    monkeypatch.setattr(early.EarlyWeeks, "go", lambda self: None)
    _build(kb, tmp_path / "a")
    assert len(spied.started) == 1 and spied.taken == [{}]
    assert files(tmp_path / "a") == files(reference)
    assert _state(tmp_path / "a") == _state(reference)


def test_no_child_when_pages_can_be_kept(kb: Path, tmp_path: Path, spied: Spy) -> None:
    _build(kb, tmp_path / "a")
    assert len(spied.started) == 1
    again = _build(kb, tmp_path / "a")  # the previous pages are there: not a cold build
    assert len(spied.started) == 1 and again.rendered == 0


def test_a_build_that_ends_early_stops_the_child(
    kb: Path, tmp_path: Path, spied: Spy, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow_child(*args: Any) -> None:
        import time
        time.sleep(60)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(early, "_render_weeks", slow_child)
    monkeypatch.setattr(site_build, "plan_pages", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _build(kb, tmp_path / "out")
    assert len(spied.started) == 1
    assert spied.started[0].run.process is None  # stopped and joined
    assert not multiprocessing.active_children()
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob("*.prkb-*")) and not list(tmp_path.glob(".out*"))
