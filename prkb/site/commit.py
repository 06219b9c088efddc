"""The in-place commit of a patched build: its few new files moved over the site's, after a
journal that lets the next build finish a commit that was cut short.

A full build writes a whole new tree and swaps it in (:meth:`prkb.site.output.OutputTree.swap`);
for that, every kept page is hard-linked into the new tree, which is what a one-PR rebuild
would spend most of its time on (tens of thousands of links). A build planned from a partial
read (:mod:`prkb.site.partial`) changes a few dozen files, so it writes them into its staging
folder beside the site and moves them into the site instead:

1. everything is rendered into the staging folder (a failure up to here leaves the site as it
   was: the staging folder is removed);
2. the journal ``.prkb-commit.json`` is written into the site (atomically): the staging
   folder's name and the files to move, the manifest last;
3. each file is renamed over the site's (``os.replace``: a reader sees the old page or the
   new one, never a part), the search index folder swapped whole when it was made again;
4. the journal is removed, then the staging folder.

A build that finds a journal (the previous one was killed in step 3) first finishes those
moves (:func:`finish`): each step can be done twice. The manifest moves last, so until then
it describes the previous site, and after it, this one; while the moves run, a reader of the
site may see some pages new and some not yet (for the milliseconds they take).

Builds of one site folder take its :class:`Lock` (an ``flock`` of the folder): a patched
build holds it from just after reading the manifest to the end of its commit (and checks, once
it holds it, that the manifest is still the one it read); a full build holds it for its swap
(and for finishing a journal). A patched build that cannot take it at once builds a new tree
and swaps it in, as a full build does.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..errors import PrkbError
from .state import MANIFEST, State, save

JOURNAL = ".prkb-commit.json"
OLD_INDEX = ".old-index"  # the site's previous search index, in the staging folder

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux or macOS: no patched builds in place
    fcntl = None  # type: ignore[assignment]


class Lock:
    """The lock of builds of one site folder: an ``flock`` on the folder itself (a build that
    swaps a new tree in locks the folder it renames away; so a build that took the lock
    checks that the site is still the one whose manifest it read)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def take(self, *, wait: bool) -> bool:
        """Take the lock (``wait``: until it is free); False when it is held elsewhere, or
        cannot be taken here (no ``flock``, no such folder)."""
        if self._fd is not None:
            return True
        if fcntl is None:
            return False
        try:
            fd = os.open(self.out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor lets the flock go


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the lock of ``out`` (waiting for it) when it can be taken at all."""
    lk = Lock(out)
    lk.take(wait=True)
    try:
        yield
    finally:
        lk.release()


def staged_files(staging: Path, index: str) -> list[str]:
    """The files of the staging folder to move into the site (paths relative to it), the
    manifest last; the search index folder ``index`` is not among them (it moves whole)."""
    files: list[str] = []
    for folder, dirs, names in os.walk(staging):
        rel = os.path.relpath(folder, staging)
        if rel == ".":
            dirs[:] = [d for d in dirs if d != index and not d.startswith(".")]
        files.extend(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
                     for name in names)
    files.sort(key=lambda f: (f == MANIFEST, f))
    return files


def journal_of(staging: Path, index: str, *, drop_index: bool,
               remove: list[str]) -> dict[str, Any]:
    """The journal of a commit of the staging folder's files into the site (see the module).

    ``index``: the search index folder (moved whole when the staging folder has one);
    ``drop_index``: the site's index is removed (this build has none); ``remove``: files the
    site no longer has."""
    return {
        "staging": staging.name,
        "files": staged_files(staging, index),
        "index": index if (staging / index).is_dir() else "",
        "drop_index": index if drop_index and not (staging / index).is_dir() else "",
        "remove": sorted(remove),
    }


def write_journal(out: Path, staging: Path, journal: dict[str, Any]) -> None:
    """Write the journal into the site, atomically (from here on the commit is the site's):
    written whole in the staging folder, then renamed into the site, so that a build killed
    while it writes leaves no part of it in the site (a temporary file there would stay: the
    site's files are only ever what builds move in). Temporary journals that an earlier
    prkb, killed so, left in the site are removed first (the caller holds the site's lock:
    no other build writes one)."""
    for stray in out.glob(f".{JOURNAL}.*.tmp"):
        _forget(stray)
    write_atomic(staging / JOURNAL, json.dumps(journal, ensure_ascii=False))
    os.replace(staging / JOURNAL, out / JOURNAL)


def finish(out: Path) -> Path | None:
    """Finish the commit a killed build left in ``out`` (its journal); returns the folder
    left to delete, or None (no journal). A journal that cannot be read, or that names a path
    outside the site, is damage: the manifest is replaced by one of no pages (so that this
    build makes every page again) and the journal removed."""
    path = out / JOURNAL
    if not path.is_file():
        return None
    try:
        journal = json.loads(path.read_text(encoding="utf-8"))
        ok = (isinstance(journal, dict) and isinstance(journal.get("staging"), str)
              and "/" not in journal["staging"] and journal["staging"] not in ("", ".", "..")
              and all(isinstance(journal.get(k), list) for k in ("files", "remove"))
              and all(isinstance(journal.get(k), str) for k in ("index", "drop_index"))
              and all(_inside(f) for k in ("files", "remove") for f in journal[k])
              and all(_inside(journal[k]) for k in ("index", "drop_index") if journal[k]))
    except (OSError, ValueError):
        ok = False
    if not ok:
        try:  # a manifest of no pages: nothing is kept from this site, nothing refused
            save(out, State())
        except OSError:
            _forget(out / MANIFEST)
        _forget(path)
        return None
    return apply(out, journal)


def _inside(rel: object) -> bool:
    """A path the journal may name: relative, inside the folder, no ``..``."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def apply(out: Path, journal: dict[str, Any]) -> Path | None:
    """Each step of a commit, in order; a step already done is skipped (done twice: the
    same). Returns the staging folder, left to delete (it may hold the previous index)."""
    staging = out.parent / str(journal["staging"])
    files = [str(f) for f in journal["files"]]
    try:
        for rel in files[:-1]:
            _move(staging, out, rel)
        for rel in journal["remove"]:
            _gone(out / str(rel))
        index, drop = str(journal["index"]), str(journal["drop_index"])
        if index and (staging / index).is_dir():
            if (out / index).exists() and not (staging / OLD_INDEX).exists():
                (out / index).rename(staging / OLD_INDEX)
            _gone(out / index)
            (staging / index).rename(out / index)
        if drop:
            _gone(out / drop)
        if files:
            _move(staging, out, files[-1])  # the manifest: from here on, the new site
        (out / JOURNAL).unlink(missing_ok=True)
    except OSError as e:
        raise PrkbError(
            f"cannot finish writing the site into {out}: {e.strerror or e}; the next "
            f"'prkb site build' finishes it") from None
    return staging if staging.exists() else None


def _move(staging: Path, out: Path, rel: str) -> None:
    src = staging / rel
    if not src.exists():
        return  # moved by the commit this one finishes
    dst = out / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)


def _gone(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _forget(path: Path) -> None:
    with suppress(OSError):
        path.unlink(missing_ok=True)
