"""The output folder of a site build: a new tree written beside it, then swapped in.

:class:`OutputTree` owns everything a build does to the file system besides writing rendered
pages: the temporary folder next to the output (``.NAME.building-PID``), the previous build's
manifest and links file, the reuse of unchanged pages (hard links, made by a child process,
:mod:`prkb.site.prelink`, while the build gathers and plans), the static assets, the search
index kept from the previous build, and the final swap. A failed build leaves the previous
site as it was. The previous tree is renamed aside by the swap and deleted by a detached
process (:class:`Trash`) the build does not wait for.

A build planned from a partial read (a few PRs edited) instead writes only its new files into
that folder and moves them into the site (:meth:`OutputTree.in_place`,
:mod:`prkb.site.commit`: a journal first, so that a killed commit is finished by the next
build).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import PrkbError
from ..paths import project_root, templates_dir
from . import commit as site_commit
from . import state as site_state
from .prelink import link_pages
from .state import PLACEHOLDERS, State

ASSETS = "assets"  # the folder of the static assets in the site
_RMTREE = "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)"


def write_new(path: str | Path, body: bytes) -> None:
    """Write a new file; never into an existing one (it may be a hard link to a page of the
    previous site, which must stay as it was until the swap)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileExistsError:
        os.unlink(path)
        fd = os.open(path, flags, 0o666)
    try:  # one write call (no file object): a page is written whole
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def start_prelink(out: Path, tmp: Path) -> subprocess.Popen[bytes] | None:
    """Start the child that hard-links the pages of the site in ``out`` into ``tmp``
    (:mod:`prkb.site.prelink`); None when it cannot start."""
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "prkb.site.prelink", str(out), str(tmp)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=str(project_root()),
        )
    except OSError:
        return None


class Trash:
    """Old trees of an output folder, deleted by detached processes nobody waits for.

    ``removing`` holds the processes started through this object; a caller that builds
    several times may pass the same object to each build, which then first waits for the
    removals of the builds before it.
    """

    def __init__(self) -> None:
        self.removing: list[subprocess.Popen[bytes]] = []

    def remove_later(self, path: Path) -> None:
        """Delete ``path`` in a detached process (it outlives this one if need be)."""
        try:
            self.removing.append(subprocess.Popen(
                [sys.executable, "-c", _RMTREE, str(path)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            ))
        except OSError:
            shutil.rmtree(path, ignore_errors=True)

    def clear(self, out: Path) -> None:
        """Before a build: wait for this object's removals; start removing the old trees of
        ``out`` that others left (a killed run, another process), and the new trees of
        builds that died before they swapped or committed them (:func:`_orphans`)."""
        while self.removing:
            self.removing.pop().wait()
        if not out.parent.is_dir():
            return
        for p in out.parent.glob(f".{out.name}.trash-*"):
            if p.is_dir():
                self.remove_later(p)
        for p in _orphans(out):
            trash = p.with_name(f".{out.name}.trash-orphan-{time.monotonic_ns()}")
            try:
                p.rename(trash)  # gone from its name at once; removed in the background
            except OSError:
                continue
            self.remove_later(trash)


def _orphans(out: Path) -> list[Path]:
    """The new trees (``.NAME.building-PID``) beside ``out`` of builds whose process is gone:
    a build killed before its swap or its commit left its tree there, as big as the site.
    None while a journal is in the site (the staging folder it names is the commit's: the
    next build finishes it), none whose process still runs (another build on this machine:
    builds of one folder from machines or containers that do not see each other's processes
    are not told apart), none where a process cannot be asked (not POSIX)."""
    if os.name != "posix" or (out / site_commit.JOURNAL).exists():
        return []
    prefix = f".{out.name}.building-"
    found = []
    for p in out.parent.glob(f"{prefix}*"):
        pid = p.name[len(prefix):]
        if pid.isdigit() and p.is_dir() and not _alive(int(pid)):
            found.append(p)
    return found


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie, or one of another user, counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, another user's
        return True
    return True


class OutputTree:
    """The output folder ``out`` of one build and the new tree written beside it."""

    def __init__(self, out: Path, trash: Trash | None = None) -> None:
        self.out = out
        self.tmp = out.parent / f".{out.name}.building-{os.getpid()}"
        self.trash = trash if trash is not None else Trash()
        self._linker: subprocess.Popen[bytes] | None = None
        self.lock = site_commit.Lock(out)
        # in place: this build's files are moved into ``out`` at the end (see in_place)
        self.inplace = False
        self._committing = False  # the journal is written: the staging folder is the site's
        self._drop_index = False
        self._listed: dict[str, set[str]] = {}
        self._read: tuple[int, int, int] | None = None  # the manifest read: what it was

    # --- the previous build ----------------------------------------------------------------

    def previous(self) -> State:
        """The manifest of the site in ``out`` (empty for none), once a commit a killed build
        left unfinished is finished; refuses a non-empty folder a build did not write."""
        if (self.out / site_commit.JOURNAL).is_file():
            with site_commit.locked(self.out):
                left = site_commit.finish(self.out)
            if left is not None:
                self._discard(left)
        self._read = self._manifest_stamp()
        return site_state.load(self.out)

    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = (self.out / site_state.MANIFEST).stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def previous_model(self, model_id: str) -> dict[str, Any] | None:
        """The model the previous build kept with its manifest (None: none or unreadable)."""
        return site_state.load_model(self.out, model_id)

    def save_model(self, model: dict[str, Any]) -> str:
        """Write the model of this build; returns its id."""
        return site_state.save_model(self.tmp, model)

    def previous_links(self) -> dict[str, list[str]]:
        """Every page's internal links as the previous build wrote them."""
        links = site_state.load_links(self.out)
        if links is None:
            raise PrkbError(f"cannot read {site_state.LINKS} of the previous site in "
                            f"{self.out}; remove the folder and build again")
        return links

    # --- the new tree ----------------------------------------------------------------------

    def open(self) -> None:
        """Make the new tree (empty). The build then either writes in place
        (:meth:`in_place`) or has the previous pages linked into it (:meth:`start_prelink`)."""
        self.trash.clear(self.out)
        try:
            if self.tmp.exists():
                shutil.rmtree(self.tmp)
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.tmp.mkdir()
        except OSError as e:
            raise self.write_error(e) from None

    def start_prelink(self) -> None:
        """Start linking the previous build's pages into the new tree (once)."""
        if self._linker is None and not self.inplace:
            self._linker = start_prelink(self.out, self.tmp)

    def in_place(self) -> bool:
        """Make this build write into ``out`` in place (its files staged in the new tree and
        moved in by :meth:`commit`) when it can take the site's lock at once; False: it
        cannot (another build holds it, no ``flock``), the build swaps a whole tree in."""
        if self._linker is not None or not self.out.is_dir():
            return False
        if not self.lock.take(wait=False):
            return False
        if self._read is None or self._manifest_stamp() != self._read:
            self.lock.release()  # another build wrote the site since its manifest was read
            return False
        self.inplace = True
        return True

    def make_folders(self, paths: list[str]) -> None:
        """Make the folders of the pages at ``paths`` in the new tree (to render them)."""
        for d in sorted({p.rpartition("/")[0] for p in paths} - {""}):
            (self.tmp / d).mkdir(parents=True, exist_ok=True)

    def place_pages(
        self, keep: list[str], rendered: list[str], gone: set[str], old: State
    ) -> tuple[list[bool], bool]:
        """Put the previous build's pages at ``keep`` into the new tree, once the pages at
        ``rendered`` are written into it; returns, for each kept page, whether it is there
        (False: gone from the previous site, to be rendered after all), and whether the
        rendered pages were lost (the tree emptied again: render them again).

        The prelinked tree (every page of ``old``, the previous manifest, linked by a child
        process while this one gathered, planned and rendered) is used unless the child
        failed; the ``gone`` pages are unlinked from it. A rendered page was written as a new
        file whether the child had linked the previous one there first (write_new unlinks it)
        or not yet (the child's link then fails), so the previous site's files are never
        written to. Without the child, the kept pages are hard-linked now (or copied where
        links fail).
        """
        if self.inplace:  # the kept pages are where they are: only check that they are
            return [self._in_site(path) for path in keep], False
        failed: set[str] | None = None
        lost = False
        if self._linker is not None:
            failed = self._finish_prelink()
            if failed is None:  # nothing the child did is trusted: an empty tree again
                shutil.rmtree(self.tmp)
                self.tmp.mkdir()
                lost = bool(rendered)
        if failed is not None:
            for path in gone & old.pages.keys():
                (self.tmp / path).unlink(missing_ok=True)
        self.make_folders(keep + rendered if lost else keep)
        if failed is not None:
            return [path not in failed for path in keep], lost
        not_linked = set(link_pages(self.out, self.tmp, keep))
        return [path not in not_linked or _copy(self.out / path, self.tmp / path)
                for path in keep], lost

    def reuse(self, name: str) -> bool:
        """Hard-link (or copy) the previous build's file ``name``; False when it is gone."""
        if self.inplace:
            return (self.out / name).is_file()
        return _reuse(self.out / name, self.tmp / name)

    def read(self, name: str) -> bytes:
        """A file of the new tree (a kept page: the previous build's bytes)."""
        return self.page_file(name).read_bytes()

    def page_file(self, name: str) -> Path:
        """Where the file ``name`` of the new site is now (in place, a kept page is the
        site's)."""
        staged = self.tmp / name
        if self.inplace and not staged.exists():
            return self.out / name
        return staged

    def write(self, name: str, body: bytes) -> None:
        """Write a new file of the tree."""
        write_new(self.tmp / name, body)

    def copy_assets(self) -> set[str]:
        """Copy the static assets (and vendored scripts) in; returns their paths."""
        if self.inplace and (self.out / ASSETS).is_dir():
            return _files(self.out, ASSETS)  # the same salt: the same assets, there already
        dst = self.tmp / ASSETS
        shutil.copytree(templates_dir() / "site" / "static", dst)
        vendor = templates_dir() / "site" / "vendor"
        if vendor.is_dir():
            shutil.copytree(vendor, dst / "vendor")
        return _files(self.tmp, ASSETS)

    def reuse_links(self) -> bool:
        """Hard-link (or copy) the previous links file unchanged; False when it cannot."""
        if self.inplace:
            return (self.out / site_state.LINKS).is_file()
        return site_state.reuse_links(self.out, self.tmp)

    def save_links(self, links: dict[str, list[str]]) -> None:
        site_state.save_links(self.tmp, links)

    def save_link_entries(self, entries: list[str]) -> None:
        site_state.save_link_entries(self.tmp, entries)

    def reuse_index(self, folder: str) -> bool:
        """Link the previous build's search index (``folder``) in; False when there is none."""
        if self.inplace:
            return (self.out / folder).is_dir()
        index = self.tmp / folder
        if not index.is_dir() and (self.out / folder).is_dir():
            shutil.copytree(self.out / folder, index, copy_function=os.link)
        return index.is_dir()

    def reuse_folder(self, folder: str, skip: frozenset[str] = frozenset()) -> bool:
        """Link the previous build's files of ``folder`` (its entries named in ``skip`` left
        out) into the new tree; False when the previous build has none."""
        src, dst = self.out / folder, self.tmp / folder
        if not src.is_dir():
            return False
        dst.mkdir(parents=True, exist_ok=True)
        made: list[Path] = []
        try:
            for entry in src.iterdir():
                if entry.name in skip:
                    continue
                made.append(dst / entry.name)
                if entry.is_dir():
                    shutil.copytree(entry, dst / entry.name, copy_function=os.link)
                else:
                    os.link(entry, dst / entry.name)
        except OSError:  # what was linked goes again: the folder is made afresh
            for path in made:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            return False
        return True

    def drop(self, folder: str) -> None:
        """Remove a folder of the new tree, if there is one (in place: the search index
        folder is removed from the site too, by the commit)."""
        shutil.rmtree(self.tmp / folder, ignore_errors=True)
        if self.inplace:
            self._drop_index = True

    def save_manifest(self, state: State) -> None:
        """Carry the output folder's placeholder files over, then write the manifest."""
        for name in PLACEHOLDERS if not self.inplace else ():
            src = self.out / name
            if src.is_file() and not (self.tmp / name).exists():
                shutil.copy2(src, self.tmp / name)
        site_state.save(self.tmp, state)

    def swap(self) -> None:
        """Rename the finished tree into place; the old site is removed only after.

        Removing the old tree (tens of thousands of files) is left to a detached process that
        the build does not wait for: the old tree is first renamed into a trash folder next to
        the output, so the new site is complete and in place when this returns.
        """
        out = self.out
        old = out.parent / f".{out.name}.trash-{os.getpid()}-{time.monotonic_ns()}"
        with site_commit.locked(out):  # not in the middle of another build's commit in place
            if out.exists():
                out.rename(old)
            try:
                self.tmp.rename(out)
            except OSError:
                if old.exists():
                    old.rename(out)
                raise
        if old.exists():
            self.trash.remove_later(old)

    def commit(self, remove: list[str], index: str) -> None:
        """In place: move this build's files into the site (:func:`prkb.site.commit.commit`),
        then let the site's lock go. ``remove``: pages the site no longer has; ``index``: the
        search index folder."""
        journal = site_commit.journal_of(self.tmp, index, drop_index=self._drop_index,
                                         remove=remove)
        site_commit.write_journal(self.out, self.tmp, journal)  # failing: nothing moved yet
        self._committing = True
        left = site_commit.apply(self.out, journal)
        self._committing = False
        self.lock.release()
        if left is not None:
            self._discard(left)

    def abandon(self) -> None:
        """After a failure: stop the prelink child, remove the new tree (kept when a commit
        in place had begun: the next build finishes it), let the site's lock go."""
        if self._linker is not None and self._linker.poll() is None:
            self._linker.kill()
            self._linker.wait()
        self._linker = None
        if not self._committing:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self._committing = False
        self.inplace = False
        self._drop_index = False
        self._listed.clear()
        self.lock.release()

    def _discard(self, staging: Path) -> None:
        """Delete a staging folder a commit left (the previous search index may be in it):
        renamed to a trash name first, since the next build of this process stages into a
        folder of the same name while the removal may still be running."""
        trash = self.out.parent / f".{self.out.name}.trash-{os.getpid()}-{time.monotonic_ns()}"
        try:
            staging.rename(trash)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return
        self.trash.remove_later(trash)

    def _in_site(self, path: str) -> bool:
        """Whether the site has the file ``path`` (its folder listed once)."""
        folder, _, name = path.rpartition("/")
        names = self._listed.get(folder)
        if names is None:
            try:
                names = set(os.listdir(self.out / folder if folder else self.out))
            except OSError:
                names = set()
            self._listed[folder] = names
        return name in names

    def write_error(self, e: OSError) -> PrkbError:
        """The error to raise for a failed write (disk full, read-only folder...)."""
        what = e.strerror or str(e)
        return PrkbError(
            f"cannot write the site to {self.out}: {what}; the previous site is unchanged"
        )

    def _finish_prelink(self) -> set[str] | None:
        """The pages the child could not link; None when it failed (nothing it did is
        trusted)."""
        assert self._linker is not None
        stdout, _ = self._linker.communicate()
        if self._linker.returncode != 0:
            return None
        return set(stdout.decode("utf-8", "surrogateescape").splitlines())


def _files(root: Path, folder: str) -> set[str]:
    """The files under ``root/folder``, as paths relative to ``root`` with "/"."""
    return {str(p.relative_to(root)).replace(os.sep, "/")
            for p in (root / folder).rglob("*") if p.is_file()}


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
