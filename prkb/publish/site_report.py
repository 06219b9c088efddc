"""The report on each PR page, rendered as HTML straight from ``report_context``.

``prkb report`` writes Markdown (``templates/report/report.j2``); turning that Markdown into
HTML with markdown-it cost most of a PR page. The site instead renders the same facts with
``templates/site/report.html`` (autoescape on): every sentence is the same catalog message,
and untrusted text goes through filters that escape it (``t``, ``q``: text, keeping inline
code spans; ``c``: code; ``block``: a code block; ``link``: http(s) links only).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..profile import Profile
from ..render.markdown import clean_text, one_line
from ..render.report import report_context
from ..store import Store
from .site_render import escaping_env

TEMPLATE = "site/report.html"
_CODE_SPAN = re.compile(r"(`+)([^`].*?)\1(?!`)")
_HTTP = re.compile(r"^https?://[^\s<>()\[\]`\"']+$")


def html_text(text: str | None) -> Markup:
    """Untrusted text on one line, escaped."""
    return escape(one_line(text))


def html_code(text: str | None) -> Markup:
    """Untrusted text as inline code (nothing when empty)."""
    s = one_line(text)
    return Markup("<code>%s</code>") % s if s else Markup("")


def html_inline(text: str | None) -> Markup:
    """Untrusted text on one line, its own inline code spans kept as ``<code>``."""
    s = one_line(text)
    out: list[Markup] = []
    pos = 0
    for m in _CODE_SPAN.finditer(s):
        out.append(escape(s[pos:m.start()]))
        out.append(html_code(m.group(2).strip()))
        pos = m.end()
    out.append(escape(s[pos:]))
    return Markup("").join(out)


def html_block(text: str | None, info: str = "") -> Markup:
    """Untrusted text as a code block."""
    body = clean_text(text).rstrip("\n")
    cls = Markup(' class="language-%s"') % info if info else Markup("")
    return Markup("<pre><code%s>%s\n</code></pre>") % (cls, body)


def html_link(url: str | None) -> Markup:
    """A link only for http(s) URLs; anything else is shown as inert code."""
    u = one_line(url)
    if _HTTP.match(u):
        return Markup('<a href="%s">%s</a>') % (u, u)
    return html_code(u)


@lru_cache(maxsize=4)
def _env(lang: str) -> jinja2.Environment:
    env = escaping_env(lang, TEMPLATE)
    env.filters.update(t=html_text, q=html_inline, c=html_code, block=html_block,
                       link=html_link)
    env.globals["_"] = env.globals["gettext"]
    env.globals["L"] = env.get_template("report/_labels.j2").make_module()
    return env


def report_html(store: Store, pr: dict[str, Any], lang: str, profile: Profile) -> str:
    """The PR's report (the facts and sentences of ``prkb report``) as safe HTML."""
    ctx = report_context(store, pr["ref"], lang, profile=profile)
    return _env(lang).get_template(TEMPLATE).render(**ctx)
