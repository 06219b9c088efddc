"""Hard-link the previous build's pages into the new build's folder, in another process.

    python -m prkb.site.prelink OLD_SITE NEW_TREE

Linking tens of thousands of files is kernel time the build would otherwise wait for; run as
a child process it overlaps with gathering and planning, on the other core. Every page the
previous manifest lists is linked (not the search index: a changed searchable page, the
common case, means a new index); the build later unlinks the pages it renders again before
writing them, so the previous site's files are never written to. Prints the pages it could
not link, one a line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

MANIFEST = ".prkb-manifest.json"  # site_state.MANIFEST (not imported: this process starts lean)


def prelink(old: Path, new: Path) -> list[str]:
    """Link every page of ``old``'s manifest into ``new``; returns the pages that failed."""
    try:
        manifest = json.loads((old / MANIFEST).read_text(encoding="utf-8"))
        pages = [p for p in manifest["pages"] if isinstance(p, str)]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return link_pages(old, new, pages)


def link_pages(old: Path, new: Path, paths: list[str]) -> list[str]:
    """Hard-link each page at ``paths`` (relative) from ``old`` into ``new``, making folders as
    needed; returns the paths that could not be linked (gone, another file system...)."""
    if not paths:
        return []
    failed: list[str] = []
    made: set[str] = set()
    by_fd = os.link in os.supports_dir_fd  # paths relative to open folders: fewer lookups
    src_fd = os.open(old, os.O_RDONLY) if by_fd else -1
    dst_fd = os.open(new, os.O_RDONLY) if by_fd else -1
    try:
        for path in paths:
            if path.startswith(("/", "..")) or "/../" in path:
                failed.append(path)
                continue
            folder = path.rpartition("/")[0]
            if folder and folder not in made:
                (new / folder).mkdir(parents=True, exist_ok=True)
                made.add(folder)
            try:
                if by_fd:
                    os.link(path, path, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
                else:
                    os.link(old / path, new / path)
            except OSError:
                failed.append(path)
    finally:
        if by_fd:
            os.close(src_fd)
            os.close(dst_fd)
    return failed


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m prkb.site.prelink OLD_SITE NEW_TREE", file=sys.stderr)
        return 2
    for path in prelink(Path(argv[0]), Path(argv[1])):
        sys.stdout.write(path + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
