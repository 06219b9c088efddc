"""Internal links of the site: extract them from written pages and check that each exists."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
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
    out: set[str] = set()
    base = posixpath.dirname(page_path)
    for m in _ATTR.finditer(html):
        raw = unescape(m.group(1) if m.group(1) is not None else m.group(2) or "").strip()
        if not raw or raw.startswith("#"):
            continue
        if _SCHEME.match(raw):
            scheme = raw.split(":", 1)[0].lower()
            if scheme in ("http", "https", "mailto"):
                continue
            out.add(raw)
            continue
        if raw.startswith("//"):
            continue
        target = re.split(r"[?#]", raw, maxsplit=1)[0]
        if not target:
            continue
        if target.startswith("/"):
            resolved = posixpath.normpath(target.lstrip("/"))
        else:
            resolved = posixpath.normpath(posixpath.join(base, target))
        if target.endswith("/"):
            resolved = posixpath.join(resolved, "index.html")
        out.add(resolved)
    return sorted(out)


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
