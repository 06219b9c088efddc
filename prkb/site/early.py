"""PR pages rendered while the plan is made: a cold build's second core at work early.

A full build reads the knowledge base (gather) and plans every page (plan) in one process,
about a second at 10,000 PRs, before the render workers start: the other core waits. In a
cold build (no previous pages: every page is rendered whatever its hash), the pages of the
oldest PRs need nothing the plan makes. So right after the gather, a forked child renders
them (:func:`start`) into the new tree, from the same gathered data and with the same page
closures the plan makes (:func:`~prkb.site.plan.pr_pages`), while this process plans; the
render stage leaves those pages to it and takes their links and search hashes from it
(:meth:`EarlyPages.results`). If the child fails, its pages are rendered with the rest.

The child renders about what one core does while the plan is made (:data:`SHARE` of the
PRs), and is stopped with the build if the build ends early (an error, Ctrl-C).
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..profile import Profile
from ..store import Store
from .gather import SiteData
from .page import ReportHtml
from .plan import fixed_of, pr_pages
from .render import ForkedRun, Rendered, RenderJob, fork_run, warm_up

# a cold build of at least this many PRs renders some PR pages early; the plan of fewer
# takes less than the fork and what a new process fills again (its caches) cost
MIN_PRS = 1000
# the share of the PRs (the oldest) the child renders: at 10,000 PRs, the plan takes ~0.6 s
# and the child renders about 330 PRs' pages (two languages, ~1.3 ms a page) in that time
SHARE = 30  # one PR in SHARE


@dataclass
class EarlyPages:
    """The pages at ``paths`` and the forked child rendering them."""

    paths: list[str]
    run: ForkedRun

    def results(self) -> dict[str, Rendered] | None:
        """Each page's links and searchable hash, by path, once the child has ended; None if
        it failed (its pages are to be rendered by the caller)."""
        got = self.run.results()
        return None if got is None else {self.paths[i]: one for i, one in got}

    def stop(self) -> None:
        """End the child now (the build failed or was interrupted), its pages unused."""
        self.run.stop()


def start(
    store: Store, data: SiteData, profile: Profile, langs: list[str], *,
    report_html: ReportHtml, base_url: str | None, tmp: Path, search: bool,
    warm_ups: dict[str, Any], envs: dict[str, Any], templates: dict[Any, Any],
) -> EarlyPages | None:
    """Fork the child rendering the pages of the oldest PRs of ``data`` (a cold build's);
    None when the build is too small, or there is no ``fork``.

    The template environments are made (in ``envs`` and ``templates``, which the build's
    render job shares) before the fork: the child and, later, the render workers inherit
    them, made once."""
    if len(data.prs) < MIN_PRS or (os.cpu_count() or 1) < 2 \
            or str(store.path) == ":memory:" \
            or "fork" not in multiprocessing.get_all_start_methods():
        return None
    share = len(data.prs) // SHARE
    if share == 0:
        return None
    prs = [(pr, None, False) for pr in data.prs[-share:]]
    pages = pr_pages(store, report_html, fixed_of(profile, langs), data, prs, langs)
    job = RenderJob(pages, store, langs, base_url, tmp, search=search, envs=envs,
                    templates=templates, warm_ups=warm_ups,
                    prefetch=getattr(report_html, "prefetch", None))
    indexes = list(range(len(pages)))
    warm_up(job, indexes)
    for d in sorted({p.path.rpartition("/")[0] for p in pages} - {""}):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    return EarlyPages([p.path for p in pages], fork_run(job, indexes))
