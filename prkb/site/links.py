"""Internal links of the site: extract them from written pages and check that each exists."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from html import unescape

from ..errors import PrkbError

# href/src attributes inside tags (text cannot hold "<": it is escaped), either quote style
_ATTR = re.compile(
    r"""<[A-Za-z][^<>]*?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class BrokenLinks(PrkbError):
    """The build made a page with a link to a site path that does not exist."""


def internal_links(page_path: str, html: str) -> list[str]:
    """Site paths (relative to the root, no query or fragment) that a page links to.

    External URLs and pure fragments are skipped; ``javascript:`` and other non-web schemes
    are returned as they are, so the check fails on them.
    """
    base = posixpath.dirname(page_path)
    found = {_target(base, dq or sq) for dq, sq in _ATTR.findall(html)}  # one group is ""
    return sorted(t for t in found if t is not None)


@lru_cache(maxsize=16384)
def _target(base: str, attr: str) -> str | None:
    """The site path an attribute value (as written in the page) points to from folder
    ``base``, or None for an external URL or a fragment. Cached: a page's navigation links
    and links to the same pages repeat on every page of a folder."""
    raw = (unescape(attr) if "&" in attr else attr).strip()
    if not raw or raw[0] == "#":
        return None
    if ":" in raw and _SCHEME.match(raw):
        scheme = raw.split(":", 1)[0].lower()
        return None if scheme in ("http", "https", "mailto") else raw
    if raw.startswith("//"):
        return None
    target = re.split(r"[?#]", raw, maxsplit=1)[0] if ("?" in raw or "#" in raw) else raw
    if not target:
        return None
    if target.startswith("/"):
        resolved = posixpath.normpath(target.lstrip("/"))
    else:
        resolved = posixpath.normpath(posixpath.join(base, target))
    if target.endswith("/"):
        resolved = posixpath.join(resolved, "index.html")
    return resolved


def check_links(links: Mapping[str, Iterable[str]], existing: set[str]) -> None:
    """Raise :class:`BrokenLinks` naming the first broken links (page -> target)."""
    broken: list[str] = []
    for page, targets in links.items():
        for t in targets:
            # the regular expression only for a target that could have a scheme
            if t not in existing or t.startswith("..") or (":" in t and _SCHEME.match(t)):
                broken.append(f"{page} -> {t}")
    if broken:
        more = f" (and {len(broken) - 5} more)" if len(broken) > 5 else ""
        raise BrokenLinks(
            f"broken internal link{'s' if len(broken) > 1 else ''}: "
            + "; ".join(broken[:5]) + more
        )
