"""Rendered fragments kept between builds, by the hash of everything they are made from.

A digest feed holds the newest weeks' digests (``digest_pages.FEED_WEEKS``), each rendered in
full; a one-PR rebuild whose PR is in one of those weeks makes the feed again, and rendering
the twenty weeks of each language took most of its time (0.5-0.7 s a feed at 10,000 PRs).
A week's fragment is a function of the build's salt (code, templates, catalogs, profile,
languages, base URL: ``site.build._salt``), its language and the week's hash
(``digest_pages.week_hashes``: everything its digest shows), the same inputs a page's hash
covers. So it is kept in a file named by the hash of those three, in prkb's cache folder
(:func:`prkb.paths.cache_dir`), and a later build of the same inputs reads it instead of
rendering it: the incremental site still equals a fresh one.

A full build renders every fragment (and keeps it); only a build planned from a partial read
(``site.partial``) reads kept ones. Without a writable cache folder nothing is kept and every
fragment is rendered. Any process may read and write (a forked renderer too): each file is
written whole under a temporary name and renamed. The folder is trimmed to the newest files
when it grows past :data:`LIMIT`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..atomic import write_atomic
from ..errors import PrkbError
from ..paths import cache_dir

LIMIT = 2000  # files kept; about 50-100 KB each at 10,000 PRs


class FragmentCache:
    """Fragments of one build's salt. ``read``: whether kept fragments are used (False: this
    build renders every fragment and keeps it)."""

    def __init__(self, salt: str, *, read: bool, folder: Path | None = None) -> None:
        if folder is None:  # prkb's cache folder, when there is one
            base = cache_dir()
            folder = None if base is None else base / "site-fragments"
        self.folder = folder
        self.salt = salt
        self.read = read

    def key(self, *parts: str) -> str:
        """The name of the fragment made from this salt and ``parts``."""
        return hashlib.sha256("|".join([self.salt, *parts]).encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        """The kept fragment ``key`` (None: not kept, unreadable, or this build reads none)."""
        if not self.read or self.folder is None:
            return None
        try:
            return (self.folder / f"{key}.html").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def put(self, key: str, text: str) -> None:
        """Keep a fragment; nothing happens when the folder cannot be written."""
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / f"{key}.html", text.encode("utf-8"))
            if len(os.listdir(self.folder)) > LIMIT:
                self._trim()
        except (OSError, ValueError, PrkbError):  # write_atomic says InputError (disk full...)
            return

    def _trim(self) -> None:
        """Delete the older half of the kept files (by modification time)."""
        assert self.folder is not None
        files = []
        for entry in os.scandir(self.folder):
            try:
                files.append((entry.stat().st_mtime_ns, entry.path))
            except OSError:
                continue
        files.sort()
        for _, path in files[: len(files) - LIMIT // 2]:
            try:
                os.unlink(path)
            except OSError:
                continue
