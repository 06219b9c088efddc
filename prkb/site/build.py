"""``prkb site build``: the static site, in one straight pipeline.

gather (site_gather) -> plan pages (site_pages) -> render changed pages, reuse unchanged ones
-> copy static assets -> sitemap -> check internal links (site_links) -> search index
(site_search) -> manifest -> swap the finished folder in.

Everything is written into a temporary folder next to the output and renamed into place at the
end, so a failed build leaves the previous site as it was. Incremental: ``.prkb-manifest.json``
in the output keeps, per page, the hash of its inputs and its internal links; a page whose
hash did not change is hard-linked from the previous build instead of rendered. The previous
tree is renamed aside by the swap and deleted by a detached process the build does not wait for.
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError, PrkbError
from ..paths import project_root, templates_dir
from ..profile import Profile
from ..store import Store, canonical_json
from . import links as site_links
from . import state as site_state
from .feed import sitemap
from .gather import gather
from .pages import Page, current_digests, plan_pages
from .prelink import link_pages
from .render import ASSETS, RenderJob, render_all, write_new
from .state import MANIFEST as MANIFEST
from .state import PLACEHOLDERS

LANGS = ("zh", "en")
_BASE_URL = re.compile(r"^https?://[^\s\"'<>]+$")


@dataclass
class BuildStats:
    out: str
    pages: int = 0
    rendered: int = 0
    reused: int = 0
    search_pages: int = 0
    search_reindexed: bool = False
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
    if url is None or url == "":
        return None
    if not _BASE_URL.match(url):
        raise InputError(f"--base-url must be an http(s) URL, got {url!r:.80}")
    return url.rstrip("/") + "/"


# --- the report on each PR page ------------------------------------------------------------

_IMG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ALT = re.compile(r"""\salt="([^"]*)\"""")
_REL_HREF = re.compile(r"""<a\s+href="(?![A-Za-z][A-Za-z0-9+.-]*:|#)[^"]*"([^>]*)>""")


def site_safe(html: str) -> str:
    """Sanitized HTML made fit for an offline site: no remote images, no relative links.

    Images become their alt text (the site loads nothing from elsewhere); links without a
    scheme (relative to a page on GitHub) lose their href, so they cannot point into the site.
    """

    def img(m: re.Match[str]) -> str:
        alt = _ALT.search(m.group(0))
        return f"<span class=\"img-alt\">[{alt.group(1) if alt else 'image'}]</span>"

    html = _IMG.sub(img, html)
    return _REL_HREF.sub(r"<a\1>", html)


def report_html_for(profile: Profile) -> Callable[[Store, dict[str, Any], str], str]:
    """The PR's report (the same content as ``prkb report``) as safe HTML.

    Rendered from the report's facts with the report template's HTML formatter
    (report_page), not through Markdown: the same sentences, a third of the cost.
    """
    from .report_page import ReportPages

    pages = ReportPages(profile)

    def report_html(store: Store, pr: dict[str, Any], lang: str) -> str:
        return pages.html(store, pr, lang)

    return report_html


# --- the pipeline --------------------------------------------------------------------------


def build_site(
    store: Store,
    out: str | Path,
    profile: Profile,
    *,
    langs: list[str] | None = None,
    base_url: str | None = None,
    search: bool = True,
    report_html: Callable[[Store, dict[str, Any], str], str] | None = None,
    on_page: Callable[[], None] | None = None,
) -> BuildStats:
    """Build the site into ``out``; returns what was done and how long each stage took."""
    out = Path(out)
    langs = langs or list(LANGS)
    base_url = check_base_url(base_url)
    t0 = time.perf_counter()
    stats = BuildStats(out=str(out))
    old = site_state.load(out)
    _clear_trash(out)
    salt = _salt(profile, langs, base_url)
    if report_html is not None:  # another renderer makes other pages
        salt = hashlib.sha256(f"{salt}|{report_html.__qualname__}".encode()).hexdigest()
    valid = old.salt == salt
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as e:
        raise _write_error(out, e) from None
    # the previous pages are linked into the new tree by a child process while this one
    # gathers and plans (pages that changed are unlinked again before they are written)
    linker = _start_prelink(out, tmp) if valid and old.pages else None
    # the gathered data is hundreds of thousands of small containers that live for the whole
    # build: no cycle collection while they are made, then frozen (never scanned again, and
    # not copied into forked workers by the collector's writes)
    gc_on = gc.isenabled()
    gc.disable()
    try:
        t_start = time.perf_counter()
        stats.seconds["start"] = t_start - t0
        with _snapshot(store):  # the cursor and the data from one consistent read
            cursor = store.change_cursor()
            changed = store.changes_since(old.kb) if valid else None
            data = gather(store, profile)
        t1 = time.perf_counter()
        stats.seconds["gather"] = t1 - t_start
        currents = current_digests(data)
        known = site_state.unchanged_digests(data, old, changed, currents)
        plan = plan_pages(store, data, profile, langs, base_url=base_url,
                          report_html=report_html or report_html_for(profile), known=known,
                          currents=currents)
        pages = plan.pages
        new_state = site_state.State(salt=salt, kb=list(cursor), currents=plan.currents,
                                     prs={str(k): list(v) for k, v in plan.pr_digests.items()})
        stats.seconds["plan"] = time.perf_counter() - t1
        t_plan = time.perf_counter()
        todo: list[int] = []
        keep: list[int] = []
        for i, page in enumerate(pages):
            prev = old.pages.get(page.path) if valid else None
            # same salt, same inputs: the same hash as before, by construction
            digest_ = prev[0] if page.same and prev is not None else _page_hash(salt, page)
            new_state.pages[page.path] = [digest_, ""]
            if prev is not None and prev[0] == digest_:
                keep.append(i)
            else:
                todo.append(i)
        t_hash = time.perf_counter()
        stats.seconds["hash"] = t_hash - t_plan
        gc.freeze()
        if gc_on:
            gc.enable()
        failed = _finish_prelink(linker) if linker is not None else None
        if linker is not None and failed is None:  # start again from an empty tree
            shutil.rmtree(tmp)
            tmp.mkdir()
        # pages of the previous build this one no longer makes; the same set of pages (and the
        # same salt: base URL, assets) means the same sitemap and no kept link can break
        gone = old.pages.keys() - new_state.pages.keys() if valid else set()
        same_paths = valid and not gone and len(old.pages) == len(new_state.pages)
        if failed is not None:  # what the prelinked tree must not keep
            for path in {pages[i].path for i in todo} & old.pages.keys() | gone:
                _unlink(tmp / path)
        for d in sorted({p.path.rpartition("/")[0] for p in pages} - {""}):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        if failed is None:  # no prelink: hard links now (or copies)
            ok = _reuse_all(out, tmp, [pages[i].path for i in keep])
        else:
            ok = [pages[i].path not in failed for i in keep]
        kept: list[int] = []
        for i, good in zip(keep, ok, strict=True):
            if not good:
                todo.append(i)
                continue
            kept.append(i)
            new_state.pages[pages[i].path][1] = old.pages[pages[i].path][1]
            stats.reused += 1
            if on_page is not None:
                on_page()
        t_reuse = time.perf_counter()
        stats.seconds["reuse"] = t_reuse - t_hash
        job = RenderJob(pages, store, langs, base_url, tmp)
        rendered_links: dict[str, list[str]] = {}
        for i, page_links in render_all(job, todo, on_done=_advance(on_page)).items():
            path = pages[i].path
            rendered_links[path] = page_links
            new_state.pages[path][1] = site_state.links_hash(page_links)
        stats.rendered = len(todo)
        search_changed = any(pages[i].search for i in todo)
        written = set(new_state.pages)
        stats.pages = len(pages)
        t2 = time.perf_counter()
        stats.seconds["render"] = t2 - t_reuse
        written |= _copy_assets(tmp)
        if not (same_paths and _reuse(out / "sitemap.xml", tmp / "sitemap.xml")):
            html_pages = sorted(p.path for p in pages if p.kind == "html" and p.path != "404.html")
            write_new(tmp / "sitemap.xml", sitemap(html_pages, base_url))
        written.add("sitemap.xml")
        t3 = time.perf_counter()
        stats.seconds["assets"] = t3 - t2
        _check_and_keep_links(out, tmp, old, new_state, kept, pages, rendered_links, written,
                              gone=bool(gone), same_paths=same_paths)
        t4 = time.perf_counter()
        stats.seconds["links"] = t4 - t3
        index_dir = tmp / "pagefind"
        if search:
            from .search import index_site

            keep_index = valid and old.search and not search_changed
            if keep_index and not index_dir.is_dir() and (out / "pagefind").is_dir():
                shutil.copytree(out / "pagefind", index_dir, copy_function=os.link)
            if not (keep_index and index_dir.is_dir()):
                shutil.rmtree(index_dir, ignore_errors=True)
                stats.search_pages = index_site(tmp, [p.path for p in pages if p.search])
                stats.search_reindexed = True
            new_state.search = True
            stats.seconds["search"] = time.perf_counter() - t4
        elif index_dir.exists():
            shutil.rmtree(index_dir, ignore_errors=True)
        for name in PLACEHOLDERS:
            src = out / name
            if src.is_file() and not (tmp / name).exists():
                shutil.copy2(src, tmp / name)
        t5 = time.perf_counter()
        site_state.save(tmp, new_state)
        t6 = time.perf_counter()
        stats.seconds["manifest"] = t6 - t5
        _swap(tmp, out)
        stats.seconds["swap"] = time.perf_counter() - t6
    except OSError as e:  # disk full, read-only folder...: the previous site is kept
        _stop_prelink(linker)
        shutil.rmtree(tmp, ignore_errors=True)
        raise _write_error(out, e) from None
    except BaseException:
        _stop_prelink(linker)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        gc.unfreeze()
        if gc_on:
            gc.enable()
    stats.seconds["total"] = time.perf_counter() - t0
    return stats


@contextmanager
def _snapshot(store: Store) -> Iterator[None]:
    """One read transaction (WAL: a consistent snapshot while collectors may write)."""
    conn = store.conn
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def _start_prelink(out: Path, tmp: Path) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "prkb.site.prelink", str(out), str(tmp)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=str(project_root()),
        )
    except OSError:
        return None


def _finish_prelink(proc: subprocess.Popen[bytes]) -> set[str] | None:
    """The pages the child could not link; None when it failed (nothing it did is trusted)."""
    stdout, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    return set(stdout.decode("utf-8", "surrogateescape").splitlines())


def _stop_prelink(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def _check_and_keep_links(
    out: Path, tmp: Path, old: site_state.State, new: site_state.State, kept: list[int],
    pages: list[Page], rendered: dict[str, list[str]], written: set[str], *, gone: bool,
    same_paths: bool,
) -> None:
    """Check internal links and write the links file.

    Links of pages rendered now are always checked. A kept page's links were checked when it
    was made, against the same assets (the salt covers them): they can only break when a page
    went away, so only then are they read back and checked too.
    """

    def read_previous() -> dict[str, list[str]]:
        previous = site_state.load_links(out)
        if previous is None:
            raise PrkbError(f"cannot read {site_state.LINKS} of the previous site in {out}; "
                            "remove the folder and build again")
        return previous

    previous = read_previous() if kept and gone else None
    site_links.check_links(rendered, written)
    if previous is not None:
        site_links.check_links({pages[i].path: previous.get(pages[i].path, []) for i in kept},
                               written)
    if same_paths and all(old.pages[p][1] == new.pages[p][1] for p in rendered) \
            and site_state.reuse_links(out, tmp):
        return
    if previous is None and kept:
        previous = read_previous()
    links = {pages[i].path: (previous or {}).get(pages[i].path, []) for i in kept}
    links.update(rendered)
    site_state.save_links(tmp, links)


def _write_error(out: Path, e: OSError) -> PrkbError:
    what = e.strerror or str(e)
    return PrkbError(f"cannot write the site to {out}: {what}; the previous site is unchanged")


def _salt(profile: Profile, langs: list[str], base_url: str | None) -> str:
    """Hash of everything every page depends on: templates, catalogs, code, glossary."""
    h = hashlib.sha256()
    h.update(f"{__version__}|{','.join(langs)}|{base_url}|{profile.name}".encode())
    h.update(canonical_json(profile.raw).encode())
    root = project_root()
    tdir = templates_dir()
    files = [
        *sorted((tdir / "site").rglob("*")),
        *sorted((tdir / "report").rglob("*")),
        *sorted((tdir / "digest").rglob("*")),
        *sorted((tdir / "locales").rglob("*.po")),
        *sorted((root / "prkb" / "render").glob("*.py")),
        *sorted((root / "prkb" / "publish").glob("site*.py")),
        root / "prkb" / "publish" / "feed.py",
        root / "prkb" / "publish" / "digest.py",
        root / "data" / "glossary.toml",
    ]
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def _page_hash(salt: str, page: Page) -> str:
    # inputs are plain data built in a fixed order by plan_pages: repr is a stable key
    text = f"{salt}|{page.path}|{page.template}|{page.inputs!r}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _reuse(src: Path, dst: Path) -> bool:
    """Hard-link ``src`` to ``dst``, or copy it where links fail; False when it is gone."""
    try:
        os.link(src, dst)
    except FileNotFoundError:
        return False
    except OSError:
        return _copy(src, dst)
    return True


def _copy(src: Path, dst: Path) -> bool:
    try:
        shutil.copy2(src, dst)
    except OSError:
        return False
    return True


def _reuse_all(out: Path, tmp: Path, paths: list[str]) -> list[bool]:
    """Hard-link (or, where links fail, copy) unchanged pages from the previous build; False
    where one is gone."""
    failed = set(link_pages(out, tmp, paths))
    return [path not in failed or _copy(out / path, tmp / path) for path in paths]


def _advance(on_page: Callable[[], None] | None) -> Callable[[int], None] | None:
    if on_page is None:
        return None
    hook = on_page

    def advance(n: int) -> None:
        for _ in range(n):
            hook()

    return advance


def _copy_assets(tmp: Path) -> set[str]:
    src = templates_dir() / "site" / "static"
    dst = tmp / ASSETS
    shutil.copytree(src, dst)
    vendor = templates_dir() / "site" / "vendor"
    if vendor.is_dir():
        shutil.copytree(vendor, dst / "vendor")
    return {str(p.relative_to(tmp)).replace(os.sep, "/") for p in dst.rglob("*") if p.is_file()}


def _swap(tmp: Path, out: Path) -> None:
    """Rename the finished build into place; the old site is removed only after.

    Removing the old tree (tens of thousands of files) is left to a detached process that the
    build does not wait for: the old tree is first renamed into a trash folder next to the
    output, so the new site is complete and in place when this returns.
    """
    old = out.parent / f".{out.name}.trash-{os.getpid()}-{time.monotonic_ns()}"
    if out.exists():
        out.rename(old)
    try:
        tmp.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    if old.exists():
        _remove_later(old)


_REMOVING: list[subprocess.Popen[bytes]] = []
_RMTREE = "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)"


def _remove_later(path: Path) -> None:
    """Delete ``path`` in a detached process (it outlives this one if need be)."""
    try:
        _REMOVING.append(subprocess.Popen(
            [sys.executable, "-c", _RMTREE, str(path)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        ))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def _clear_trash(out: Path) -> None:
    """Before a build: wait for this process's removals; start removing what others left."""
    while _REMOVING:
        _REMOVING.pop().wait()
    if not out.parent.is_dir():
        return
    for p in out.parent.glob(f".{out.name}.trash-*"):  # left by earlier runs
        if p.is_dir():
            _remove_later(p)
