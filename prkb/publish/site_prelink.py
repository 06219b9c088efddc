"""Hard-link the previous build's pages into the new build's folder, in another process.

    python -m prkb.publish.site_prelink OLD_SITE NEW_TREE

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
        pages = list(manifest["pages"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    failed: list[str] = []
    made: set[str] = set()
    src_fd = os.open(old, os.O_RDONLY)
    dst_fd = os.open(new, os.O_RDONLY)
    try:
        for path in pages:
            if not isinstance(path, str) or path.startswith(("/", "..")) or "/../" in path:
                continue
            folder = path.rpartition("/")[0]
            if folder and folder not in made:
                (new / folder).mkdir(parents=True, exist_ok=True)
                made.add(folder)
            try:
                os.link(path, path, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
            except OSError:
                failed.append(path)
    finally:
        os.close(src_fd)
        os.close(dst_fd)
    return failed


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m prkb.publish.site_prelink OLD_SITE NEW_TREE", file=sys.stderr)
        return 2
    for path in prelink(Path(argv[0]), Path(argv[1])):
        sys.stdout.write(path + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
