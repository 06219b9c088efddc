"""The Atom feed of PRs (feedgen) and the sitemap of the site."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape
from typing import Any

from ..dates import parse_time
from ..profile import Profile
from ..render.i18n import N_, gettext
from ..render.markdown import one_line

# The generic feed titles (catalog messages), said when the profile's [wording] has no
# ``feed`` / ``digest_feed``: they name the tracked symbol, no domain.
_FEED_TITLE = N_("prkb: pull requests that changed %(symbol)s")
_DIGEST_FEED_TITLE = N_("prkb: weekly digests of %(symbol)s changes")


def feed_title(profile: Profile, lang: str, *, digests: bool = False) -> str:
    """The title of the site's Atom feed of PRs (``digests``: of weekly digests) in ``lang``:
    the profile's ``[wording]`` text, else the generic catalog message."""
    own = profile.word("digest_feed" if digests else "feed", lang)
    if own:
        return own
    return gettext(lang, _DIGEST_FEED_TITLE if digests else _FEED_TITLE) % {
        "symbol": profile.display}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _when(text: str | None) -> datetime:
    """A feed time: the stored time (a time without a zone is UTC), the epoch when unknown."""
    return parse_time(text) or _EPOCH


def site_url(base_url: str | None, path: str, relative_to: str = "") -> str:
    """An absolute URL under ``--base-url``; without one, ``path`` relative to the file
    ``relative_to`` (a site path: the feed that links it), so that it resolves from there."""
    if not base_url:
        start = posixpath.dirname(relative_to)
        if not start and not path.startswith(("/", "../")) and posixpath.normpath(path) == path:
            return path  # what relpath gives from the root, without its two abspath calls
        return posixpath.relpath(path, start or ".")
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def atom_feed(
    items: Iterable[dict[str, Any]], *, lang: str, base_url: str | None, feed_path: str,
    title: str | None = None,
) -> bytes:
    """An Atom feed of PR summaries (newest first). Titles are plain text, never HTML."""
    from feedgen.feed import FeedGenerator  # here: a build that writes no feed never loads it

    items = list(items)
    fg = FeedGenerator()
    fg.id(site_url(base_url or "urn:prkb:", feed_path))
    fg.title(title or "prkb")
    fg.language("zh-CN" if lang == "zh" else lang)
    fg.link(href=site_url(base_url, f"{lang}/index.html", feed_path), rel="alternate")
    fg.link(href=site_url(base_url, feed_path, feed_path), rel="self")
    fg.updated(max((_when(i["date"]) for i in items), default=_when(None)))
    for item in reversed(items):  # feedgen prepends: add oldest first to list newest first
        fe = fg.add_entry()
        url = site_url(base_url, f"{lang}/pr/{item['slug']}.html", feed_path)
        fe.id(url if base_url else f"urn:prkb:{lang}:pr:{item['slug']}")
        fe.title(one_line(f"{item['label']} {item['title']}", 300))
        fe.link(href=url)
        fe.updated(_when(item["date"]))
        if item.get("author"):
            fe.author(name=one_line(item["author"], 100))
        parts = [f"{c['class']}: {c['before'] or '-'} -> {c['after'] or '-'}"
                 for c in item["changes"]]
        if item["tags"]:
            parts.append("tags: " + ", ".join(item["tags"]))
        fe.summary(one_line("; ".join(parts), 1000) or item["state"])
    data: bytes = fg.atom_str(pretty=True)
    return data


_PLAIN_URL = re.compile(r"^[A-Za-z0-9_./:~%+-]*$")


def sitemap(paths: Iterable[str], base_url: str | None) -> bytes:
    """A sitemap of the HTML pages (absolute URLs need ``--base-url``; relative otherwise)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for p in paths:
        url = site_url(base_url, p)
        if not _PLAIN_URL.match(url):  # the page paths the site makes need no escaping
            url = escape(url, quote=False)  # &, < and >, as XML text needs
        lines.append(f"  <url><loc>{url}</loc></url>")
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def digest_feed(
    entries: Iterable[dict[str, Any]], *, lang: str, base_url: str | None, feed_path: str,
    title: str,
) -> bytes:
    """An Atom feed of weekly digests (newest first): each entry holds the week's digest
    as sanitized HTML content and links to its page in the site."""
    from feedgen.feed import FeedGenerator

    entries = list(entries)
    fg = FeedGenerator()
    fg.id(site_url(base_url or "urn:prkb:", feed_path))
    fg.title(title)
    fg.language("zh-CN" if lang == "zh" else lang)
    fg.link(href=site_url(base_url, f"{lang}/digest/index.html", feed_path), rel="alternate")
    fg.link(href=site_url(base_url, feed_path, feed_path), rel="self")
    fg.updated(max((_when(e["last"] + "T23:59:59Z") for e in entries), default=_when(None)))
    for e in reversed(entries):  # feedgen prepends
        fe = fg.add_entry()
        url = site_url(base_url, f"{lang}/digest/{e['key']}.html", feed_path)
        fe.id(url if base_url else f"urn:prkb:{lang}:digest:{e['key']}")
        fe.title(one_line(e["title"], 300))
        fe.link(href=url)
        fe.updated(_when(e["last"] + "T23:59:59Z"))
        fe.content(e["html"], type="html")
    data: bytes = fg.atom_str(pretty=True)
    return data
