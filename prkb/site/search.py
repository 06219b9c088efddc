"""Search: the Pagefind index of the site (extended build, so Chinese words are segmented).

Pagefind splits the index by each page's ``<html lang>``, so the Chinese search page finds
Chinese pages and the English one English pages. Only elements marked
``data-pagefind-body`` (PR, builder and weekly digest pages) are indexed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..errors import PrkbError

GLOB = "*/{pr,builder,digest}/*.html"


def index_site(site: Path, pages: list[str]) -> int:
    """Index the site in place (writes ``pagefind/``); returns the number of pages indexed."""
    if not pages:
        return 0
    cmd = [sys.executable, "-m", "pagefind", "--site", str(site), "--glob", GLOB, "--silent"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except FileNotFoundError as e:
        raise PrkbError(f"cannot run Pagefind: {e}") from None
    except subprocess.TimeoutExpired:
        raise PrkbError("Pagefind did not finish indexing within 30 minutes") from None
    if proc.returncode != 0 or not (site / "pagefind" / "pagefind.js").exists():
        last = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise PrkbError(
            f"Pagefind failed to index the site (install it with: pip install "
            f"'pagefind[extended]'): {last[0][:300]}"
        )
    return len(pages)
