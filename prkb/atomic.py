"""Write a file atomically: into a temporary file beside it, then renamed over it.

The temporary file is created with mode 0o666 less the process umask (as ``open`` would), so
the result has the permissions the user expects, and a failure (a missing or read-only folder,
a full disk) is one :class:`~prkb.errors.InputError` naming the file, never a traceback; the
previous file, if any, is left as it was.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .errors import InputError


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8 with ``\\n`` line ends)."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"cannot write {path}: folder {folder} does not exist")
    tmp = folder / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    blob = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
