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
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError, PrkbError
from ..paths import project_root, templates_dir
from ..profile import Profile
from ..store import Store, canonical_json
from . import site_links
from .feed import sitemap
from .site_gather import gather
from .site_pages import Page, plan_pages
from .site_render import ASSETS, RenderJob, render_all

MANIFEST = ".prkb-manifest.json"
# Files a fresh output folder may already hold (the repository's own site/README.md): the
# build accepts such a folder and carries them into every new tree, so they are never lost.
PLACEHOLDERS = frozenset({"README.md", ".gitkeep"})
MANIFEST_VERSION = 1
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

    Rendered from the report's facts with an HTML template (site_report), not through
    Markdown: the same sentences, a third of the cost.
    """
    from .site_report import report_html as render

    def report_html(store: Store, pr: dict[str, Any], lang: str) -> str:
        return render(store, pr, lang, profile)

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
    old = _load_manifest(out)
    _clear_trash(out)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as e:
        raise _write_error(out, e) from None
    # the gathered data is hundreds of thousands of small containers that live for the whole
    # build: no cycle collection while they are made, then frozen (never scanned again, and
    # not copied into forked workers by the collector's writes)
    gc_on = gc.isenabled()
    gc.disable()
    try:
        data = gather(store, profile)
        t1 = time.perf_counter()
        stats.seconds["gather"] = t1 - t0
        pages = plan_pages(store, data, profile, langs, base_url=base_url,
                           report_html=report_html or report_html_for(profile))
        salt = _salt(profile, langs, base_url)
        if report_html is not None:  # another renderer makes other pages
            salt = hashlib.sha256(f"{salt}|{report_html.__qualname__}".encode()).hexdigest()
        new_manifest: dict[str, Any] = {"version": MANIFEST_VERSION, "salt": salt, "pages": {}}
        links: dict[str, list[str]] = {}
        for d in sorted({p.path.rpartition("/")[0] for p in pages} - {""}):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        stats.seconds["plan"] = time.perf_counter() - t1
        todo: list[int] = []
        keep: list[int] = []
        valid = old.get("salt") == salt
        for i, page in enumerate(pages):
            digest = _page_hash(salt, page)
            prev = old["pages"].get(page.path) if valid else None
            new_manifest["pages"][page.path] = {"h": digest, "l": []}
            if prev is not None and prev.get("h") == digest:
                keep.append(i)
            else:
                todo.append(i)
        # unchanged pages: hard links to the previous build (one thread: threads only contend
        # for the folder locks; paths relative to open folder handles save the lookups)
        t_hash = time.perf_counter()
        stats.seconds["hash"] = t_hash - t1 - stats.seconds["plan"]
        gc.freeze()
        if gc_on:
            gc.enable()
        for i, ok in zip(keep, _reuse_all(out, tmp, [pages[i].path for i in keep]), strict=True):
            if not ok:
                todo.append(i)
                continue
            path = pages[i].path
            links[path] = new_manifest["pages"][path]["l"] = list(old["pages"][path].get("l", []))
            stats.reused += 1
            if on_page is not None:
                on_page()
        t_reuse = time.perf_counter()
        stats.seconds["reuse"] = t_reuse - t_hash
        job = RenderJob(pages, store, langs, base_url, tmp)
        for i, page_links in render_all(job, todo, on_done=_advance(on_page)).items():
            path = pages[i].path
            links[path] = new_manifest["pages"][path]["l"] = page_links
        stats.rendered = len(todo)
        search_changed = any(pages[i].search for i in todo)
        written = {p.path for p in pages}
        stats.pages = len(pages)
        t2 = time.perf_counter()
        stats.seconds["render"] = t2 - t_reuse
        written |= _copy_assets(tmp)
        html_pages = [p.path for p in pages if p.kind == "html" and p.path != "404.html"]
        (tmp / "sitemap.xml").write_bytes(sitemap(html_pages, base_url))
        written.add("sitemap.xml")
        t3 = time.perf_counter()
        stats.seconds["assets"] = t3 - t2
        site_links.check_links(links, written)
        t4 = time.perf_counter()
        stats.seconds["links"] = t4 - t3
        if search:
            from .site_search import index_site

            old_index = out / "pagefind"
            if not search_changed and old.get("search") and old_index.is_dir():
                shutil.copytree(old_index, tmp / "pagefind", copy_function=os.link)
            else:
                stats.search_pages = index_site(tmp, [p.path for p in pages if p.search])
                stats.search_reindexed = True
            new_manifest["search"] = True
            stats.seconds["search"] = time.perf_counter() - t4
        for name in PLACEHOLDERS:
            src = out / name
            if src.is_file() and not (tmp / name).exists():
                shutil.copy2(src, tmp / name)
        t5 = time.perf_counter()
        (tmp / MANIFEST).write_text(json.dumps(new_manifest, separators=(",", ":")),
                                    encoding="utf-8")
        t6 = time.perf_counter()
        stats.seconds["manifest"] = t6 - t5
        _swap(tmp, out)
        stats.seconds["swap"] = time.perf_counter() - t6
    except OSError as e:  # disk full, read-only folder...: the previous site is kept
        shutil.rmtree(tmp, ignore_errors=True)
        raise _write_error(out, e) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        gc.unfreeze()
        if gc_on:
            gc.enable()
    stats.seconds["total"] = time.perf_counter() - t0
    return stats


def _write_error(out: Path, e: OSError) -> PrkbError:
    what = e.strerror or str(e)
    return PrkbError(f"cannot write the site to {out}: {what}; the previous site is unchanged")


def _load_manifest(out: Path) -> dict[str, Any]:
    if not out.exists():
        return {"pages": {}}
    if not out.is_dir():
        raise InputError(f"output {out} exists and is not a folder")
    path = out / MANIFEST
    if not path.exists():
        if any(p.name not in PLACEHOLDERS for p in out.iterdir()):
            raise InputError(
                f"output folder {out} is not empty and was not written by 'prkb site build' "
                f"(no {MANIFEST}); choose another -o or remove it"
            )
        return {"pages": {}}
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"pages": {}, "ours": True}
    if not isinstance(m, dict) or m.get("version") != MANIFEST_VERSION:
        return {"pages": {}, "ours": True}
    return m


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
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _reuse(src: Path, dst: Path) -> bool:
    try:
        os.link(src, dst)
    except FileNotFoundError:
        return False
    except OSError:
        try:
            shutil.copy2(src, dst)
        except OSError:
            return False
    return True


def _reuse_all(out: Path, tmp: Path, paths: list[str]) -> list[bool]:
    """Hard-link (or copy) unchanged pages from the previous build; False where one is gone."""
    if not paths:
        return []
    if os.link not in os.supports_dir_fd:
        return [_reuse(out / path, tmp / path) for path in paths]
    src_fd = os.open(out, os.O_RDONLY)
    try:
        dst_fd = os.open(tmp, os.O_RDONLY)
        try:
            done = []
            for path in paths:
                try:
                    os.link(path, path, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
                    done.append(True)
                except FileNotFoundError:
                    done.append(False)
                except OSError:  # no hard links here (another file system...): a copy
                    done.append(_reuse(out / path, tmp / path))
            return done
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)


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
