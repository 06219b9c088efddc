"""The order in which the renderer hands out pages (``prkb.site.render.render_order``): the
heavy pages of the whole site first, then dated pages newest first (a week's digest beside its
PRs' pages, each page's languages side by side), undated PR pages last."""

from __future__ import annotations

import itertools
import weakref
from pathlib import Path

from prkb.profile import load_profile
from prkb.site.build import report_html_for
from prkb.site.gather import gather
from prkb.site.page import Page
from prkb.site.plan import plan_pages
from prkb.site.render import RUN_MAX, RenderJob, guided_runs, render_order
from prkb.store import Store


def _page(path: str, template: str = "site/pr.html", when: str = "") -> Page:
    return Page(path, template, None, dict, when=when)


def test_heavy_pages_then_newest_first_then_undated_pr_pages(tmp_path: Path) -> None:
    pages = [
        _page("zh/pr/1.html", when="2025-01-01T10:00:00Z"),
        _page("en/pr/1.html", when="2025-01-01T10:00:00Z"),
        _page("zh/pr/9.html"),  # a PR page without a date
        _page("zh/matrix.html", "site/matrix.html"),
        _page("zh/digest/2025-W01.html", "site/digest.html", when="2025-01-05T99"),
        _page("en/digest/2025-W01.html", "site/digest.html", when="2025-01-05T99"),
        _page("zh/pr/2.html", when="2025-01-03T10:00:00Z"),
        _page("en/pr/2.html", when="2025-01-03T10:00:00Z"),
        _page("graph/a.json", ""),
    ]
    job = RenderJob(pages, Store(tmp_path / "kb.sqlite"), ["zh", "en"], None, tmp_path)
    got = [pages[i].path for i in render_order(job, list(range(len(pages))))]
    assert got == [
        "zh/matrix.html", "graph/a.json",
        "zh/digest/2025-W01.html", "en/digest/2025-W01.html",
        "zh/pr/2.html", "en/pr/2.html", "zh/pr/1.html", "en/pr/1.html",
        "zh/pr/9.html",
    ]
    # only the pages asked for
    assert [pages[i].path for i in render_order(job, [7, 0, 3])] == [
        "zh/matrix.html", "en/pr/2.html", "zh/pr/1.html"]


def test_a_weeks_digest_renders_beside_its_prs_pages(site_kb: Store, tmp_path: Path) -> None:
    profile = load_profile()
    plan = plan_pages(site_kb, gather(site_kb, profile), profile, ["zh", "en"], base_url=None,
                      report_html=report_html_for(profile), known={}, search=False)
    job = RenderJob(plan.pages, site_kb, ["zh", "en"], None, tmp_path)
    order = [plan.pages[i] for i in render_order(job, list(range(len(plan.pages))))]
    weeks = [n for n, p in enumerate(order) if p.template == "site/digest.html"]
    assert weeks, "the site has digest weeks"
    for n in weeks:
        week = order[n]
        # the PR pages right after a week's page are of PRs dated in that week or before it
        after = [p for p in order[n + 1:n + 6] if p.template == "site/pr.html"]
        assert all(p.when <= week.when for p in after), week.path
    # every dated page's languages side by side
    for a, b in itertools.pairwise(order):
        if a.template == "site/pr.html" and a.lang == "zh" and a.when:
            assert b.path == a.path.replace("zh/", "en/", 1)


def test_runs_are_long_first_and_shrink_to_the_end() -> None:
    for n, workers in ((0, 2), (1, 2), (7, 2), (500, 2), (4352, 2), (20368, 2), (20368, 4)):
        order = list(range(n))[::-1]
        runs = guided_runs(order, workers)
        assert [i for run in runs for i in run] == order  # every page once, in order
        sizes = [len(run) for run in runs]
        assert all(0 < s <= RUN_MAX for s in sizes)
        assert sizes == sorted(sizes, reverse=True)  # never longer than the one before
        if n >= 20000:
            assert sizes[0] == RUN_MAX and len(runs) < n // 100
        if n:  # the last runs are short: the workers finish together
            assert sizes[-1] == 1 and sum(sizes[-workers * 4:]) <= 4 * workers


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_worker_run_freezes_what_it_leaves_alive(site_kb: Store, tmp_path: Path) -> None:
    """After each run a worker collects its young garbage and freezes the rest (the caches
    of what pages share live for the worker's life): the collector's full passes then do not
    scan a heap that only grows. Here in this process, set up as a worker."""
    import gc
    import multiprocessing

    from prkb.site import render as site_render

    profile = load_profile()
    plan = plan_pages(site_kb, gather(site_kb, profile), profile, ["en"], base_url=None,
                      report_html=report_html_for(profile), known={}, search=False)
    job = RenderJob(plan.pages, site_kb, ["en"], None, tmp_path)
    pr_pages = [i for i, p in enumerate(plan.pages) if p.template == "site/pr.html"][:3]
    for i in pr_pages:
        (tmp_path / plan.pages[i].path).parent.mkdir(parents=True, exist_ok=True)
    gc.unfreeze()
    try:
        site_render._WORKER_JOB, site_render._WORKER_STOP = job, multiprocessing.Event()
        garbage = _Cycle()  # a cycle left for the collector
        gone = weakref.ref(garbage)
        del garbage
        assert gc.get_freeze_count() == 0 and gone() is not None
        done = site_render._worker(pr_pages)
        assert done is not None and [i for i, _ in done] == pr_pages
        assert gc.get_freeze_count() > 0 and gc.get_count()[1] == 0
        assert gone() is None  # collected, not frozen
    finally:
        site_render._WORKER_JOB = site_render._WORKER_STOP = None
        gc.unfreeze()
