"""A weekly digest's HTML (its escaped fragment) made fit for the offline site."""

from __future__ import annotations

import re

_IMG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ALT = re.compile(r"""\salt="([^"]*)\"""")
_REL_HREF = re.compile(r"""<a\s+href="(?![A-Za-z][A-Za-z0-9+.-]*:|#)[^"]*"([^>]*)>""")


def site_safe(html: str) -> str:
    """Escaped or sanitized HTML made fit for an offline site: no remote images, no relative
    links.

    Images become their alt text (the site loads nothing from elsewhere); links without a
    scheme (relative to a page on GitHub) lose their href, so they cannot point into the site.
    """

    def img(m: re.Match[str]) -> str:
        alt = _ALT.search(m.group(0))
        return f"<span class=\"img-alt\">[{alt.group(1) if alt else 'image'}]</span>"

    html = _IMG.sub(img, html)
    return _REL_HREF.sub(r"<a\1>", html)
