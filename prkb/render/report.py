"""PR reports: one analysis, rendered per language and format.

:func:`report_facts` reads a PR once (:func:`.prfacts.read_pr`) and builds each section of
the report from it (:mod:`.sections`: facts only, codes, names, values, excerpts);
:func:`localize` gives the context of one language. Every sentence a reader sees comes from
the templates under ``templates/report/`` (``report.j2`` orders the sections, each worded by
``sections/NAME.j2``) and the message catalogs. One template makes every format through the
formatter of :mod:`.formats`: ``md`` (Markdown), ``txt`` (plain text for e-mail) and, with
:func:`render_context`, an HTML fragment (the site's PR pages). ``prkb report --format
html`` is a standalone page made from the Markdown by ``to_html``. Output is deterministic:
the same knowledge base gives byte-identical reports.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2

from ..errors import InputError
from ..profile import Profile, load_profile
from ..store import Store
from .evidence_items import evidence_writer
from .formats import FORMATTERS, FormatConstants, drop_marks, filters_of
from .i18n import (
    LANGS,
    ConstantMessages,
    escaping_gettext,
    html_env,
    jinja_env,
    language_cache,
    rules_key,
    sentence_macros,
    subject_catalog,
    text_gettext,
)
from .implementation_items import ImplementationItems
from .key_files_items import KeyFilesItems
from .markdown import to_html
from .patches import related_names
from .prfacts import PrFacts, read_pr
from .related_items import RelatedItems
from .review_items import ReviewItems
from .risks_items import RisksItems
from .sections import (
    ORDER,
    header,
    implementation,
    key_code,
    key_files,
    motivation,
    related,
    review,
    risks,
    summary,
)
from .sections.header import Header
from .sections.implementation import Implementation
from .sections.key_code import KeyCode
from .sections.key_files import KeyFiles
from .sections.motivation import Motivation
from .sections.related import Related
from .sections.review import Review
from .sections.risks import Risks
from .sections.summary import Summary

FORMATS = ("md", "txt", "html")


@dataclass(frozen=True)
class ReportFacts:
    """What every language's report of one PR shares: the profile's facts, the declaration
    changes (said by the summary and the breakdown) and each section (:mod:`.sections`)."""

    profile: dict[str, Any]
    changes: list[dict[str, Any]]
    header: Header
    summary: Summary
    motivation: Motivation
    implementation: Implementation
    key_files: KeyFiles
    key_code: KeyCode
    review: Review
    risks: Risks
    related: Related


# the names of ReportFacts' fields, in order (each is a key of every language's context)
_FACT_NAMES = tuple(x.name for x in dataclasses.fields(ReportFacts))


def report_facts(
    store: Store, ref: str | int, profile: Profile,
    read: tuple[sqlite3.Row, dict[str, Any]] | None = None,
    titles: Mapping[int, str | None] | None = None,
) -> ReportFacts:
    """What every language's report of PR ``ref`` shares (``localize`` adds the rest).
    ``read``: its row and stored facts, already read; ``titles``: PR titles already read
    (``read_pr``).

    The caller must not change the result. Raises NotFound.
    """
    return facts_of(read_pr(store, ref, profile, read, titles))


def facts_of(f: PrFacts) -> ReportFacts:
    """Every section of the report of one PR's facts."""
    profile = f.profile
    return ReportFacts(
        profile={
            "name": profile.name,
            "rules": profile.rules,  # "" when the profile has no audit rule module
            "display": profile.display,
            "kind": profile.kind,  # what the value is: enum (levels), int, bool, str, expr
            "enum": profile.enum,
            "related_names": related_names(profile),
            "builder_bases": sorted(profile.builder_bases),
        },
        changes=f.changes,
        header=header.build(f),
        summary=summary.build(f),
        motivation=motivation.build(f),
        implementation=implementation.build(f),
        key_files=key_files.build(f),
        key_code=key_code.build(f),
        review=review.build(f),
        risks=risks.build(f),
        related=related.build(f),
    )


def report_context(
    store: Store, ref: str | int, lang: str, *, profile: Profile | None = None
) -> dict[str, Any]:
    """Everything a report says, as facts (no sentences). Raises NotFound."""
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    profile = profile or load_profile()
    return localize(report_facts(store, ref, profile), lang, profile)


def _meaning(profile: Profile, lang: str, value: str | None) -> str | None:
    if not value:
        return None
    return profile.level_meaning.get(lang, {}).get(profile.normalize_level(value))


def localize(base: ReportFacts, lang: str, profile: Profile) -> dict[str, Any]:
    """The template context of ``lang`` from the language-independent ``report_facts``:
    ``lang``, ``profile``, ``pr``, ``changes``, each section by its name,
    ``section_order`` (:data:`.sections.ORDER`) and ``pr_links`` (None: the site sets it, for
    its HTML, to the pages of the PRs this report names, by graph node key).

    Only what differs by language is built anew (level meanings, the profile's wording and
    title, the risks' labels and messages); the rest is shared with ``base``, which is left
    unchanged (a cache may hand the same ``base`` to both languages).
    """
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    changes = [
        {**c, "before_meaning": _meaning(profile, lang, c["before"]),
         "after_meaning": _meaning(profile, lang, c["after"])}
        for c in base.changes
    ]
    sections = {name: getattr(base, name) for name in _FACT_NAMES}
    return {
        **sections,
        "section_order": ORDER,
        "lang": lang,
        "pr": base.header.pr,
        "profile": {**base.profile,
                    "title": profile.title_zh if lang == "zh" else profile.title_en,
                    "meanings": profile.level_meaning.get(lang, {}),
                    "wording": profile.words(lang)},
        "changes": changes,
        "risks": risks.localize(base.risks, lang, profile),
        "pr_links": None,
    }


# --- rendering ----------------------------------------------------------------------------


REPORT = "report/report.j2"
# how report.j2 says its sections, each in its own template, in their order
_SECTION_LOOP = ('{% for name in section_order %}\n'
                 '{% include "report/sections/" ~ name ~ ".j2" %}\n'
                 '{% endfor %}\n')


class SectionsInline(jinja2.BaseLoader):
    """A loader that hands out ``report.j2`` with its sections written in (each section's
    template, in :data:`.sections.ORDER`, under ``{% if "NAME" in section_order %}``), so
    that a report renders as one template: an ``{% include %}`` makes a new context of every
    variable each time, about a quarter of a report's rendering (measured, 2026-12-03).
    What each section says and the order are the same; the compiled template is up to date,
    and kept in the bytecode cache, by the text of every file it is made of. Every other
    template comes from ``inner`` as it is."""

    def __init__(self, inner: jinja2.BaseLoader) -> None:
        self.inner = inner

    def get_source(
        self, environment: jinja2.Environment, template: str,
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        source, filename, uptodate = self.inner.get_source(environment, template)
        if template != REPORT or _SECTION_LOOP not in source:
            return source, filename, uptodate
        parts: list[str] = []
        checks = [uptodate]
        for name in ORDER:
            text, _file, fresh = self.inner.get_source(environment,
                                                       f"report/sections/{name}.j2")
            parts.append(f'{{% if "{name}" in section_order %}}\n{text}{{% endif %}}\n')
            checks.append(fresh)
        return (source.replace(_SECTION_LOOP, "".join(parts)), filename,
                lambda: all(check() for check in checks if check is not None))

    def list_templates(self) -> list[str]:
        return self.inner.list_templates()


# the report template of each environment _report_env made (a new environment, after its
# cache is cleared, loads it anew)
_REPORTS: dict[jinja2.Environment, jinja2.Template] = {}


@lru_cache(maxsize=16)
def _report_env(lang: str, fmt: str, subject: str = "", rules: str = "") -> jinja2.Environment:
    """The environment of one language and format, cached (templates compile once): the
    report template with the formatter ``markup`` of ``fmt`` (:mod:`.formats`) and its filters.
    ``html`` autoescapes (:func:`.i18n.html_env`); ``md`` and ``txt`` do not. ``subject``
    ``commit``: a report of a commit without a PR, its messages worded so where the catalog
    has them (``msgctxt "commit"``). ``rules``: the profile's audit rule module, whose own
    wording of the generic audit messages comes first (:class:`.i18n.SubjectCatalog`)."""
    if fmt == "html":
        env = html_env(lang, "report.html")
        # one template for every format: here every template escapes, whatever its name
        env.autoescape = True
        if subject or rules:
            env.globals["gettext"] = env.globals["_"] = escaping_gettext(lang, subject, rules)
    else:
        env = jinja_env(lang, autoescape=False)
        env.globals["gettext"] = env.globals["_"] = text_gettext(lang, subject, rules)
        # its messages without variables compiled in as text (the bytecode cache that keeps
        # them apart per language is set below, for every format)
        env.add_extension(ConstantMessages)
    assert env.loader is not None
    env.loader = SectionsInline(env.loader)
    formatter = FORMATTERS[fmt]
    # the formatter's structure strings are compiled into the template as text: compiled
    # templates of this format are kept apart from those of other formats
    env.extend(report_format=formatter)
    env.add_extension(FormatConstants)
    # one language's messages and one format's strings are compiled in: kept apart
    own = "".join(f"-{x}" for x in (subject, rules_key(rules)) if x)
    env.bytecode_cache = language_cache(f"report-{fmt}{own}", lang)
    env.filters.update(filters_of(formatter))
    env.globals.update(markup=formatter, codes=formatter.codes, num=formatter.num)
    # the label tables (report/_labels.j2) depend only on the language: built once
    env.globals["labels"] = env.get_template("report/_labels.j2").make_module()
    # last: the macros see every global
    env.globals["sentences"] = sentence_macros(env, lang, subject_catalog(lang, subject, rules),
                                               state=True, evidence=evidence_writer(env))
    # the section parts written in Python (render/section_writer.py), called as plain calls;
    # the related items read the sentences' macros
    env.globals["related_items"] = RelatedItems(env)
    env.globals["risks_items"] = RisksItems(env)
    env.globals["review_items"] = ReviewItems(env)
    env.globals["key_files_items"] = KeyFilesItems(env)
    env.globals["implementation_items"] = ImplementationItems(env)
    return env


def warm_up(lang: str, fmt: str = "html", rules: str = "") -> None:
    """Make the report environment and load its template (before worker processes fork);
    ``rules``: the profile's audit rule module."""
    _report_env(lang, fmt, "", rules).get_template(REPORT)


def render_context(ctx: dict[str, Any], fmt: str, only: tuple[str, ...] = ORDER) -> str:
    """The report of one language from its ``report_context``: ``md``, ``txt``, or ``html``
    (a fragment for a page: headings, lists, paragraphs; every value escaped). ``only``: the
    sections to say (by name, :data:`.sections.ORDER`; all by default)."""
    unknown = [x for x in only if x not in ORDER]
    if unknown:
        raise InputError(f"unknown report section {unknown[0]!r}: use one of {', '.join(ORDER)}")
    subject = "commit" if ctx["pr"].get("commit") else ""
    env = _report_env(ctx["lang"], fmt, subject, ctx["profile"]["rules"])
    template = _REPORTS.get(env)
    if template is None:  # the environment never reloads it: kept, not looked up each time
        template = _REPORTS[env] = env.get_template(REPORT)
    out = template.render(ctx, section_order=only)
    return out if fmt == "html" else _tidy(out)


def _tidy(text: str) -> str:
    """At most one blank line in a row, no trailing spaces, one final newline; the
    formatter's structure marks go, with their line when nothing else is on it."""
    out: list[str] = []
    fence: str | None = None
    for raw in text.split("\n"):
        kept = drop_marks(raw)
        if kept is None:  # a line of HTML structure only (formats.DROP)
            continue
        ln = kept.rstrip()
        stripped = ln.strip()
        if fence is None and stripped.startswith("```"):
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        elif fence is not None and stripped == fence:
            fence = None
        if fence is None and not ln and out and not out[-1]:
            continue
        out.append(ln)
    return "\n".join(out).strip("\n") + "\n"


_STYLE = (
    "body{font:16px/1.6 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
    "color:#1b1b1b}pre{background:#f5f5f5;padding:.75rem;overflow-x:auto}"
    "code{font-family:ui-monospace,monospace;font-size:.9em}"
    "blockquote{border-left:3px solid #ccc;margin-left:0;padding-left:1rem;color:#444}"
    "section+section{border-top:2px solid #ddd;margin-top:3rem}"
)


@lru_cache(maxsize=4)
def _page_env(lang: str) -> jinja2.Environment:
    return jinja_env(lang, autoescape=True)


def _page(parts: list[tuple[str, str]], title: str) -> str:
    """A standalone page: sanitized body per language, strict CSP, no scripts."""
    style_hash = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
    env = _page_env(parts[0][0])
    return env.get_template("report/page.html.j2").render(
        sections=[{"lang": lang, "html": html} for lang, html in parts],
        title=title,
        style=_STYLE,
        csp=(
            "default-src 'none'; img-src https:; "
            f"style-src 'sha256-{style_hash}'; base-uri 'none'; form-action 'none'"
        ),
        html_lang="zh-CN" if parts[0][0] == "zh" and len(parts) == 1 else (
            "en" if len(parts) == 1 else "mul"
        ),
    )


def _check(lang: str, fmt: str) -> None:
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use zh or en")
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def render_report(
    store: Store, ref: str | int, *, lang: str = "zh", fmt: str = "md",
    profile: Profile | None = None,
) -> str:
    """One report of PR ``ref`` in ``lang`` (zh, en) and ``fmt`` (md, txt, html)."""
    _check(lang, fmt)
    ctx = report_context(store, ref, lang, profile=profile)
    if fmt != "html":
        return render_context(ctx, fmt)
    md = render_context(ctx, "md")
    return _page([(lang, to_html(md))], _page_title(ctx))


def render_reports(
    store: Store, ref: str | int, langs: tuple[str, ...], *, fmt: str = "md",
    profile: Profile | None = None,
) -> str:
    """Several languages one after the other (html: one page with a section per language)."""
    for lang in langs:
        _check(lang, fmt)
    ctxs = [report_context(store, ref, lang, profile=profile) for lang in langs]
    if fmt == "html":
        return _page([(c["lang"], to_html(render_context(c, "md"))) for c in ctxs],
                     _page_title(ctxs[0]))
    sep = "\n---\n\n" if fmt == "md" else "\n" + "=" * 60 + "\n\n"
    return sep.join(render_context(c, fmt) for c in ctxs)


def _page_title(ctx: dict[str, Any]) -> str:
    pr = ctx["pr"]
    commit = pr.get("commit")
    head = (f"PR #{pr['number']}" if pr["number"] is not None
            else f"commit {commit['sha']} on {commit['repo']}" if commit else pr["ref"])
    return f"{head} {pr['title']}"[:300]
