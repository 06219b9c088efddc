"""The report on each PR page, rendered as HTML straight from ``report_context``.

``prkb report`` writes Markdown (``templates/report/report.j2``); turning that Markdown into
HTML with markdown-it cost most of a PR page. The site instead renders the same facts with
``templates/site/report.html`` (autoescape on): every sentence is the same catalog message,
and untrusted text goes through filters that escape it (``t``, ``q``: text, keeping inline
code spans; ``c``: code; ``block``: a code block; ``link``: http(s) links only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..profile import Profile
from ..render.jinja_calls import plain_call
from ..render.markdown import clean_text, one_line, split_code_spans
from ..render.report import localize, report_facts
from ..store import Store
from .render import escaping_env

TEMPLATE = "site/report.html"
_HTTP = re.compile(r"^https?://[^\s<>()\[\]`\"']+$")


def html_text(text: str | None) -> Markup:
    """Untrusted text on one line, escaped."""
    return escape(one_line(text))


@lru_cache(maxsize=16384)
def _code(text: str) -> Markup:
    s = one_line(text)
    return Markup(f"<code>{escape(s)}</code>") if s else _EMPTY


def html_code(text: str | None) -> Markup:
    """Untrusted text as inline code (nothing when empty). Cached: class names, file paths
    and level values repeat on many pages."""
    if type(text) is str:
        return _code(text)
    s = one_line(text)
    return Markup(f"<code>{escape(s)}</code>") if s else _EMPTY


def html_inline(text: str | None) -> Markup:
    """Untrusted text on one line, its own inline code spans kept as ``<code>``."""
    s = one_line(text)
    if "`" not in s:
        return escape(s)
    return Markup("".join(html_code(p) if code else escape(p)
                          for p, code in split_code_spans(s)))


def html_block(text: str | None, info: str = "") -> Markup:
    """Untrusted text as a code block."""
    body = escape(clean_text(text).rstrip("\n"))
    cls = f' class="language-{escape(info)}"' if info else ""
    return Markup(f"<pre><code{cls}>{body}\n</code></pre>")


def html_link(url: str | None) -> Markup:
    """A link only for http(s) URLs; anything else is shown as inert code."""
    u = one_line(url)
    if _HTTP.match(u):
        e = escape(u)
        return Markup(f'<a href="{e}">{e}</a>')
    return html_code(u)


def html_codes(items: Iterable[str | None]) -> Markup:
    """Several values as inline code, separated by commas."""
    return Markup(", ".join([html_code(x) for x in items]))


_EMPTY = Markup("")
_DYNAMIC = ("dynamic-added", "dynamic-removed")


@lru_cache(maxsize=4)
def _env(lang: str) -> jinja2.Environment:
    env = escaping_env(lang, TEMPLATE)
    env.filters.update(t=html_text, q=html_inline, c=html_code, block=html_block,
                       link=html_link)
    gettext: Callable[..., Markup] = env.globals["gettext"]  # type: ignore[assignment]
    labels = env.get_template("report/_labels.j2").make_module()
    why_of: dict[str, Markup] = getattr(labels, "why")  # noqa: B009 (a template variable)
    direction: Callable[[str, str], str] = env.filters["label"]
    unknown = gettext("unknown")

    def who(login: str | None) -> Markup:
        return html_text(login) if login else unknown

    def change_line(ch: dict[str, Any]) -> Markup:
        """One declaration change as a sentence (the catalog message of its direction)."""
        d = ch["direction"]
        cls, attr, why = html_code(ch["class"]), html_code(ch["attr"]), why_of[ch["why"]]
        if d == "dynamic-added" and ch["after"] and ch["after"] != "overridden":
            return gettext("%(cls)s: %(attr)s %(dir)s, returning %(after)s (%(why)s)", cls=cls,
                           attr=attr, dir=direction(d, "directions"),
                           after=html_code(ch["after"]), why=why)
        if d == "dynamic-removed" and ch["before"] and ch["before"] != "overridden":
            return gettext("%(cls)s: %(attr)s %(dir)s, it returned %(before)s (%(why)s)",
                           cls=cls, attr=attr, dir=direction(d, "directions"),
                           before=html_code(ch["before"]), why=why)
        if d in _DYNAMIC:
            return gettext("%(cls)s: %(attr)s %(dir)s (%(why)s)", cls=cls, attr=attr,
                           dir=direction(d, "directions"), why=why)
        if d == "added":
            return gettext("%(cls)s: %(attr)s added as %(after)s (%(why)s)", cls=cls,
                           attr=attr, after=html_code(ch["after"]), why=why)
        if d == "removed":
            return gettext("%(cls)s: %(attr)s removed, it was %(before)s (%(why)s)", cls=cls,
                           attr=attr, before=html_code(ch["before"]), why=why)
        if d == "renamed" and not ch["before_attr"] and ch["before"] != ch["after"]:
            return gettext(
                "%(cls)s: %(attr)s keeps its level, whose old name %(before)s is now spelled "
                "%(after)s (%(why)s)", cls=cls, attr=attr, before=html_code(ch["before"] or ""),
                after=html_code(ch["after"] or ""), why=why)
        if d == "moved":
            return gettext(
                "%(cls)s: %(attr)s moved from %(old)s with its class, value %(after)s (%(why)s)",
                cls=cls, attr=attr, old=html_code(ch.get("before_file") or "-"),
                after=html_code(ch["after"] or ""), why=why)
        if d == "renamed":
            return gettext("%(cls)s: %(old)s renamed to %(attr)s, value %(after)s (%(why)s)",
                           cls=cls, old=html_code(ch["before_attr"] or ch["attr"]), attr=attr,
                           after=html_code(ch["after"] or ""), why=why)
        return gettext("%(cls)s: %(attr)s %(dir)s from %(before)s to %(after)s (%(why)s)",
                       cls=cls, attr=attr, dir=direction(d, "directions"),
                       before=html_code(ch["before"] or "-"),
                       after=html_code(ch["after"] or "-"), why=why)

    env.globals.update(L=labels, codes=plain_call(html_codes), who=plain_call(who),
                       change_line=plain_call(change_line))
    return env


# The language-independent facts of the last few PRs rendered (the pages of one PR in each
# language are rendered one after the other). An entry holds the connection, profile and the
# PR's gathered dict it was made for and serves only those very objects: every build gathers
# new dicts, so facts never outlive the build (and the knowledge-base state) they were read in.
_FACTS: list[tuple[Any, Profile, dict[str, Any], dict[str, Any]]] = []
_FACTS_MAX = 2


def forget_facts() -> None:
    """Drop the cached facts (a build that reuses gathered dicts must call this first)."""
    _FACTS.clear()


def _facts(store: Store, pr: dict[str, Any], profile: Profile) -> dict[str, Any]:
    conn = store.conn
    for c, prof, key, facts in _FACTS:
        if key is pr and c is conn and prof is profile:
            return facts
    facts = report_facts(store, pr["ref"], profile)
    _FACTS.insert(0, (conn, profile, pr, facts))
    del _FACTS[_FACTS_MAX:]
    return facts


def warm_up(lang: str) -> None:
    """Make the report environment and load its template (before worker processes fork)."""
    _env(lang).get_template(TEMPLATE)


def report_html(store: Store, pr: dict[str, Any], lang: str, profile: Profile) -> str:
    """The PR's report (the facts and sentences of ``prkb report``) as safe HTML."""
    ctx = localize(_facts(store, pr, profile), lang, profile)
    return _env(lang).get_template(TEMPLATE).render(ctx)
