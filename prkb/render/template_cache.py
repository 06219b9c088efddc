"""What prkb keeps between runs in Jinja's per-user cache folder (compiled templates, and
compiled catalogs), and the clean-up that keeps that folder from growing for ever.

Every change of a template's source, of a catalog or of what an environment compiles in
(its language's messages, the profile's audit rule) makes new files there and leaves the old
ones. Files prkb wrote (:data:`PREFIXES`) that no run has used for :data:`UNUSED_DAYS` days
are deleted, at most once a day (:func:`prune`, which a marker file's time paces); a file a
run reads has its time set to now (:func:`touch`), so only what nothing reads any more goes.
A deleted file is only compiled again if a run needs it. Files of other programs sharing the
folder are left alone.
"""

from __future__ import annotations

import contextlib
import os
import time

import jinja2
from jinja2.bccache import Bucket

PREFIXES = ("__jinja2_prkb_", "__prkb_catalog_")  # the files prkb writes in the folder
MARKER = "__prkb_cache_pruned"  # its time: the last clean-up
UNUSED_DAYS = 30
EVERY = 86400.0  # seconds between two clean-ups of one folder


def touch(path: str | os.PathLike[str]) -> None:
    """Mark a kept file as used now (its modification time; ignored when it cannot be set)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def prune(directory: str | os.PathLike[str], now: float | None = None) -> int:
    """Delete prkb's files in ``directory`` unused for :data:`UNUSED_DAYS` days, unless the
    folder was cleaned less than :data:`EVERY` seconds ago; returns how many were deleted.
    Never raises: another process may be cleaning or reading the same folder."""
    now = time.time() if now is None else now
    marker = os.path.join(directory, MARKER)
    try:
        if now - os.stat(marker).st_mtime < EVERY:
            return 0
    except OSError:
        pass
    try:
        with open(marker, "a"):
            pass
        os.utime(marker, (now, now))
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    deleted = 0
    limit = now - UNUSED_DAYS * 86400
    for entry in entries:
        if not entry.name.startswith(PREFIXES):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
                deleted += 1
        except OSError:
            continue
    return deleted


class KeptBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's folder cache of compiled templates; a template read from it is marked as used
    (:func:`touch`), and the folder is cleaned once when the cache is made (:func:`prune`)."""

    def __init__(self, directory: str | None = None, pattern: str = "__jinja2_prkb_%s.cache"):
        super().__init__(directory, pattern)
        prune(self.directory)

    def load_bytecode(self, bucket: Bucket) -> None:
        super().load_bytecode(bucket)
        if bucket.code is not None:
            touch(self._get_cache_filename(bucket))
