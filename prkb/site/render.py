"""Stage 3 of the site build: render pages to bytes and write them, on every core.

Rendering is CPU-bound Python, so pages are rendered in forked worker processes (one per
core, each with its own knowledge-base connection; template environments are made before the
fork), each writing what it renders. Small jobs (an incremental build) are rendered in this
process. A page is always written as a new file, never into an existing one.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..errors import PrkbError
from ..render.jinja_calls import PlainCallContext, plain_call
from ..store import Store
from . import links as site_links
from .feed import atom_feed
from .macros import make_helpers
from .output import ASSETS, write_new
from .page import LANG_CODES, Page, root_of

PARALLEL_MIN = 160  # PR pages' worth of work; below this, forking costs more than it saves
HEAVY = 10  # what a page other than a PR page is worth, in PR pages (a rough mean)
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'"
)


@dataclass
class RenderJob:
    pages: list[Page]
    store: Store
    langs: list[str]
    base_url: str | None
    tmp: Path
    envs: dict[str, jinja2.Environment] = field(default_factory=dict)
    # template -> what to make, per language, before workers fork (e.g. the PR report's
    # environment for site/pr.html): given by the build, so that this module imports none
    warm_ups: dict[str, Callable[[str], None]] = field(default_factory=dict)
    links: site_links.LinkFinder = field(default_factory=site_links.LinkFinder)


# The job a forked worker renders. Set by the worker's initializer, in the worker process only
# (the job reaches it through the fork, not pickled: its pages hold closures); this process
# never sets it. A pool's task function gets only what is pickled, hence a global.
_WORKER_JOB: RenderJob | None = None



def escaping_env(lang: str, what: str) -> jinja2.Environment:
    """A fresh i18n environment for HTML under autoescape, its gettext cached and returning
    Markup (catalog text is trusted; ``%`` variables are escaped). ``what`` names the
    template the check is made for, in the error."""
    from ..render.i18n import jinja_env, translations

    env = jinja_env(lang)
    if not env.autoescape or not env.autoescape(what):  # type: ignore[operator]
        raise PrkbError(f"the template environment must autoescape HTML ({what})")
    env.auto_reload = False  # templates do not change during a build: no stat per render
    env.getattr = _dict_first(env.getattr)  # type: ignore[method-assign,assignment]
    env.filters.update(_date_filters(lang))
    catalog = translations(lang)

    @lru_cache(maxsize=4096)
    def lookup(msgid: str) -> Markup:
        return Markup(catalog.gettext(msgid))

    @lru_cache(maxsize=4096)
    def constant(msgid: str) -> Markup:
        return lookup(msgid) % {}  # as with variables: "%%" becomes "%"

    def gettext(msgid: str, **variables: Any) -> Markup:
        if variables:
            return lookup(msgid) % variables
        return constant(msgid)

    # ``_`` straight to gettext: the i18n extension's alias resolves and calls it each time
    env.globals["gettext"] = env.globals["_"] = plain_call(gettext)
    # level_badge, pr_link, change_line, state_name: the markup of site/macros.html, in Python
    env.globals.update({k: plain_call(f) for k, f in
                        make_helpers(gettext, env.filters["label"]).items()})
    env.globals["relation_line"] = plain_call(_relation_lines(env))
    env.context_class = PlainCallContext
    return env


_SLOT = "PRKB0RELATION0SLOT"  # letters and digits only: no escaping changes it


def _relation_lines(env: jinja2.Environment) -> Callable[..., Markup]:
    """``sentence(type, direction, other, inferred)`` of ``report/_relations.j2`` with the
    macro called once per type, direction and mark: its output with ``other`` left as a slot,
    then the slot filled. The same markup, without a macro call per relation."""
    made: dict[tuple[str, str, bool], list[Markup]] = {}

    def relation_line(type_: str, direction: str, other: Markup, inferred: bool = False) -> Markup:
        key = (type_, direction, bool(inferred))
        parts = made.get(key)
        if parts is None:
            module = env.get_template("report/_relations.j2").make_module()
            sentence = getattr(module, "sentence")  # noqa: B009 (a template macro)
            parts = made[key] = Markup(sentence(type_, direction, Markup(_SLOT), inferred)).split(
                _SLOT)
        return Markup(escape(other)).join(parts)

    return relation_line


def _date_filters(lang: str) -> dict[str, Callable[..., str]]:
    """``format_date`` and ``format_datetime`` as ``prkb.render.i18n`` makes them, with the
    Babel locale parsed once (not on every call) and each day's date formatted once."""
    from babel import Locale
    from babel.dates import format_date, format_datetime, format_time, get_datetime_format

    from ..render.i18n import format_date_for, locale_of, parse_when, zone_unknown

    loc = Locale.parse(locale_of(lang))
    unknown = format_date_for(None, lang)

    @lru_cache(maxsize=4096)
    def day_text(day: date, fmt: str) -> str:
        return str(format_date(day, fmt, locale=loc))

    def date_filter(value: Any, fmt: str = "long") -> str:
        when = parse_when(value)
        if when is None:
            return unknown
        return day_text(when.date() if isinstance(when, datetime) else when, fmt)

    @lru_cache(maxsize=8)
    def joiner(fmt: str) -> str:
        pattern = get_datetime_format(fmt, locale=loc)  # type: ignore[arg-type]
        return str(pattern).replace("'", "")

    @lru_cache(maxsize=8192)
    def time_text(hms: tuple[int, int, int, int], fmt: str) -> str:
        return str(format_time(datetime(2000, 1, 1, *hms, tzinfo=UTC), fmt, tzinfo=None,
                               locale=loc))

    def naive_utc_text(when: datetime, fmt: str) -> str:
        """``format_datetime(when, fmt)`` for a naive datetime: Babel joins its date and
        time texts with the locale's pattern; both parts are cached here."""
        if fmt not in ("full", "long", "medium", "short"):
            return str(format_datetime(when, fmt, locale=loc))
        hms = (when.hour, when.minute, when.second, when.microsecond)
        return joiner(fmt).replace("{0}", time_text(hms, fmt)).replace(
            "{1}", day_text(when.date(), fmt))

    def datetime_filter(value: Any, fmt: str = "medium") -> str:
        when = parse_when(value)
        if when is None:
            return unknown
        if not isinstance(when, datetime):
            return day_text(when, "long")
        if when.tzinfo is not None:
            utc = when.astimezone(UTC).replace(tzinfo=None)
            return f"{naive_utc_text(utc, fmt)} UTC"
        return zone_unknown(naive_utc_text(when, fmt), lang)

    return {"format_date": date_filter, "format_datetime": datetime_filter}


_DICT_ATTRS = frozenset(dir(dict))


def _dict_first(default: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """Jinja's ``x.name`` for the site's plain dicts without the failed attribute lookup.

    Jinja tries ``getattr(x, name)`` first and ``x[name]`` after; a plain dict has no
    attributes but those of its class, so for any other name the item is what Jinja finds.
    The same result, without raising and catching an AttributeError on every lookup."""

    def getattr_(obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRS:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return default(obj, attribute)

    return getattr_


def _env(lang: str, envs: dict[str, jinja2.Environment]) -> jinja2.Environment:
    if lang not in envs:
        envs[lang] = escaping_env(lang, "site/x.html")
    return envs[lang]


def render_page(job: RenderJob, page: Page) -> bytes:
    ctx = page.context()
    if page.kind == "json":
        return json.dumps(ctx, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if page.kind == "bytes":
        body: bytes = ctx["body"]
        return body
    if page.kind == "feed":
        return atom_feed(ctx["items"], lang=ctx["lang"], base_url=job.base_url,
                         feed_path=page.path)
    langs = job.langs
    lang = page.lang or ("en" if "en" in langs else langs[0])
    env = _env(lang, job.envs)
    root = root_of(page.path)
    rest = page.path.split("/", 1)[1] if page.lang else "index.html"
    switch = [
        {"lang": other, "code": LANG_CODES[other], "href": f"{root}{other}/{rest}",
         "current": other == page.lang}
        for other in langs
    ]
    html = env.get_template(page.template).render(
        {**ctx, "langs": langs},
        page_path=page.path,
        root=root,
        here="../" * (page.path.count("/") - 1) if page.lang else f"{lang}/",
        assets=f"{root}{ASSETS}/",
        lang_code=LANG_CODES[lang],
        page_lang=page.lang,
        switch=switch,
        csp=CSP,
    )
    return html.encode("utf-8")


def _render_some(job: RenderJob, indexes: list[int]) -> list[tuple[int, list[str]]]:
    """Render and write pages; returns each page's internal links.

    Written in the rendering thread: on this work's file systems a page's write is a few
    tens of microseconds, less than handing it to a writer thread costs in CPU (and the
    workers already keep every core busy)."""
    out: list[tuple[int, list[str]]] = []
    for i in indexes:
        page = job.pages[i]
        body = render_page(job, page)
        write_new(job.tmp / page.path, body)
        links = job.links.links(page.path, body.decode("utf-8")) if page.kind == "html" else []
        out.append((i, links))
    return out


def _worker_init(job: RenderJob) -> None:
    global _WORKER_JOB
    # a fresh connection: a SQLite connection must not cross a fork (the template
    # environments warmed up before the fork are plain Python objects: they are kept)
    job.store.reconnect()
    _WORKER_JOB = job


def _warm_up(job: RenderJob, indexes: list[int]) -> None:
    """Make the template environments and load the templates the pages need once, before the
    workers fork (each would otherwise make its own)."""
    templates = {job.pages[i].template for i in indexes} - {""}
    for lang in job.langs:
        env = _env(lang, job.envs)
        for name in sorted(templates):
            env.get_template(name)
        for name, warm_up in job.warm_ups.items():
            if name in templates:
                warm_up(lang)


def _worker(indexes: list[int]) -> list[tuple[int, list[str]]]:
    assert _WORKER_JOB is not None
    return _render_some(_WORKER_JOB, indexes)


def render_all(
    job: RenderJob, indexes: list[int], on_done: Callable[[int], None] | None = None
) -> dict[int, list[str]]:
    """Render the pages at ``indexes``; returns their links by index."""
    workers = min(os.cpu_count() or 1, 4)
    results: dict[int, list[str]] = {}
    # a page that lists all PRs (timeline, graph, digest week, builder...) costs what tens of
    # PR pages cost: a few of them are worth the other core too
    weight = sum(1 if job.pages[i].template == "site/pr.html" else HEAVY for i in indexes)
    if weight < PARALLEL_MIN or workers < 2 or str(job.store.path) == ":memory:":
        for chunk in _chunks(indexes, 64):
            for i, links in _render_some(job, chunk):
                results[i] = links
            if on_done is not None:
                on_done(len(chunk))
        return results
    _warm_up(job, indexes)
    ctx = multiprocessing.get_context("fork")  # fork: the initializer's job is not pickled
    with ctx.Pool(workers, initializer=_worker_init, initargs=(job,)) as pool:
        # heavy pages first, in small runs, so that the last run is not a long one
        order = sorted(indexes, key=lambda i: job.pages[i].template == "site/pr.html")
        size = max(1, min(100, len(indexes) // (workers * 8)))
        for done in pool.imap_unordered(_worker, _chunks(order, size)):
            for i, links in done:
                results[i] = links
            if on_done is not None:
                on_done(len(done))
    return results


def _chunks(items: list[int], n: int) -> list[list[int]]:
    return [items[i:i + n] for i in range(0, len(items), n)]
