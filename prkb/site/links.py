"""Internal links of the site: extract them from written pages and check that each exists."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from html import unescape

from ..errors import PrkbError

# the href/src attribute of an element whose href or src a browser follows or loads (an href on
# a <div> is no link), either quote style; text cannot hold "<" (it is escaped). Read from a
# page's UTF-8 bytes, and case-sensitive: the site writes its markup in lower case (templates,
# prkb's own markup, markdown-it and nh3 all do; tests/test_site_links.py holds every template
# and markup string of prkb to it, tests/test_site_build.py every page of a built site).
# Ignoring case, or trying an href on every tag, made the scan twice as slow: it was 15% of a
# PR page's instructions.
_LINKING = ("a", "area", "base", "link", "img", "script", "iframe", "embed", "source", "track",
            "audio", "video", "input", "frame", "use", "image")


def _prefix_tree(words: Iterable[str]) -> str:
    """An alternation matching exactly ``words`` (plain lower-case names), grouped by their
    first letters: ``a(?:rea|udio)?|...``. After each "<" the engine tries a branch only for
    the tags that begin with its letter, not all sixteen: the scan is about a fifth faster
    than with the flat list."""
    by_first: dict[str, list[str]] = {}
    for w in sorted(set(words)):
        by_first.setdefault(w[0], []).append(w[1:])
    parts = []
    for first, rests in by_first.items():
        longer = [r for r in rests if r]
        if not longer:
            parts.append(first)
        elif len(rests) == 1:  # one name: the rest of it as it is
            parts.append(first + longer[0])
        else:
            parts.append(f"{first}(?:{_prefix_tree(longer)}){'?' if '' in rests else ''}")
    return "|".join(parts)


_ATTR = re.compile(
    rb"<(?:" + _prefix_tree(_LINKING).encode() + rb""")(?=\s)[^<>]*?\s(?:href|src)\s*=\s*"""
    rb"""(?:"([^"]*)"|'([^']*)')"""
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class BrokenLinks(PrkbError):
    """The build made a page with a link to a site path that does not exist."""


class LinkFinder:
    """Finds the internal links of the pages of one build.

    What each attribute value resolves to is kept per folder (a page's navigation links and
    links to the same pages repeat on every page of a folder); bounded, and owned by the
    build that made it.
    """

    LIMIT = 16384  # resolved values per folder before they are dropped

    def __init__(self) -> None:
        self._resolved: dict[str, dict[bytes, str | None]] = {}

    def links(self, page_path: str, html: str | bytes) -> list[str]:
        """Site paths (relative to the root, no query or fragment) that a page (its text, or
        its UTF-8 bytes) links to.

        External URLs and pure fragments are skipped; ``javascript:`` and other non-web
        schemes are returned as they are, so the check fails on them.
        """
        if isinstance(html, str):
            html = html.encode("utf-8")
        base = posixpath.dirname(page_path)
        known = self._resolved.get(base)
        if known is None or len(known) >= self.LIMIT:
            known = self._resolved[base] = {}
        found: set[str] = set()
        for dq, sq in _ATTR.findall(html):
            attr = dq or sq  # one group is ""
            try:
                target = known[attr]
            except KeyError:
                target = known[attr] = _target(base, attr.decode("utf-8", "replace"))
            if target is not None:
                found.add(target)
        return sorted(found)


def internal_links(page_path: str, html: str | bytes) -> list[str]:
    """:meth:`LinkFinder.links` of one page."""
    return LinkFinder().links(page_path, html)


def _target(base: str, attr: str) -> str | None:
    """The site path an attribute value (as written in the page) points to from folder
    ``base``, or None for an external URL or a fragment."""
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
    check = LinkCheck(existing)
    for page, targets in links.items():
        check.page(page, targets)
    check.done()


class LinkCheck:
    """:func:`check_links` a page at a time (as pages are rendered): :meth:`done` raises."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing
        self.broken: list[str] = []

    def page(self, page: str, targets: Iterable[str]) -> None:
        existing = self.existing
        for t in targets:
            # the regular expression only for a target that could have a scheme
            if t not in existing or t.startswith("..") or (":" in t and _SCHEME.match(t)):
                self.broken.append(f"{page} -> {t}")

    def done(self) -> None:
        """Raise :class:`BrokenLinks` naming the first broken links found, if any."""
        broken = self.broken
        if broken:
            more = f" (and {len(broken) - 5} more)" if len(broken) > 5 else ""
            raise BrokenLinks(
                f"broken internal link{'s' if len(broken) > 1 else ''}: "
                + "; ".join(broken[:5]) + more
            )
