"""Search: the Pagefind index of the site (extended build, so Chinese words are segmented),
in shards, so that a changed PR re-indexes its shard only.

Pagefind splits each index by the pages' ``<html lang>``, so the Chinese search page finds
Chinese pages and the English one English pages. Only elements marked
``data-pagefind-body`` (PR, builder and weekly digest pages) are indexed, without the parts
marked ``data-pagefind-ignore`` (what a page says of other PRs: their titles on a PR page and
in its report's related PRs, a builder's list of PRs).

Shards (a page's shard is fixed by the plan, :attr:`prkb.site.page.Page.shard`): PR pages are
grouped by PR id (:data:`PRS_PER_SHARD` PRs a shard: a PR keeps its shard for good); the
weekly digests by year (:func:`digest_shard`). The shard of the newest PRs, with the builder
pages, is the primary bundle in ``pagefind/``; every other shard is a bundle of its own in
``pagefind/shards/<name>/``, and ``pagefind/shards.json`` lists them for the search page,
which merges them in the browser (Pagefind's multisite ``mergeIndex``).

A shard is indexed again only when what Pagefind reads of its pages changed: each rendered
page's :func:`searchable_hash` (its bytes without the ignored parts) is kept in the manifest,
and a shard whose pages' hashes are the previous build's keeps its bundle (hard links). So a
PR's edited title indexes its own shard and its digest week's again, not the shards of the
PRs that link to it.

Pagefind is optional (the ``search`` extra): without it the site is built without an index.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import PrkbError

GLOB = "*/{pr,builder,digest}/*.html"
INDEX = "pagefind"  # the search index's folder in the site
SHARDS = "shards"  # the folder of the other shards' bundles in INDEX
SHARDS_FILE = "shards.json"  # in INDEX: the bundles the search page merges
PRS_PER_SHARD = 500
PRIMARY = "primary"  # the name of the primary shard
# the start tag of an element Pagefind leaves out (see strip_ignored)
_IGNORED_START = re.compile(rb"<([a-z][a-z0-9]*)\b[^>]*\sdata-pagefind-ignore(?=[\s>=])[^>]*>")
INSTALL_HINT = "pip install 'prkb[search]'"
MISSING = f"no search index: Pagefind is not installed (add it with: {INSTALL_HINT})"


def pagefind_binary() -> Path | None:
    """The Pagefind executable, or None when Pagefind is not installed (the ``pagefind``
    package cannot be imported, or it finds no binary).

    Found in the order of ``pagefind.service.get_executable`` ($PAGEFIND_BINARY_PATH, the
    extended binary's package, the plain one's, then the PATH), without importing
    ``pagefind.service``: that imports asyncio, 80 ms of a one-PR rebuild's 0.5 s."""
    try:
        import pagefind  # noqa: F401 (installed or not: the search extra)
    except ImportError:
        return None
    exe: str | Path | None = os.environ.get("PAGEFIND_BINARY_PATH")
    try:
        for package in ("pagefind_bin_extended", "pagefind_bin"):
            if exe is not None:
                break
            try:
                module = importlib.import_module(package)
            except ImportError:
                continue
            exe = module.get_executable()
        exe = exe or shutil.which("pagefind_extended") or shutil.which("pagefind")
    except Exception:  # any failure to find it means: not installed
        return None
    if not exe:
        return None
    path = Path(exe)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def pr_shard(pr_id: int) -> str:
    """The search shard of a PR's pages: its id's group of :data:`PRS_PER_SHARD`."""
    return str(pr_id // PRS_PER_SHARD)


def digest_shard(week: str) -> str:
    """The search shard of a weekly digest's pages (``2025-W03``): its year's."""
    return f"digest-{week[:4]}"


def searchable_hash(body: bytes) -> str:
    """A hash of what Pagefind can read of a page: its bytes with each element it is told to
    ignore replaced by a mark (NUL, never in a page: where text was, without the text). Two
    pages with the same hash index the same (the rest of the page, head and navigation
    included, is hashed too: more than Pagefind reads, never less)."""
    return hashlib.blake2b(strip_ignored(body), digest_size=8).hexdigest()


def strip_ignored(body: bytes) -> bytes:
    """A page's bytes, each element Pagefind ignores replaced by NUL.

    An element goes whole, from its start tag to its end tag, provided it holds no element of
    its own name (its end would be ambiguous without parsing) and no Pagefind attribute
    (``data-pagefind-ignore`` still reads the filters and meta inside); any other element is
    kept as it is, which hashes more than is indexed, never less. Only templates write these
    attributes: text from the knowledge base is escaped, and the sanitizer drops data
    attributes from rendered Markdown."""
    parts: list[bytes] = []
    at = 0
    for m in _ignore_starts(body):
        if m.start() < at:  # inside an element already removed
            continue
        tag = m.group(1)
        close = _end_tag(body, tag, m.end())
        if close < 0:
            continue
        inner = body[m.end():close]
        if b"data-pagefind-" in inner or _holds(inner, tag):
            continue
        end = body.find(b">", close)
        if end < 0:
            continue
        parts += [body[at:m.start()], b"\0"]
        at = end + 1
    if not parts:
        return body
    parts.append(body[at:])
    return b"".join(parts)


def _ignore_starts(body: bytes) -> Iterator[re.Match[bytes]]:
    """The start tags that carry ``data-pagefind-ignore``, in order: found by the attribute's
    name (a fast byte search), each checked from its tag's ``<``."""
    i = body.find(_ATTR)
    while i >= 0:
        m = _IGNORED_START.match(body, body.rfind(b"<", 0, i))
        if m is not None and m.end() > i:
            yield m
        i = body.find(_ATTR, i + len(_ATTR))


_ATTR = b"data-pagefind-ignore"
_TAG_END = (b" ", b"\t", b"\n", b"\r", b"\f", b">", b"/")


def _end_tag(body: bytes, tag: bytes, start: int) -> int:
    """Where the first end tag named ``tag`` at or after ``start`` begins (-1: none)."""
    closing = b"</" + tag
    i = body.find(closing, start)
    while i >= 0 and body[i + len(closing):i + len(closing) + 1] not in _TAG_END:
        i = body.find(closing, i + 1)
    return i


def _holds(inner: bytes, tag: bytes) -> bool:
    """Whether ``inner`` has a start tag named ``tag`` (``<tag``, then a space, ``>`` or
    ``/``)."""
    opening = b"<" + tag
    i = inner.find(opening)
    while i >= 0:
        nxt = inner[i + len(opening):i + len(opening) + 1]
        if nxt in _TAG_END:
            return True
        i = inner.find(opening, i + 1)
    return False


def group_shards(pages: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Shard name -> its pages' paths, from (path, shard) of every searchable page; the
    newest PR shard (the highest number) and the shard named "" are the primary one."""
    numbers = [int(name) for _, name in pages if name.isdigit()]
    newest = str(max(numbers)) if numbers else None
    shards: dict[str, list[str]] = {}
    for path, name in pages:
        key = PRIMARY if name in ("", newest) else name
        shards.setdefault(key, []).append(path)
    return shards


def shard_names(shards: dict[str, list[str]]) -> list[str]:
    """The merged shards' folders, relative to the primary bundle, in a stable order."""
    return [f"{SHARDS}/{name}/" for name in sorted(shards) if name != PRIMARY]


def shard_hash(page_hashes: list[tuple[str, str]]) -> str:
    """A shard's bundle depends on its pages (paths) and their contents (page hashes)."""
    text = "\n".join(f"{p}\t{h}" for p, h in sorted(page_hashes))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def index_shards(
    site: Path,
    shards: dict[str, list[str]],
    todo: list[str],
    reuse: Callable[[str], bool],
    binary: Path,
    page_file: Callable[[str], Path] | None = None,
) -> int:
    """Write the index of ``site`` (the new tree) into ``site/pagefind``.

    ``shards``: shard name -> its pages; ``todo``: the shards to index again; ``reuse(name)``
    links a shard's bundle from the previous build into place (False: it cannot, index it);
    ``page_file(path)``: where a page is (default: in ``site``). Returns the number of shards
    indexed.
    """
    index = site / INDEX
    index.mkdir(exist_ok=True)
    redo = [name for name in sorted(shards) if name in todo or not reuse(name)]
    # Pagefind uses every core for a large shard; two at a time keep both busy for the small
    # ones (and the start and write of each)
    workers = 1 if len(redo) < 2 else min(2, os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(lambda name: _index_one(site, name, shards[name], binary,
                                                  page_file or site.joinpath), redo):
            pass
    (index / SHARDS_FILE).write_text(json.dumps(shard_names(shards)), encoding="utf-8")
    return len(redo)


def bundle_dir(site: Path, name: str) -> Path:
    return site / INDEX if name == PRIMARY else site / INDEX / SHARDS / name


def _index_one(
    site: Path, name: str, pages: list[str], binary: Path, page_file: Callable[[str], Path]
) -> None:
    """Index one shard: its pages linked into a folder of their own, Pagefind run on it, its
    bundle moved into place."""
    work = site / f".search-{name}"
    shutil.rmtree(work, ignore_errors=True)
    staged, out = work / "site", work / "out"
    try:
        for path in pages:
            dst = staged / path
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(page_file(path), dst)
            except OSError:
                shutil.copyfile(page_file(path), dst)
        _run_pagefind(binary, staged, out)
        dest = bundle_dir(site, name)
        dest.mkdir(parents=True, exist_ok=True)
        for entry in out.iterdir():
            target = dest / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            entry.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_pagefind(binary: Path, staged: Path, out: Path) -> None:
    cmd = [str(binary), "--site", str(staged), "--output-path", str(out), "--glob", GLOB,
           "--silent"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except OSError as e:
        raise PrkbError(f"cannot run Pagefind: {e}") from None
    except subprocess.TimeoutExpired:
        raise PrkbError("Pagefind did not finish indexing within 30 minutes") from None
    if proc.returncode != 0 or not (out / "pagefind.js").exists():
        last = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise PrkbError(
            f"Pagefind failed to index the site (reinstall it with: {INSTALL_HINT}): "
            f"{last[0][:300]}"
        )
