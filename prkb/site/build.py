"""``prkb site build``: the static site, as a list of stages over one :class:`Build`.

:data:`STAGES`, in order: **gather** (one consistent read of the knowledge base,
:mod:`prkb.site.gather`) -> **plan** (every page with the hash of its inputs,
:mod:`prkb.site.plan`; which pages did not change since the previous build; in a cold build,
from the gather to here, digest week pages rendered meanwhile by a child,
:mod:`prkb.site.early`) -> **render**
(unchanged pages reused, the others rendered, :mod:`prkb.site.render`; static assets, sitemap;
internal links checked, :mod:`prkb.site.links`) -> **index** (the Pagefind search index in
shards, each indexed again only when what it reads of its pages changed,
:mod:`prkb.site.search`; none when Pagefind is not installed) -> **write** (the manifest, then
the swap). Each stage is a function of the build and records its time in ``stats.seconds``.

Everything is written into a new tree beside the output and swapped in at the end
(:class:`prkb.site.output.OutputTree`), so a failed build leaves the previous site as it was.
Incremental: the manifest in the output keeps, per page, the hash of its inputs and of its
internal links (:mod:`prkb.site.state`); a page whose hash did not change is hard-linked from
the previous build instead of rendered.
"""

from __future__ import annotations

import gc
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ..lifetime import leave
from ..paths import project_root, templates_dir
from ..profile import Profile
from ..render import evidence_lines
from ..store import Store, canonical_json
from . import links as site_links
from . import state as site_state
from .early import EarlyWeeks
from .early import start as start_early
from .feed import sitemap
from .fragments import FragmentCache
from .gather import SiteData
from .gather import gather as gather_data
from .output import OutputTree, Trash
from .page import Page, ReportHtml
from .partial import PartialJob, Replan, partial_plan
from .plan import Plan, current_hashes, plan_pages
from .render import Rendered, RenderJob, render_all, warm_up
from .search import (
    INDEX,
    PRIMARY,
    SHARDS,
    SHARDS_FILE,
    group_shards,
    index_shards,
    pagefind_binary,
    searchable_hash,
    shard_hash,
)
from .state import MANIFEST as MANIFEST
from .state import MODEL, State

LANGS = ("zh", "en")
_BASE_URL = re.compile(r"^https?://[^\s\"'<>]+$")


@dataclass
class BuildStats:
    out: str
    pages: int = 0
    rendered: int = 0
    reused: int = 0
    search_pages: int = 0  # pages in the search index
    search_shards: int = 0  # search shards indexed again (the others kept)
    search_reindexed: bool = False
    search_missing: bool = False  # search asked for, Pagefind not installed: no index
    patched: bool = False  # planned from a partial read (prkb.site.partial)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        t = self.seconds
        return (
            f"site written to {self.out}: {self.pages} pages ({self.rendered} rendered, "
            f"{self.reused} unchanged) in {t.get('total', 0):.2f}s"
            + (f"; search index {t.get('search', 0):.2f}s" if "search" in t else "")
        )


def parse_langs(text: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """``--lang`` as a list of known language codes (``zh,en`` or repeated); :class:`InputError`
    otherwise."""
    if text is None:
        return list(LANGS)
    items = text.split(",") if isinstance(text, str) else list(text)
    langs = []
    for item in items:
        lang = item.strip().lower().replace("_", "-")
        lang = {"zh-cn": "zh", "zh-hans": "zh"}.get(lang, lang)
        if lang not in LANGS:
            raise InputError(f"unknown language {item.strip()!r} in --lang: use zh, en or zh,en")
        if lang not in langs:
            langs.append(lang)
    if not langs:
        raise InputError("--lang names no language: use zh, en or zh,en")
    return langs


def check_base_url(url: str | None) -> str | None:
    """``--base-url`` if it is an http(s) address without quotes or spaces; :class:`InputError`
    otherwise."""
    if url is None or url == "":
        return None
    if not _BASE_URL.match(url):
        raise InputError(f"--base-url must be an http(s) URL, got {url!r:.80}")
    return url.rstrip("/") + "/"


# --- the report on each PR page ------------------------------------------------------------


def report_html_for(profile: Profile) -> ReportHtml:
    """The PR's report (the same content as ``prkb report``) as safe HTML.

    Rendered from the report's facts with the report template's HTML formatter
    (report_page), not through Markdown: the same sentences, a third of the cost.
    """
    from .report_page import ReportPages

    return ReportPages(profile)  # its prefetch reads the facts of a run's PRs at once


def _warm_ups(rules: str) -> dict[str, Callable[[str], None]]:
    """What the renderer makes before its workers fork, per template that needs it (the PR
    reports' with the wording of the profile's audit rule module ``rules``)."""
    from ..publish import digest
    from . import report_page

    return {"site/pr.html": partial(report_page.warm_up, rules=rules),
            "site/digest.html": digest.warm_up}


# --- the build ------------------------------------------------------------------------------


@dataclass
class Build:
    """One site build: its options, its output tree, and what each stage leaves for the next."""

    store: Store
    profile: Profile
    tree: OutputTree
    langs: list[str]
    base_url: str | None
    search: bool  # asked for
    pagefind: Path | None  # the Pagefind executable (None: not installed, or not asked for)
    report_html: ReportHtml
    on_page: Callable[[], None] | None
    salt: str  # the hash of what every page depends on (see _salt)
    old: State  # the previous build, when its pages can be reused (same salt); else empty
    stats: BuildStats
    gc_on: bool  # whether the cycle collector ran before the build
    # gather
    cursor: tuple[int, str] = (0, "")  # the change journal's cursor at the time of the read
    changed: dict[str, set[str]] | None = None  # what changed since the previous build
    data: SiteData = field(default_factory=SiteData)
    patch: bool = True  # try a plan from a partial read (prkb.site.partial)
    patched: Plan | None = None  # that plan, when it applied
    # a cold build's digest week pages rendered by a child while this process reads and
    # plans (site/early.py)
    early: EarlyWeeks | None = None
    # the render's template environments and loaded templates (made while the early child
    # renders, when there is one)
    envs: dict[str, Any] = field(default_factory=dict)
    templates: dict[tuple[str, str], Any] = field(default_factory=dict)
    # plan
    plan: Plan = field(default_factory=Plan)
    new: State = field(default_factory=State)  # the manifest this build writes
    todo: list[int] = field(default_factory=list)  # pages to render (indexes into the plan)
    keep: list[int] = field(default_factory=list)  # pages to take from the previous build
    clock: float = field(default_factory=time.perf_counter)  # when the last lap ended

    @property
    def search_on(self) -> bool:
        """Whether the site gets a search index."""
        return self.search and self.pagefind is not None

    @property
    def pages(self) -> list[Page]:
        return self.plan.pages

    def lap(self, name: str) -> None:
        """Record the time since the previous lap as the time of ``name``."""
        now = time.perf_counter()
        self.stats.seconds[name] = now - self.clock
        self.clock = now


def gather(b: Build) -> None:
    """Stage 1: the knowledge base in one read snapshot, with the change journal's cursor and
    what changed since the previous build."""
    # the gathered data is hundreds of thousands of small containers that live for the whole
    # build: no cycle collection while they are made, then frozen (never scanned again, and
    # not copied into forked workers by the collector's writes); see plan
    gc.disable()
    if not b.old.pages and not b.old.model:
        # a cold build (every page is rendered, no partial plan): week pages meanwhile, by a
        # child forked before the read transaction, that reads after the cursor is taken
        b.early = start_early(b.store, b.profile, b.langs, base_url=b.base_url,
                              tmp=b.tree.tmp, search=b.search_on)
    with b.store.read_snapshot():  # the cursor and the data from one consistent read
        b.cursor = b.store.change_cursor()
        if b.early is not None:
            b.early.go()
        b.changed = b.store.changes_since(b.old.kb)
        if b.patch and b.changed is not None and b.old.model:
            # a few PRs changed only what is shown of them: read and plan those pages only
            job = PartialJob(b.store, b.profile, b.langs, b.base_url, b.report_html,
                           b.search_on, b.old, b.changed, FragmentCache(b.salt, read=True))
            b.patched = partial_plan(job, b.tree.previous_model(b.old.model))
        # a patched build writes its few files in place; any other build links the previous
        # pages into its new tree, in a child process, while it reads and plans
        if (b.patched is None or not b.tree.in_place()) and b.old.pages:
            b.tree.start_prelink()
        if b.patched is None:
            b.data = gather_data(b.store, b.profile)
    b.stats.patched = b.patched is not None
    b.lap("gather")


def plan(b: Build) -> None:
    """Stage 2: every page and the hash of its inputs; the pages whose hash is the previous
    build's are kept, the others rendered."""
    if b.patched is not None:
        b.plan = b.patched
    else:
        currents = current_hashes(b.data)
        known = site_state.unchanged_hashes(b.data, b.old, b.changed, currents)
        # a full plan renders every fragment (and keeps it for the next one-PR rebuild)
        b.plan = plan_pages(b.store, b.data, b.profile, b.langs, base_url=b.base_url,
                            report_html=b.report_html, known=known, currents=currents,
                            search=b.search_on, fragments=FragmentCache(b.salt, read=False))
    b.new = State(salt=b.salt, kb=list(b.cursor), currents=b.plan.currents,
                  prs={str(k): list(v) for k, v in b.plan.pr_hashes.items()})
    b.lap("plan")
    old = b.old.pages
    for i, page in enumerate(b.pages):
        prev = old.get(page.path)
        # same salt, same inputs: the same hash as before, by construction
        page_hash = prev[0] if page.same and prev is not None else _page_hash(b.salt, page)
        b.new.pages[page.path] = [page_hash, "", ""]
        if prev is not None and prev[0] == page_hash:
            b.keep.append(i)
        else:
            b.todo.append(i)
    for path, _ in b.plan.carried:  # kept as they are, with the previous build's hashes
        b.new.pages[path] = [old[path][0], "", ""]
    if b.early is not None:
        # the render's template environments made while the early child still renders; then
        # it stops after its page (the render takes its pages: render)
        warm_up(_render_job(b), list(range(len(b.pages))))
        b.early.stop_soon()
    b.lap("hash")
    gc.freeze()
    if b.gc_on:
        gc.enable()


def _render_job(b: Build) -> RenderJob:
    return RenderJob(b.pages, b.store, b.langs, b.base_url, b.tree.tmp, search=b.search_on,
                     envs=b.envs, templates=b.templates, warm_ups=_warm_ups(b.profile.rules),
                     prefetch=getattr(b.report_html, "prefetch", None))


def render(b: Build) -> None:
    """Stage 3: the files of the new tree: kept pages from the previous build, the others
    rendered, the static assets and the sitemap; then every internal link is checked."""
    pages, old, new, tree = b.pages, b.old, b.new, b.tree
    # pages of the previous build this one no longer makes; the same set of pages (and the
    # same salt: base URL, assets) means the same sitemap and no kept link can break
    gone = old.pages.keys() - new.pages.keys()
    same_paths = not gone and len(old.pages) == len(new.pages)
    job = _render_job(b)
    rendered_links: dict[str, list[str]] = {}
    # the rendered pages' links, checked against the tree's files as the pages come once
    # those are known (tree_files)
    check: site_links.LinkCheck | None = None
    # a cold build's tree holds only what this build writes (no previous page linked in, none
    # kept): its files are known before the pages are rendered, and written while the
    # workers render; each page is rendered once, and its member of the links file is made
    # as it comes
    cold = not old.pages
    entries: list[str] | None = [] if cold else None

    def rendered(path: str, page_links: list[str], searchable: str) -> None:
        rendered_links[path] = page_links
        text = site_state.links_text(page_links)
        new.pages[path][1:] = [site_state.links_text_hash(text), searchable]
        if check is not None:
            check.page(path, page_links)
        if entries is not None:
            entries.append(site_state.links_entry(path, text))

    def take(i: int, one: Rendered) -> None:
        rendered(pages[i].path, *one)

    def render_some(indexes: list[int], counted: bool = True,
                    meanwhile: Callable[[], None] | None = None) -> None:
        done = _advance(b.on_page) if counted else None  # each page once on the progress bar
        render_all(job, indexes, on_done=done, take=take, meanwhile=meanwhile)

    def tree_files() -> None:
        """The static assets and the sitemap written; the tree's files known, and the links
        of the pages rendered so far checked against them (and of every page rendered
        from now on, as it comes)."""
        nonlocal check
        written = set(new.pages) | tree.copy_assets()
        if not (same_paths and tree.reuse("sitemap.xml")):
            html_pages = sorted([p.path for p in pages if p.kind == "html"
                                 and p.path != "404.html"]
                                + [path for path, _ in b.plan.carried
                                   if path.endswith(".html") and path != "404.html"])
            tree.write("sitemap.xml", sitemap(html_pages, b.base_url))
        written.add("sitemap.xml")
        check = site_links.LinkCheck(written)
        for path, page_links in rendered_links.items():
            check.page(path, page_links)

    # the pages that changed first, while the prelink child still links the kept ones
    todo = [pages[i].path for i in b.todo]
    tree.make_folders(todo)
    # the week pages the early child finished while this process read and planned
    early = b.early.results(b.plan.weeks_from) if b.early is not None else {}
    for path, (page_links, searchable) in early.items():
        rendered(path, page_links, searchable)
    if early:
        done = _advance(b.on_page)
        if done is not None:
            done(len(early))

    def meanwhile() -> None:
        tree_files()
        if b.plan.model is not None:  # the model of the site too (see write)
            new.model = tree.save_model(b.plan.model)

    render_some([i for i in b.todo if pages[i].path not in early] if early else b.todo,
                meanwhile=meanwhile if cold else None)
    b.lap("render")
    carried = b.plan.carried
    here, lost = tree.place_pages([pages[i].path for i in b.keep] + [c[0] for c in carried],
                                  todo, gone, old)
    if lost:  # the child failed and the tree was emptied: the rendered pages again
        render_some(b.todo, counted=False)
    kept: list[str] = []
    again: list[int] = []
    new_pages, old_pages, search_on, on_page = new.pages, old.pages, b.search_on, b.on_page
    kept_pages = [(pages[i].path, pages[i].search, i) for i in b.keep]
    carried_pages = [(path, shard is not None, -1) for path, shard in carried]
    for (path, search, i), good in zip(kept_pages + carried_pages, here, strict=True):
        if not good:
            if i < 0:
                raise Replan  # a carried page is gone from the previous site
            again.append(i)
            continue
        kept.append(path)
        entry = new_pages[path]
        entry[1:] = old_pages[path][1:]
        if search and search_on and not entry[2]:
            # indexed now, not before: hash what the index will read of it
            entry[2] = searchable_hash(tree.read(path))
        if on_page is not None:
            on_page()
    b.stats.reused += len(kept)
    if again:  # kept pages missing from the previous site: rendered after all
        render_some(again)
        b.todo += again
    b.stats.rendered = len(b.todo)
    b.stats.pages = len(pages) + len(carried)
    b.lap("reuse")
    if check is None:
        tree_files()
    b.lap("assets")
    assert check is not None
    _check_and_keep_links(b, kept, rendered_links, check, gone=bool(gone),
                          same_paths=same_paths, entries=entries)
    b.lap("links")


def index(b: Build) -> None:
    """Stage 4: the search index, in shards (:mod:`prkb.site.search`): a shard none of whose
    pages changed keeps its bundle from the previous build, the others are indexed again."""
    if not b.search_on:
        b.tree.drop(INDEX)
        b.stats.search_missing = b.search  # asked for, but Pagefind is not installed
        return
    assert b.pagefind is not None
    shards = group_shards([(p.path, p.shard) for p in b.pages if p.search]
                          + [(path, shard) for path, shard in b.plan.carried
                             if shard is not None])
    pages = b.new.pages
    # what the index reads of each page (not all its inputs): a page that shows another PR's
    # edited title in a part the index leaves out does not index its shard again
    b.new.shards = {name: shard_hash([(path, pages[path][2]) for path in paths])
                    for name, paths in shards.items()}
    old = b.old.shards if b.old.search else {}
    todo = [name for name, h in b.new.shards.items() if old.get(name) != h]
    b.stats.search_pages = sum(len(paths) for paths in shards.values())
    if todo or old.keys() != b.new.shards.keys() or not b.tree.reuse_index(INDEX):
        b.tree.drop(INDEX)
        if shards:
            b.stats.search_shards = index_shards(b.tree.tmp, shards, todo,
                                                 partial(_reuse_shard, b.tree), b.pagefind,
                                                 page_file=b.tree.page_file)
        b.stats.search_reindexed = b.stats.search_shards > 0
    b.new.search = True
    b.lap("search")


def _reuse_shard(tree: OutputTree, name: str) -> bool:
    if name == PRIMARY:  # the primary bundle's files, without the other shards
        return tree.reuse_folder(INDEX, skip=frozenset({SHARDS, SHARDS_FILE}))
    return tree.reuse_folder(f"{INDEX}/{SHARDS}/{name}")


def write(b: Build) -> None:
    """Stage 5: the model of the site (kept as it was by a patched build) and the manifest,
    then the new tree swapped in for the previous site."""
    if b.plan.model is not None:
        if not b.new.model:  # (a cold build wrote it while its workers rendered: render)
            b.new.model = b.tree.save_model(b.plan.model)
    elif b.tree.reuse(MODEL):
        b.new.model = b.old.model
    b.tree.save_manifest(b.new)
    b.lap("manifest")
    if b.tree.inplace:  # the pages it no longer has, and the index's hashes if none
        b.tree.commit(sorted(b.old.pages.keys() - b.new.pages.keys())
                      + ([] if b.new.search else [site_state.SEARCH]), INDEX)
    else:
        b.tree.swap()
    b.lap("swap")


STAGES: list[Callable[[Build], None]] = [gather, plan, render, index, write]


def build_site(
    store: Store,
    out: str | Path,
    profile: Profile,
    *,
    langs: list[str] | None = None,
    base_url: str | None = None,
    search: bool = True,
    report_html: ReportHtml | None = None,
    on_page: Callable[[], None] | None = None,
    trash: Trash | None = None,
) -> BuildStats:
    """Build the site into ``out``; returns what was done and how long each stage took.

    ``trash``: removes old trees (see :class:`~prkb.site.output.Trash`); pass the same one to
    builds that follow each other in one process so that each waits for the last's removals.
    """
    out = Path(out)
    langs = langs or list(LANGS)
    base_url = check_base_url(base_url)
    t0 = time.perf_counter()
    tree = OutputTree(out, trash)
    gc_on = gc.isenabled()
    evidence_lines.clear()  # what one build worded is not kept for the next
    # the previous manifest is tens of thousands of small containers: no cycle collection
    # while they are read (a full one in a large process costs tens of milliseconds); gather
    # keeps it off, plan turns it on again
    gc.disable()
    try:
        previous = tree.previous()
        salt = _salt(profile, langs, base_url)
        if report_html is not None:  # another renderer makes other pages
            salt = hashlib.sha256(f"{salt}|{report_html.__qualname__}".encode()).hexdigest()
        b = Build(
            store=store, profile=profile, tree=tree, langs=langs, base_url=base_url,
            search=search, pagefind=pagefind_binary() if search else None,
            report_html=report_html or report_html_for(profile), on_page=on_page,
            salt=salt, old=previous if previous.salt == salt else State(),
            stats=BuildStats(out=str(out)), gc_on=gc_on, clock=t0,
        )
    except BaseException:
        if gc_on:
            gc.enable()
        raise
    try:
        # gather decides: written in place, or the previous pages linked into the new tree by
        # a child process while this one reads and plans
        tree.open()
        b.lap("start")
        try:
            _run_stages(b)
        except Replan:  # the patched plan cannot stand: plan every page from a full read
            tree.abandon()
            tree.open()
            b = replace(b, patch=False, patched=None, data=SiteData(), plan=Plan(), new=State(),
                        todo=[], keep=[], stats=BuildStats(out=str(out)))
            _run_stages(b)
    except OSError as e:  # disk full, read-only folder...: the previous site is kept
        tree.abandon()
        raise tree.write_error(e) from None
    except BaseException:
        tree.abandon()
        raise
    finally:
        gc.unfreeze()
        if b.gc_on:
            gc.enable()
    b.stats.seconds["total"] = time.perf_counter() - t0
    leave(b)  # the prkb command frees the build's data with its process (prkb/lifetime.py)
    return b.stats


def _run_stages(b: Build) -> None:
    try:
        for stage in STAGES:
            stage(b)
    finally:  # a build that ends early (an error, Ctrl-C) stops its early child first
        if b.early is not None:
            b.early.stop()


def _check_and_keep_links(
    b: Build, kept: list[str], rendered: dict[str, list[str]], check: site_links.LinkCheck,
    *, gone: bool, same_paths: bool, entries: list[str] | None = None,
) -> None:
    """Check internal links and write the links file.

    Links of pages rendered now are always checked (``check`` holds them, against the
    tree's files). A kept page's links were checked when it was made, against the same
    assets (the salt covers them): they can only break when a page went away, so only then
    are they read back and checked too. ``entries``: the rendered pages' members of the links
    file, when each was made as its page came (a cold build).
    """
    old, new = b.old, b.new
    previous = b.tree.previous_links() if kept and gone else None
    check.done()
    if previous is not None:
        site_links.check_links({path: previous.get(path, []) for path in kept},
                               check.existing)
    if same_paths and all(old.pages[p][1] == new.pages[p][1] for p in rendered) \
            and b.tree.reuse_links():
        return
    if entries is not None and not kept and len(entries) == len(rendered):
        b.tree.save_link_entries(entries)  # each rendered page's, made as it came
        return
    if previous is None and kept:
        previous = b.tree.previous_links()
    links = {path: (previous or {}).get(path, []) for path in kept}
    links.update(rendered)
    b.tree.save_links(links)


def _salt(profile: Profile, langs: list[str], base_url: str | None) -> str:
    """Hash of everything every page depends on: templates, catalogs, code, glossary."""
    h = hashlib.sha256()
    h.update(f"{__version__}|{','.join(langs)}|{base_url}|{profile.name}".encode())
    h.update(canonical_json(profile.raw).encode())
    root = project_root()
    for f in salt_files():
        if f.is_file():
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def salt_files() -> list[Path]:
    """The files whose bytes go into the salt: templates, catalogs, the code that renders."""
    root = project_root()
    tdir = templates_dir()
    return [
        *sorted((tdir / "site").rglob("*")),
        *sorted((tdir / "report").rglob("*")),
        *sorted((tdir / "digest").rglob("*")),
        *sorted((tdir / "locales").rglob("*.po")),
        *sorted((root / "prkb" / "render").glob("*.py")),
        *sorted((root / "prkb" / "site").glob("*.py")),
        root / "prkb" / "publish" / "digest.py",
        root / "data" / "glossary.toml",
    ]


def _page_hash(salt: str, page: Page) -> str:
    # inputs are plain data built in a fixed order by plan_pages: repr is a stable key
    text = f"{salt}|{page.path}|{page.template}|{page.inputs!r}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _advance(on_page: Callable[[], None] | None) -> Callable[[int], None] | None:
    if on_page is None:
        return None
    hook = on_page

    def advance(n: int) -> None:
        for _ in range(n):
            hook()

    return advance
