"""Stage 3 of the site build: render pages to bytes and write them, on every core.

Rendering is CPU-bound Python, so pages are rendered in forked worker processes (one per
core, each with its own knowledge-base connection; template environments are made before the
fork), each writing what it renders. Small jobs (an incremental build) are rendered in this
process, or, when they hold heavy pages (a one-PR rebuild's digest weeks), shared between this
process and one forked child. A page is always written as a new file, never into an existing
one.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any, Generic, TypeVar

import jinja2
from markupsafe import Markup

from ..profile import Profile
from ..render.jinja_calls import plain_call
from ..store import Store
from . import links as site_links
from .builder_lists import make_builder_lists
from .feed import atom_feed
from .macros import make_helpers
from .output import ASSETS, write_new
from .page import LANG_CODES, Page, holder_dir, root_of
from .search import searchable_hash

_T = TypeVar("_T")

PARALLEL_MIN = 160  # PR pages' worth of work; below this, a pool costs more than it saves
HEAVY = 10  # what a page other than a PR page is worth, in PR pages (a rough mean)
# a smaller job with this much work in pages other than PR pages (a one-PR rebuild: its digest
# weeks, a few tens of milliseconds each) is split between this process and one forked child
SPLIT_MIN = 3 * HEAVY
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'"
)


@dataclass
class RenderJob:
    pages: list[Page]
    store: Store
    langs: list[str]
    base_url: str | None
    tmp: Path
    search: bool = False  # the site gets a search index: hash what it reads of each page
    envs: dict[str, jinja2.Environment] = field(default_factory=dict)
    templates: dict[tuple[str, str], jinja2.Template] = field(default_factory=dict)
    # template -> what to make, per language, before workers fork (e.g. the PR report's
    # environment for site/pr.html): given by the build, so that this module imports none
    warm_ups: dict[str, Callable[[str], None]] = field(default_factory=dict)
    links: site_links.LinkFinder = field(default_factory=site_links.LinkFinder)
    # called with the store and the pages of each run before they render (in the run's read
    # transaction): what they read can be read for all of them at once (the PR reports'
    # stored facts); given by the build
    prefetch: Callable[[Store, list[Page]], None] | None = None


# The job a forked worker renders. Set by the worker's initializer, in the worker process only
# (the job reaches it through the fork, not pickled: its pages hold closures); this process
# never sets it. A pool's task function gets only what is pickled, hence a global.
_WORKER_JOB: RenderJob | None = None
# set by a worker whose pages failed (the worker processes share it): the others skip the
# runs of pages still queued, so that the pool can be closed and joined, not terminated
_WORKER_STOP: EventType | None = None



def escaping_env(lang: str, what: str) -> jinja2.Environment:
    """The HTML environment of ``prkb.render.i18n.html_env`` with the site's page helpers
    (level_badge, pr_link, change_line, state_name: ``site/macros.py``; a builder page's
    lists: ``site/builder_lists.py``)."""
    from ..render.i18n import html_env, sentence_macros

    env = html_env(lang, what)
    gettext: Callable[..., Markup] = env.globals["gettext"]  # type: ignore[assignment]
    helpers = make_helpers(gettext, env.filters["label"])
    lists = make_builder_lists(gettext, helpers["level_badge"], helpers["state_name"],
                               helpers["change_line"])
    env.globals.update({k: plain_call(f) for k, f in (*helpers.items(), *lists.items())})
    generic = (gettext("class"), gettext("classes"))

    @plain_call
    def holder(profile: Profile, plural: bool = False) -> str:
        # what the profile calls a class that holds its value (its [wording]), else "class"
        return profile.word("holders" if plural else "holder", lang) or generic[plural]

    env.globals["holder"] = holder
    env.globals["holder_dir"] = plain_call(holder_dir)
    env.globals["sentences"] = sentence_macros(env)  # last: the macros see every global
    return env


def _env(lang: str, envs: dict[str, jinja2.Environment]) -> jinja2.Environment:
    if lang not in envs:
        envs[lang] = escaping_env(lang, "site/x.html")
    return envs[lang]


def render_page(job: RenderJob, page: Page) -> bytes:
    ctx = page.context()
    if page.kind == "json":
        return json.dumps(ctx, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if page.kind == "bytes":
        body: bytes = ctx["body"]
        return body
    if page.kind == "feed":
        return atom_feed(ctx["items"], lang=ctx["lang"], base_url=job.base_url,
                         feed_path=page.path)
    langs = job.langs
    lang = page.lang or ("en" if "en" in langs else langs[0])
    env = _env(lang, job.envs)
    root = root_of(page.path)
    rest = page.path.split("/", 1)[1] if page.lang else "index.html"
    switch = [
        {"lang": other, "code": LANG_CODES[other], "href": f"{root}{other}/{rest}",
         "current": other == page.lang}
        for other in langs
    ]
    template = job.templates.get((lang, page.template))
    if template is None:  # the environment never reloads a template: kept for the build
        template = job.templates[lang, page.template] = env.get_template(page.template)
    html = template.render(
        {**ctx, "langs": langs},
        page_path=page.path,
        root=root,
        here="../" * (page.path.count("/") - 1) if page.lang else f"{lang}/",
        assets=f"{root}{ASSETS}/",
        lang_code=LANG_CODES[lang],
        page_lang=page.lang,
        switch=switch,
        csp=CSP,
    )
    return html.encode("utf-8")


Rendered = tuple[list[str], str]  # a page's internal links, its searchable hash ("": none)


def render_run(job: RenderJob, indexes: list[int]) -> list[tuple[int, Rendered]]:
    """Render and write pages; returns each page's internal links and, for a page in the
    search index (when the site has one), the hash of what the index reads of it
    (search.searchable_hash).

    Written in the rendering thread: on this work's file systems a page's write is a few
    tens of microseconds, less than handing it to a writer thread costs in CPU (and the
    workers already keep every core busy)."""
    out: list[tuple[int, Rendered]] = []
    tmp = f"{job.tmp}{os.sep}"  # a page's file is this and its path (no Path per page)
    # one read transaction for the run: each page's reads would otherwise take and drop the
    # database's locks (several system calls a query), and they read one state of it
    with job.store.read_snapshot():
        if job.prefetch is not None:
            job.prefetch(job.store, [job.pages[i] for i in indexes])
        for i in indexes:
            page = job.pages[i]
            body = render_page(job, page)
            write_new(tmp + page.path, body)
            links = job.links.links(page.path, body) if page.kind == "html" else []
            out.append((i, (links, searchable_hash(body) if page.search and job.search
                                else "")))
    return out


def _worker_init(job: RenderJob, stop: EventType) -> None:
    global _WORKER_JOB, _WORKER_STOP
    # Ctrl-C is the parent's to handle: it leaves the pool, which ends the workers (each
    # worker raising KeyboardInterrupt of its own printed a stray "Process ForkPoolWorker-N:"
    # as the build was left)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a fresh connection: a SQLite connection must not cross a fork (the template
    # environments warmed up before the fork are plain Python objects: they are kept)
    job.store.reconnect()
    _WORKER_JOB = job
    _WORKER_STOP = stop
    # what the worker got through the fork (the template environments and compiled
    # templates made by the warm-up, besides the frozen gathered data) lives until it ends:
    # never scanned by the cycle collector (its full collections scanned them, ~60 ms each)
    gc.freeze()
    # and no automatic collection while a run renders: a page's objects are freed by their
    # counts, and what cycles a run leaves are collected when it ends (_worker). At 10,000
    # PRs a worker spent 0.16 s in ~900 automatic collections, 0.07 s in the runs' own ~50
    gc.disable()


def warm_up(job: RenderJob, indexes: list[int]) -> None:
    """Make the template environments and load the templates the pages need once, before the
    workers fork (each would otherwise make its own)."""
    templates = {job.pages[i].template for i in indexes} - {""}
    for lang in job.langs:
        env = _env(lang, job.envs)
        for name in sorted(templates):
            env.get_template(name)
        for name, warm_up in job.warm_ups.items():
            if name in templates:
                warm_up(lang)


def _worker(indexes: list[int]) -> list[tuple[int, Rendered]] | None:
    """A run of pages rendered; None when it was skipped (pages of another run failed)."""
    assert _WORKER_JOB is not None and _WORKER_STOP is not None
    if _WORKER_STOP.is_set():
        return None
    try:
        done = render_run(_WORKER_JOB, indexes)
    except BaseException:
        _WORKER_STOP.set()  # before the error reaches the parent: every later run is skipped
        raise
    # what the run left alive (the caches of what several pages say) stays for the worker's
    # life: its garbage collected (the collector runs only here: _worker_init), then frozen,
    # so that no pass scans a heap that only grows again (full passes took ~3% of a worker)
    gc.collect(1)
    gc.freeze()
    return done


def render_all(
    job: RenderJob, indexes: list[int], on_done: Callable[[int], None] | None = None,
    take: Callable[[int, Rendered], None] | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> dict[int, Rendered]:
    """Render the pages at ``indexes``; returns, by index, their links and searchable hashes.

    ``take``: called with each page's index and result as its run comes back, instead (the
    returned dict is then empty): what this process does with them is done while the
    workers render the rest. ``meanwhile``: work of this process done once the workers have
    started (before any result is taken); without workers, before the pages are rendered."""
    workers = min(os.cpu_count() or 1, 4)
    results: dict[int, Rendered] = {}
    keep: Callable[[int, Rendered], None] = take or results.__setitem__
    # a page that lists all PRs (timeline, graph, digest week, builder...) costs what tens of
    # PR pages cost: a few of them are worth the other core too
    weight = _weight(job, indexes)
    if weight < PARALLEL_MIN or workers < 2 or str(job.store.path) == ":memory:":
        if meanwhile is not None:
            meanwhile()
        heavy = sum(HEAVY for i in indexes if job.pages[i].template != "site/pr.html")
        if workers >= 2 and heavy >= SPLIT_MIN and str(job.store.path) != ":memory:" \
                and "fork" in multiprocessing.get_all_start_methods():
            for i, one in _render_split(job, indexes, on_done).items():
                keep(i, one)
            return results
        for chunk in _chunks(indexes, 64):
            for i, one in render_run(job, chunk):
                keep(i, one)
            if on_done is not None:
                on_done(len(chunk))
        return results
    warm_up(job, indexes)
    ctx = multiprocessing.get_context("fork")  # fork: the initializer's job is not pickled
    stop = ctx.Event()
    with ctx.Pool(workers, initializer=_worker_init, initargs=(job, stop)) as pool:
        runs = pool.imap_unordered(_worker, guided_runs(render_order(job, indexes), workers))
        while True:
            try:
                if meanwhile is not None:
                    work: Callable[[], None] = meanwhile
                    meanwhile = None
                    work()
                batch = next(runs)
            except StopIteration:
                break
            except Exception:
                # a worker's error (a full disk...), raised here, or this process's own.
                # Leaving the pool now would terminate it while its task thread may still be
                # handing out runs, which can hang for ever (CPython's Pool.terminate, seen on
                # a full disk): the workers skip what is left (`stop`: a worker whose pages
                # failed set it already), and the pool is closed and joined
                stop.set()
                pool.close()
                pool.join()
                raise
            if batch is None:  # skipped: the error of the run that failed is still to come
                continue
            for i, one in batch:
                keep(i, one)
            if on_done is not None:
                on_done(len(batch))
    return results


def render_order(job: RenderJob, indexes: list[int]) -> list[int]:
    """The pages in the order the workers get them, in small runs: the heavy pages of the
    whole site first (so that the last run is not a long one), then the dated ones newest
    first (a week's digest beside the pages of its PRs: what they share, a relation's
    evidence, is worded once in the process that renders them, evidence_lines), then the
    rest. Pages with the same date keep their order (a page's languages next to each
    other: the sort is stable, reversed or not)."""
    pages = job.pages
    heavy = [i for i in indexes if not pages[i].when and pages[i].template != "site/pr.html"]
    dated = sorted((i for i in indexes if pages[i].when), key=lambda i: pages[i].when,
                   reverse=True)
    rest = [i for i in indexes if not pages[i].when and pages[i].template == "site/pr.html"]
    return heavy + dated + rest


def _weight(job: RenderJob, indexes: list[int]) -> int:
    """The work of rendering ``indexes``, in PR pages."""
    return sum(1 if job.pages[i].template == "site/pr.html" else HEAVY for i in indexes)


# what a page costs, in PR pages, for sharing a small job between two processes (measured at
# 10,000 PRs: a digest week of about 100 PRs reads and renders in 40-90 ms, a PR page in 2-5)
_COSTS = {"site/pr.html": 1, "site/digest.html": 4 * HEAVY}


def _render_split(
    job: RenderJob, indexes: list[int], on_done: Callable[[int], None] | None
) -> dict[int, Rendered]:
    """Render a small job on two cores: a forked child renders about half of the work, this
    process the rest (a digest week in two languages is two halves: each process reads the
    week, which costs less than one rendering both). If the child fails, its pages are
    rendered here (where an error is raised with its traceback)."""
    mine: list[int] = []
    theirs: list[int] = []
    load = [0, 0]
    costs = {i: _COSTS.get(job.pages[i].template, HEAVY) for i in indexes}
    for i in sorted(indexes, key=lambda i: -costs[i]):
        side = 0 if load[0] <= load[1] else 1
        (mine, theirs)[side].append(i)
        load[side] += costs[i]
    warm_up(job, theirs)  # the environments and templates, before the fork
    run = fork_run(job, theirs)
    results: dict[int, Rendered] = {}
    try:
        results.update(render_run(job, mine))
    except BaseException:
        run.stop()
        raise
    got = run.results()
    if on_done is not None:
        on_done(len(mine))
    results.update(got if got is not None else render_run(job, theirs))
    if on_done is not None:
        on_done(len(theirs))
    return results


@dataclass
class ForkedRun(Generic[_T]):
    """Work a forked child does while this process goes on (:func:`fork_child`); ``process``
    is None once :meth:`results` or :meth:`stop` has ended it."""

    process: BaseProcess | None
    receive: Connection | None
    _got: _T | None = field(default=None, repr=False)

    def results(self) -> _T | None:
        """What the child's work returned, once the child has ended; None if it failed: the
        caller does that work itself (an error is raised there, with its traceback)."""
        if self.process is None or self.receive is None:
            return self._got
        try:
            got: _T | None = self.receive.recv()
        except (EOFError, OSError):
            got = None  # the child failed: nothing sent
        self.receive.close()
        self.process.join()
        self._got = got if self.process.exitcode == 0 else None
        self.process = self.receive = None
        return self._got

    def stop(self) -> None:
        """End the child now (the caller failed or was interrupted), its work unused."""
        if self.process is not None:
            self.process.terminate()
            self.process.join()
            self.process = None
        if self.receive is not None:
            self.receive.close()
            self.receive = None


def fork_child(work: Callable[..., _T], *args: Any) -> ForkedRun[_T]:
    """Fork a child that returns ``work(*args)`` to this process, which goes on meanwhile.
    ``work`` runs in the child: the first thing it does with a store is reconnect it."""
    ctx = multiprocessing.get_context("fork")  # fork: the arguments are not pickled
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run_child, args=(work, args, send), daemon=True)
    child.start()
    send.close()
    return ForkedRun(child, receive)


def fork_run(job: RenderJob, indexes: list[int]) -> ForkedRun[list[tuple[int, Rendered]]]:
    """Fork a child that renders the pages at ``indexes`` (their folders made, the job's
    environments warmed up before: :func:`warm_up`) while this process goes on."""
    return fork_child(_render_forked, job, indexes)


def _render_forked(job: RenderJob, indexes: list[int]) -> list[tuple[int, Rendered]]:
    job.store.reconnect()  # a SQLite connection must not cross a fork
    return render_run(job, indexes)


def _run_child(work: Callable[..., Any], args: tuple[Any, ...], send: Connection) -> None:
    """The child of :func:`fork_child`: work, send what it returned, exit (an error ends it
    with exit code 1, silently: the parent does the work again and raises)."""
    # Ctrl-C is the parent's: it stops the child (ForkedRun.stop), as it ends pool workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        gc.freeze()  # what came through the fork is never scanned (as in a pool worker)
        send.send(work(*args))
        send.close()
    except BaseException:
        sys.exit(1)


RUN_MAX = 400  # pages in a run handed to a worker, at most


def guided_runs(order: list[int], workers: int) -> list[list[int]]:
    """``order`` cut into the runs the workers take one at a time: a quarter of what is left
    per worker, at most :data:`RUN_MAX` pages, so the runs shrink towards the end (the
    workers finish together). Long runs keep pages of nearby dates in one process, which
    then words what they share once (a relation's evidence: its two PRs and its week),
    and read their facts in fewer queries; with runs of 100 pages, a 2,000-PR build
    executed 1.4% more instructions."""
    runs: list[list[int]] = []
    i = 0
    while i < len(order):
        size = max(1, min(RUN_MAX, (len(order) - i) // (workers * 4)))
        runs.append(order[i:i + size])
        i += size
    return runs


def _chunks(items: list[int], n: int) -> list[list[int]]:
    return [items[i:i + n] for i in range(0, len(items), n)]
