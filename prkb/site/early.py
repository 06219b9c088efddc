"""Digest week pages rendered while the knowledge base is read and the site planned: a cold
build's second core at work from the start.

A full build reads the knowledge base (gather) and plans every page (plan) in one process,
about a second at 10,000 PRs, before the render workers start: the other core would wait. A
week's digest page needs nothing of that: it reads its week from the knowledge base itself
(:func:`prkb.publish.digest.gather`), and besides that only the list of weeks and which PRs
have a page, which one light query gives (with the relations, from which each week reads
its relations and PR dates: :class:`~prkb.site.digest_pages.FromGather`). So in a cold
build (no previous pages: every page is rendered whatever its hash) a child forked before
the gather (:func:`start`) renders week pages, oldest first, into the new tree, each page
whole, until the plan is made
(:meth:`EarlyWeeks.stop_soon`); the render stage takes the pages it finished, with their
links and search hashes (:meth:`EarlyWeeks.results`), and renders the rest.

The child is forked before the build's read transaction (a SQLite connection in a read
transaction must not cross a fork) and reads only once this process has taken the change
journal's cursor in that transaction (:meth:`EarlyWeeks.go`), so its pages are never older
than what the next build compares with. If what it made its pages from (the weeks and the
PRs with a page: :func:`~prkb.site.digest_pages.week_fingerprint`) is not what the plan made
them from (the knowledge base changed between the two reads, or a week ended), or the child
failed, the pages it wrote are removed and rendered with the rest. A build that ends early
stops the child.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from dataclasses import dataclass
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

from ..profile import Profile
from ..store import Store
from .digest_pages import (
    FromGather,
    WeekData,
    week_fingerprint,
    week_page,
    week_prs,
    week_rows,
)
from .gather import SiteData, attach_relations, pr_slug
from .plan import fixed_of
from .render import ForkedRun, Rendered, RenderJob, fork_child, render_run

# a cold build of at least this many PRs starts the child; the gather and plan of fewer take
# less than the fork and what a new process fills again (its caches) cost
MIN_PRS = 1000

WAIT = 60.0  # seconds the child waits for the build's read to begin before it gives up
WeeksMade = tuple[str, list[tuple[str, Rendered]]]  # (week_fingerprint, (path, rendered)...)


@dataclass
class EarlyWeeks:
    """The forked child rendering week pages, and when to stop it."""

    run: ForkedRun[WeeksMade]
    reading: EventType
    stopping: EventType
    tmp: Path
    langs: list[str]

    def go(self) -> None:
        """Let the child read the knowledge base (the change journal's cursor is taken)."""
        self.reading.set()

    def stop_soon(self) -> None:
        """Have the child stop after the page it is rendering (the render workers start)."""
        self.stopping.set()

    def results(self, made_from: tuple[list[dict[str, Any]], frozenset[str]] | None
                ) -> dict[str, Rendered]:
        """The pages the child finished, by path, with their links and search hashes, once it
        has stopped; none if it failed or made them from other weeks than ``made_from``
        (``Plan.weeks_from``): the files it wrote are then removed."""
        self.stop_soon()
        got = self.run.results()
        if got is not None and made_from is not None \
                and got[0] == week_fingerprint(*made_from):
            return dict(got[1])
        # only the child has written into the week folders yet (the render has not begun)
        for lang in self.langs:
            folder = self.tmp / lang / "digest"
            if folder.is_dir():
                for f in folder.iterdir():
                    f.unlink()
        return {}

    def stop(self) -> None:
        """End the child now (the build failed or was interrupted), its pages unused."""
        self.run.stop()


def start(
    store: Store, profile: Profile, langs: list[str], *, base_url: str | None, tmp: Path,
    search: bool,
) -> EarlyWeeks | None:
    """Fork the child rendering week pages into ``tmp`` (a cold build's new tree), outside any
    read transaction; it reads once :meth:`EarlyWeeks.go` is called. None when the build is
    too small, or there is no ``fork``."""
    if (os.cpu_count() or 1) < 2 or str(store.path) == ":memory:" \
            or "fork" not in multiprocessing.get_all_start_methods() \
            or store.site_pr_count() < MIN_PRS:
        return None
    ctx = multiprocessing.get_context("fork")
    reading, stopping = ctx.Event(), ctx.Event()
    run = fork_child(_render_weeks, store, profile, langs, base_url, tmp, search, reading,
                     stopping)
    return EarlyWeeks(run, reading, stopping, tmp, langs)


def _render_weeks(
    store: Store, profile: Profile, langs: list[str], base_url: str | None, tmp: Path,
    search: bool, reading: EventType, stopping: EventType,
) -> WeeksMade:
    """The child: once ``reading`` is set, the week pages as the plan makes them
    (digest_pages), oldest week first, until ``stopping`` is set; what they were made from
    and what was rendered."""
    store.reconnect()  # a SQLite connection must not cross a fork
    if not reading.wait(WAIT):
        return "", []  # the build never got to its read: nothing made
    with store.read_snapshot():
        prs: list[dict[str, Any]] = [
            {"id": pr_id, "repo": repo, "number": number, "slug": pr_slug(number, ref),
             "state": state, "created_at": created_at, "closed_at": closed_at,
             "merged_at": merged_at, "source": source, "relations": []}
            for (pr_id, repo, ref, number, state, created_at, closed_at, merged_at, source)
            in store.site_pr_stamps()]
        # the relations too, so that each week reads its relations and PR dates from here
        # (as the render's week pages read them from the full gather: FromGather), not by
        # two queries a week
        data = SiteData(prs=prs, by_id={p["id"]: p for p in prs},
                        by_node={f"pr:{p['number']}": p for p in prs if p["number"] is not None})
        attach_relations(data, store.site_relations())
    rows = week_rows(week_prs(data, profile))
    slugs = frozenset(str(p["slug"]) for p in prs)
    fixed = fixed_of(profile, langs)
    weeks = WeekData(store, profile, FromGather(data))
    pages = [week_page(weeks, fixed[lang], row, lang, slugs, None)
             for row in reversed(rows) for lang in langs]
    for lang in langs:
        (tmp / lang / "digest").mkdir(parents=True, exist_ok=True)
    job = RenderJob(pages, store, langs, base_url, tmp, search=search)
    made: list[tuple[str, Rendered]] = []
    for i, page in enumerate(pages):
        if stopping.is_set():
            break
        made.extend((page.path, one) for _i, one in render_run(job, [i]))
        if i % len(langs) == len(langs) - 1:
            gc.collect(1)  # a week's cycles (the collector is off, as in the gather)
    return week_fingerprint(rows, slugs), made
