"""The weekly digest: what changed in a period (an ISO week by default), read from the store.

``period_for`` turns ``--week``/``--since``/``--until`` into a :class:`Period` (UTC, end
exclusive); ``gather`` collects the period's PRs, effective level changes (the stored state
changes), declaration changes, audit findings, risk
highlights and relations into a :class:`Digest`; ``render_digest`` renders it as plain text
or HTML from ``templates/digest/``. ``digest_weeks`` lists the weeks that have something,
for the site's digest pages and Atom feed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, Protocol

from markupsafe import Markup, escape

from ..dates import parse_day, parse_time
from ..errors import InputError
from ..evidence import is_inferred
from ..evidence import loads as evidence_items
from ..glossary import label, risk_tag
from ..models import record_label
from ..profile import Profile, load_profile
from ..render.formats import web_url
from ..render.jinja_calls import plain_call
from ..store import Store

LANGS = ("zh", "en")
# Risk tags the digest calls out by PR (the rest stay on the PR pages).
HIGHLIGHT_TAGS = ("core-path", "missing-tests", "declaration-removed", "revert")
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


@dataclass(frozen=True)
class Period:
    """A half-open UTC interval [start, end) with a stable key for the ledger and the site."""

    key: str  # "2026-W21", or "2026-05-01..2026-05-07" for --since/--until
    start: datetime
    end: datetime

    @property
    def first_day(self) -> date:
        return self.start.date()

    @property
    def last_day(self) -> date:
        return (self.end - timedelta(seconds=1)).date()

    def contains(self, when: datetime | None) -> bool:
        return when is not None and self.start <= when < self.end


def week_period(key: str) -> Period:
    """The ISO week ``YYYY-Www`` (Monday 00:00 UTC to the next Monday)."""
    m = _WEEK.match(key.strip())
    if not m:
        raise InputError(f"--week must look like 2026-W21, got {key!r:.40}")
    year, week = int(m.group(1)), int(m.group(2))
    try:
        monday = date.fromisocalendar(year, week, 1)
    except ValueError:
        raise InputError(f"--week {key}: year {year} has no ISO week {week}") from None
    start = datetime(monday.year, monday.month, monday.day, tzinfo=UTC)
    return Period(f"{year:04d}-W{week:02d}", start, start + timedelta(days=7))


def week_key(when: datetime) -> str:
    """The ISO week key (``2026-W21``) of an aware time."""
    iso = when.astimezone(UTC).isocalendar()
    return f"{iso.year:04d}-W{iso.week:02d}"


def last_complete_week(now: datetime | None = None) -> Period:
    """The latest ISO week that ended before ``now`` (UTC)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    return week_period(week_key(now - timedelta(days=7)))


def _day(text: str, flag: str) -> date:
    try:
        return parse_day(text)
    except ValueError:
        raise InputError(f"{flag} must be a date like 2026-05-18, got {text!r:.40}") from None


def period_for(
    week: str | None = None,
    since: str | None = None,
    until: str | None = None,
    *,
    now: datetime | None = None,
) -> Period:
    """``--week``, or ``--since``/``--until`` (inclusive days), or the last complete week."""
    if week and (since or until):
        raise InputError("give either --week or --since/--until, not both")
    if week:
        return week_period(week)
    if since or until:
        if not (since and until):
            raise InputError("--since and --until go together")
        first, last = _day(since, "--since"), _day(until, "--until")
        if last < first:
            raise InputError(f"--until {last} is before --since {first}")
        start = datetime(first.year, first.month, first.day, tzinfo=UTC)
        end = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
        return Period(f"{first}..{last}", start, end)
    return last_complete_week(now)


def period_from_key(key: str) -> Period:
    """The period a ledger or site key names (``2026-W21`` or ``A..B``)."""
    if ".." in key:
        since, until = key.split("..", 1)
        return period_for(since=since, until=until)
    return week_period(key)


# --- gathering ------------------------------------------------------------------------------


@dataclass
class PrItem:
    number: int | None
    ref: str
    title: str
    state: str
    url: str | None
    author: str | None
    when: str  # the day of the event that put it in this list, YYYY-MM-DD

    @property
    def label(self) -> str:
        return record_label(self.number, self.ref)


@dataclass
class LevelChange:
    class_name: str
    file: str
    before: str | None
    after: str | None
    direction: str
    pr: PrItem
    # the change as the report's change sentence reads it (report/_changes.j2)
    facts: dict[str, Any] = field(default_factory=dict)
    # the values as the HTML table shows them (no attribute column): a bool, which is no
    # level, as its spelling and value (Profile.value_text)
    before_text: str | None = None
    after_text: str | None = None
    # a builder is its file and class: the digest names the file when its level changes hold
    # a class of this name in another file too (a V0 and a V1 builder)
    name_file: bool = False


def _change_facts(
    row: dict[str, Any], profile: Profile, after: dict[tuple[str, str], str | None],
) -> dict[str, Any]:
    """A stored declaration change in the shape of the report's ``changes`` items; ``after``:
    where the value comes from at the PR's commit, by class (``analyze.state.after_sources``)."""
    from ..render.prfacts import change_why

    facts = {"class": row["class_name"], "attr": row["attr"], "direction": row["direction"],
             "before": row["before"], "after": row["after"], "before_attr": row["before_attr"],
             "before_file": row["before_file"], "file": row["file"]}
    return {**facts, "why": change_why(facts, profile, after)}


@dataclass
class EffectiveChange:
    """A change of a builder's effective level (the code's state at the PR's parent and at
    its commit, ``analyze/state.py``): ``before``/``after`` are the sides as the report's
    ``state_side`` macro takes them (``render.state_view.state_row``)."""

    class_name: str
    file: str
    before: dict[str, Any]
    after: dict[str, Any]
    # a builder in a file the PR did not change (it inherits what it changed, or is left on
    # a spelling the code no longer reads)
    outside: bool
    pr: PrItem
    name_file: bool = False


@dataclass
class FindingItem:
    rule: str
    class_name: str
    file: str
    message_en: str
    message_zh: str
    pr: PrItem


@dataclass
class RiskItem:
    pr: PrItem
    codes: list[str]


@dataclass
class RelationItem:
    source: str
    target: str
    type: str
    evidence: list[dict[str, Any]]  # items of prkb/evidence.py, worded by report/_evidence.j2
    source_number: int | None
    target_number: int | None
    # read only from code lineage or a heuristic (evidence.is_inferred): the digest
    # says so
    inferred: bool = False


@dataclass
class Digest:
    period: Period
    profile: Profile
    opened: list[PrItem] = field(default_factory=list)
    merged: list[PrItem] = field(default_factory=list)
    closed: list[PrItem] = field(default_factory=list)
    level_changes: list[LevelChange] = field(default_factory=list)
    effective: list[EffectiveChange] = field(default_factory=list)
    # merged PRs whose effective state was not read (not collected from a clone)
    effective_unknown: list[PrItem] = field(default_factory=list)
    findings: list[FindingItem] = field(default_factory=list)
    risks: list[RiskItem] = field(default_factory=list)
    relations: list[RelationItem] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.opened or self.merged or self.closed or self.level_changes or self.findings
            or self.relations
        )

    def counts(self) -> dict[str, int]:
        return {
            "opened": len(self.opened),
            "merged": len(self.merged),
            "closed": len(self.closed),
            "level_changes": len(self.level_changes),
            "effective_changes": len(self.effective),
            "findings": len(self.findings),
            "risks": len(self.risks),
            "relations": len(self.relations),
        }


def _item(row: dict[str, Any], when: datetime | None) -> PrItem:
    return PrItem(
        number=row["number"],
        ref=row["ref"],
        title=row["title"] or "",
        state=row["state"],
        url=row["url"],
        author=row["author"],
        when=when.date().isoformat() if when else "",
    )


def _sort_key(item: PrItem) -> tuple[str, int]:
    return (item.when, item.number or 0)


def _effective(dg: Digest, changes: list[dict[str, Any]] | None, it: PrItem,
               paths: set[str]) -> None:
    """The PR's changes of a builder's effective level (the profile's symbol), or the PR
    among those whose state was not read."""
    from ..render.state_view import state_row

    if changes is None:
        dg.effective_unknown.append(it)
        return
    for c in changes:
        if c.get("value") == dg.profile.display:
            row = state_row(c, paths)
            dg.effective.append(EffectiveChange(str(row["class"]), str(row["file"]),
                                                row["before"], row["after"], row["outside"], it))


class ReadAlready(Protocol):
    """Reads of the knowledge base a caller has made already, for many weeks (a site
    build's full gather): the digest asks it instead of the store. Each method returns what
    the store's method of that name returns, in the same order."""

    def relations_touching(self, keys: Iterable[str]) -> list[dict[str, Any]]: ...

    def pr_dates(self, repo: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]: ...


def gather(store: Store, period: Period, profile: Profile | None = None, *,
           read: ReadAlready | None = None) -> Digest:
    """Everything the digest says about ``period``, read from the knowledge base; ``read``:
    the relations and PR dates from there instead (no query per week for them)."""
    from ..analyze.state import after_sources

    profile = profile or load_profile()
    dg = Digest(period, profile)
    # stored dates are UTC ISO text, so SQL narrows the rows (a day of margin either side);
    # ``period.contains`` below stays the exact test
    lo = (period.start - timedelta(days=1)).strftime("%Y-%m-%d")
    hi = (period.end + timedelta(days=1)).strftime("%Y-%m-%d")
    rows = store.prs_dated_between(profile.repo, lo, hi)
    in_week: dict[int, PrItem] = {}
    merged_ids: list[tuple[int, PrItem]] = []
    for row in rows:
        created = parse_time(row["created_at"])
        merged = parse_time(row["merged_at"])
        closed = parse_time(row["closed_at"])
        if _opened_known(row) and period.contains(created):
            it = _item(row, created)
            dg.opened.append(it)
            in_week.setdefault(row["id"], it)
        if row["state"] == "merged" and period.contains(merged):
            it = _item(row, merged)
            dg.merged.append(it)
            merged_ids.append((row["id"], it))
            in_week[row["id"]] = it
        elif row["state"] == "closed" and merged is None and period.contains(closed):
            it = _item(row, closed)
            dg.closed.append(it)
            in_week[row["id"]] = it
    for lst in (dg.opened, dg.merged, dg.closed):
        lst.sort(key=_sort_key)
    merged_ids.sort(key=lambda p: _sort_key(p[1]))

    # what the merged PRs changed, read for all of them at once
    merged_rows = [pr_id for pr_id, _it in merged_ids]
    all_states = store.state_changes_of(merged_rows)
    all_changes = store.symbol_changes_of(merged_rows)
    all_paths = store.paths_of(merged_rows)
    all_findings = store.findings_of(merged_rows)
    for pr_id, it in merged_ids:
        states = all_states[pr_id]
        after = after_sources(states, profile.display)
        for r in all_changes[pr_id]:
            dg.level_changes.append(
                LevelChange(
                    r["class_name"], r["file"], r["before"], r["after"], r["direction"], it,
                    _change_facts(r, profile, after),
                    before_text=_shown(profile, r["before"], r["attr"]),
                    after_text=_shown(profile, r["after"], r["attr"]),
                )
            )
        _effective(dg, states, it, all_paths[pr_id])
        for r in all_findings[pr_id]:
            if r["rule"] == "patch-unavailable":
                continue
            dg.findings.append(
                FindingItem(
                    r["rule"], r["class_name"], r["file"], r["message_en"], r["message_zh"], it
                )
            )
    files: dict[str, set[str]] = {}
    for lc in dg.level_changes:
        files.setdefault(lc.class_name, set()).add(lc.file)
    for lc in dg.level_changes:
        lc.name_file = len(files[lc.class_name]) > 1
    held: dict[str, set[str]] = {}
    for ec in dg.effective:
        held.setdefault(ec.class_name, set()).add(ec.file)
    for ec in dg.effective:
        ec.name_file = len(held[ec.class_name]) > 1
    all_codes = store.risk_codes_of(in_week)
    for pr_id, it in sorted(in_week.items(), key=lambda p: _sort_key(p[1])):
        codes = [c for c in all_codes[pr_id] if c in HIGHLIGHT_TAGS]
        if codes:
            dg.risks.append(RiskItem(it, sorted(codes, key=HIGHLIGHT_TAGS.index)))
    keys = sorted({f"pr:{it.number}" for it in in_week.values() if it.number is not None})
    reader: ReadAlready = read if read is not None else store
    touching = reader.relations_touching(keys)
    numbered = [(r, _pr_number(r["source"]), _pr_number(r["target"])) for r in touching]
    dates = reader.pr_dates(profile.repo, {n for _r, s, t in numbered for n in (s, t)
                                          if n is not None})
    # when each end happened (a PR is an end of many relations: read once)
    times = {n: record_time(d) for n, d in dates.items()}
    for r, source, target in numbered:
        # a relation is news in the week its later end happened: before that, one of its
        # PRs did not exist yet (or had not merged), so nobody could have known it
        when = max((t for n in (source, target) if n in times
                    and (t := times[n]) is not None), default=None)
        if when is not None and not period.contains(when):
            continue
        dg.relations.append(
            RelationItem(
                r["source"], r["target"], r["type"], evidence_items(r["evidence"]),
                source, target, is_inferred(r["origin"], r["confidence"]),
            )
        )
    return dg


def _shown(profile: Profile, value: str | None, attr: str) -> str | None:
    """A declared value as the digest's table shows it (``Profile.value_text``)."""
    return None if value is None else profile.value_text(value, attr)


def _pr_number(key: str) -> int | None:
    if key.startswith("pr:") and key[3:].isdigit():
        return int(key[3:])
    return None


def digest_weeks(
    store: Store,
    profile: Profile | None = None,
    *,
    complete_only: bool = True,
    now: datetime | None = None,
) -> list[str]:
    """Every ISO week in which a PR of the profile's repository opened, merged or closed,
    oldest first; by default only weeks that have ended (the site builds one page per week
    and an Atom feed from them)."""
    profile = profile or load_profile()
    current = week_key(now or datetime.now(UTC))
    weeks: set[str] = set()
    for row in store.pr_stamps(profile.repo):
        weeks.update(pr_weeks(row))
    return sorted(w for w in weeks if not complete_only or w < current)


def _opened_known(pr: Any) -> bool:
    """Whether the record knows when its PR was opened: a record made from git history alone
    has the commit's author date, not the PR's opening, so it is never listed as opened."""
    return bool(pr["source"] != "git")


def record_time(pr: Any) -> datetime | None:
    """When a record happened, for dating what it takes part in: its merge, else its closing
    without merge, else its opening (when the record knows it)."""
    if pr["state"] == "merged" and parse_time(pr["merged_at"]) is not None:
        return parse_time(pr["merged_at"])
    if pr["state"] == "closed" and parse_time(pr["closed_at"]) is not None:
        return parse_time(pr["closed_at"])
    return parse_time(pr["created_at"]) if _opened_known(pr) else None


def pr_weeks(pr: Any) -> set[str]:
    """The weeks whose digest names a PR: the week it opened (when known), and the week it
    merged (or closed without merging). ``pr`` has state, created_at, merged_at, closed_at and
    source."""
    stamps = [pr["created_at"]] if _opened_known(pr) else []
    if pr["state"] == "merged":
        stamps.append(pr["merged_at"])
    elif pr["state"] == "closed" and parse_time(pr["merged_at"]) is None:
        stamps.append(pr["closed_at"])
    return {w for w in map(_stamp_week, stamps) if w is not None}


_UTC_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}Z$")


def _stamp_week(text: str | None) -> str | None:
    """``week_key(parse_time(text))``; stored stamps (UTC, ``...Z``) by their day, cached."""
    if text and len(text) == 20 and text[10] == "T" and text[19] == "Z" \
            and _UTC_STAMP.match(text) is not None:
        return _day_week(text[:10])
    t = parse_time(text)
    return week_key(t) if t is not None else None


@lru_cache(maxsize=4096)
def _day_week(day: str) -> str | None:
    t = parse_time(day + "T00:00:00Z")
    return week_key(t) if t is not None else None


@dataclass(frozen=True)
class DigestEntry:
    """One week's digest for a site page or an Atom entry."""

    key: str
    title: str
    start: datetime
    end: datetime
    html: str  # the section fragment (escaped; no document wrapper, no inlined CSS)
    text: str
    counts: dict[str, int]


def digest_entries(
    store: Store,
    lang: str,
    *,
    site_url: str | None = None,
    profile: Profile | None = None,
    now: datetime | None = None,
) -> list[DigestEntry]:
    """The digests of :func:`digest_weeks`, newest first, in ``lang`` (zh or en)."""
    profile = profile or load_profile()
    out = []
    for key in reversed(digest_weeks(store, profile, now=now)):
        d = gather(store, week_period(key), profile)
        out.append(
            DigestEntry(
                key=key,
                title=digest_title(d.period, lang, profile),
                start=d.period.start,
                end=d.period.end,
                html=render(d, lang, "fragment", site_url),
                text=render(d, lang, "text", site_url),
                counts=d.counts(),
            )
        )
    return out


# --- labels used by the templates ---------------------------------------------------------


def direction_label(code: str, lang: str) -> str:
    """A change direction's label in ``lang`` (from the glossary)."""
    return label("directions", code, lang)


def risk_label(code: str, lang: str) -> str:
    """A risk tag's label in ``lang`` (from the glossary)."""
    tag = risk_tag(code)
    return tag.zh if lang == "zh" else tag.en


def pr_link(item: PrItem | int | None, lang: str, site_url: str | None) -> str | None:
    """``<site-url>/<lang>/pr/<N>.html`` with a site, else the PR's own URL (if known, and
    an http(s) one: the record's URL is untrusted)."""
    number = item if isinstance(item, int) or item is None else item.number
    if site_url and number is not None:
        return f"{site_url.rstrip('/')}/{lang}/pr/{number}.html"
    if isinstance(item, PrItem):
        return web_url(item.url)
    return None


def digest_url(period: Period, lang: str, site_url: str | None) -> str | None:
    """The site address of this period's digest page in ``lang``, when a site URL is given."""
    if not site_url:
        return None
    return f"{site_url.rstrip('/')}/{lang}/digest/{period.key}.html"


def check_lang(lang: str) -> list[str]:
    """``zh``, ``en`` or ``both`` as the list of sections to render (Chinese first)."""
    if lang == "both":
        return list(LANGS)
    if lang not in LANGS:
        raise InputError(f"--lang must be zh, en or both, got {lang!r:.20}")
    return [lang]




# --- rendering -----------------------------------------------------------------------------

FORMATS = ("text", "html", "fragment")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")
SECTION = "digest/section.j2"


def plain(text: Any) -> str:
    """One line of untrusted text with control and bidi characters removed."""
    return _plain(text if type(text) is str else str(text))


@lru_cache(maxsize=8192)
def _plain(text: str) -> str:
    # cached (a pure function of the text): a PR's title is in the lists of two weeks, in
    # both languages, and in the week's feed entry
    return _CONTROL.sub("", " ".join(text.split()))


class DigestText:
    """The markup of the text digest (``digest/section.j2``): none; links as lines."""

    html = False
    urls = True  # each PR's link on a line of its own
    h1 = end_h1 = h2 = end_h2 = period = empty = end_p = ul = end_ul = end_li = ""
    end_section = ""
    li = "• "
    li2 = "  – "  # an item of a list inside an item (a relation's evidence)
    online_sep = "\n"

    @staticmethod
    def open_section(html_lang: str) -> str:
        del html_lang
        return ""

    @staticmethod
    def pr_ref(label: str, url: str | None) -> str:
        del url
        return label

    @staticmethod
    def date(day: str) -> str:
        return f"({day})"

    @staticmethod
    def code(text: Any) -> str:
        return plain(text)

    @staticmethod
    def tags(labels: Iterable[str], sep: str) -> str:
        return str(sep).join(labels)


class DigestHtml:
    """The markup of the HTML digest fragment; every value escaped, as autoescape does."""

    html = True
    urls = False  # links are on the PR labels
    h1, end_h1 = Markup("<h1>"), Markup("</h1>")
    h2, end_h2 = Markup("<h2>"), Markup("</h2>")
    period, empty, end_p = Markup('<p class="period">'), Markup('<p class="empty">'), Markup(
        "</p>")
    ul, end_ul, li, end_li = Markup("<ul>"), Markup("</ul>"), Markup("<li>"), Markup("</li>")
    li2 = li
    end_section = Markup("</section>")
    online_sep = Markup(" · ")

    @staticmethod
    def open_section(html_lang: str) -> Markup:
        return Markup(f'<section class="digest" lang="{escape(html_lang)}">')

    @staticmethod
    def pr_ref(label: str, url: str | None) -> Markup:
        if url:
            return Markup(f'<a href="{escape(url)}">{escape(label)}</a>')
        return escape(label)

    @staticmethod
    def date(day: str) -> Markup:
        return Markup(f'<span class="date">{escape(day)}</span>')

    @staticmethod
    def code(text: Any) -> Markup:
        return Markup(f"<code>{escape(plain(text))}</code>")

    @staticmethod
    def tags(labels: Iterable[str], sep: str) -> Markup:
        del sep  # the tags are boxes: a space between them
        # what Markup.format writes ({} escaped), without its formatter per value
        return Markup(" ".join([f'<span class="tag">{escape(x)}</span>' for x in labels]))


@lru_cache(maxsize=4)
def _env(lang: str, html: bool = False) -> Any:
    """The digest's Jinja2 environment for ``lang`` (shared i18n setup, Babel catalogs),
    built once: its filters depend only on the language. ``html``: every template escapes
    (the section's one template is rendered both ways)."""
    from ..render.evidence_items import evidence_writer
    from ..render.formats import FORMATTERS, filters_of
    from ..render.i18n import (
        constant_messages,
        escaping_gettext,
        fast_lookups,
        jinja_env,
        language_cache,
        sentence_macros,
        subject_catalog,
        text_gettext,
    )
    from .digest_lists import DigestLists
    from .digest_relations import RelationItems

    env = jinja_env(lang, autoescape=True if html else None)
    if html:
        # the i18n extension's newstyle gettext, as one plain call with cached lookups; its
        # messages without variables compiled in as text
        env.globals["gettext"] = env.globals["_"] = escaping_gettext(lang)
        constant_messages(env, "escaped", lang)
    else:
        # the same as a plain call (what the Python writers below call); compiled templates
        # call it directly, so they are kept apart from other environments'
        env.globals["gettext"] = env.globals["_"] = text_gettext(lang)
        env.bytecode_cache = language_cache("digest-text", lang)
    fast_lookups(env)
    formatter = DigestHtml() if html else DigestText()
    env.globals["markup"] = formatter
    for name in ("open_section", "pr_ref", "date", "code", "tags"):
        plain_call(getattr(formatter, name))
    env.filters["plain"] = plain
    # the sentences the digest shares with the report (report/_changes.j2, _evidence.j2)
    # take their markup from the report's formatter of the same kind
    report_fmt = FORMATTERS["html" if html else "txt"]
    env.filters.update({k: v for k, v in filters_of(report_fmt).items() if k in ("c", "q", "t")})
    env.globals["codes"] = report_fmt.codes
    env.globals["labels"] = env.get_template("report/_labels.j2").make_module()
    # last: the macros see every global
    env.globals["sentences"] = sentence_macros(env, lang, subject_catalog(lang), state=True,
                                               evidence=evidence_writer(env))
    env.globals["relation_items"] = RelationItems(env)  # reads the evidence lines
    env.globals["lists"] = DigestLists(env)
    return env


def warm_up(lang: str) -> None:
    """Make the digest environments and load their templates (before worker processes
    fork)."""
    _env(lang).get_template("digest/title.txt.j2")
    _env(lang, html=True).get_template(SECTION)


def node_text(key: str, lang: str) -> str:
    """How the digest names a graph node (``#N``, an issue, a commit, another repository's PR)."""
    n = _pr_number(key)
    if n is not None:
        return f"#{n}"
    kind, _, rest = key.partition(":")
    if kind == "issue":
        return f"issue #{rest}"
    if kind == "commit":
        return rest[:12]
    return rest or key


def digest_title(period: Period, lang: str, profile: Profile | None = None) -> str:
    """The heading of one language's part: profile title, "weekly digest", the key (the email
    subject joins those of its languages)."""
    profile = profile or load_profile()
    name = profile.title_zh if lang == "zh" else profile.title_en
    out = _env(lang).get_template("digest/title.txt.j2").render(name=name, key=period.key)
    return " ".join(str(out).split())


def render_section(
    dg: Digest, lang: str, fmt: str, site_url: str | None = None, *,
    site_pages: frozenset[str] | None = None,
) -> str:
    """One language's part of the digest: ``text`` or an HTML ``fragment``.

    ``site_pages``: the HTML of the week's own page of the site, whose PR pages are these
    (slugs): a PR with a page links to it (``../pr/N.html``), another PR is its text, and
    there is no "read online" link (``site_url`` is not read)."""
    html = fmt != "text"
    env = _env(lang, html)
    if site_pages is not None:
        site_url = None

    def link(item: PrItem | int | None) -> str | None:
        if site_pages is None:
            return pr_link(item, lang, site_url)
        number = item if isinstance(item, int) or item is None else item.number
        if number is None:  # the PR's own address, as without a site
            return pr_link(item, lang, None)
        return f"../pr/{number}.html" if str(number) in site_pages else None

    nodes: dict[str, Any] = {}  # a node named by several relations is made once

    def node(key: str) -> Any:
        got = nodes.get(key)
        if got is None:
            text = node_text(key, lang)
            if not html:
                got = plain(text)
            else:
                n = _pr_number(key)
                url = link(n) if n is not None else None
                # the same as Markup('<a href="{}">{}</a>').format(url, text), a tenth the cost;
                # on the site, a PR without a page is the text its link would have had
                got = (Markup(f'<a href="{escape(url)}">{escape(text)}</a>') if url
                       else escape(text) if n is not None and site_pages is not None
                       else escape(plain(text)))
            nodes[key] = got
        return got

    # every function the templates call is a plain one: called without Jinja's checks
    calls: dict[str, Any] = {
        "link": link,
        "node": node,
        "risk_labels": lambda codes: [risk_label(code, lang) for code in codes],
        "direction": lambda code: direction_label(code, lang),
        "finding": lambda f: f.message_zh if lang == "zh" and f.message_zh else f.message_en,
    }
    values = {
        "dg": dg,
        "dg_title": digest_title(dg.period, lang, dg.profile),
        "page_url": digest_url(dg.period, lang, site_url),
        "html_lang": "zh-CN" if lang == "zh" else "en",
        # what the profile calls a class that holds the value ("" : the generic words)
        "holder": dg.profile.word("holder", lang),
        **{name: plain_call(fn) for name, fn in calls.items()},
    }
    out = env.get_template(SECTION).render(**values)
    return str(out) if html else _tidy_text(out)


def _tidy_text(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines()]
    out: list[str] = []
    for ln in lines:
        if not ln and (not out or not out[-1]):
            continue
        out.append(ln)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def footer(lang: str, profile: Profile) -> str:
    """The digest's closing lines in ``lang`` (what it is and where it comes from)."""
    out = _env(lang).get_template("digest/footer.txt.j2").render(repo=profile.repo)
    return " ".join(str(out).split())


def render(dg: Digest, lang: str, fmt: str, site_url: str | None = None) -> str:
    """The whole digest in ``lang`` (zh, en or both: Chinese then English) as ``fmt``."""
    if fmt not in FORMATS:
        raise InputError(f"digest format must be one of {', '.join(FORMATS)}, got {fmt!r:.20}")
    langs = check_lang(lang)
    sections = [render_section(dg, lg, "text" if fmt == "text" else "html", site_url)
                for lg in langs]
    first = langs[0]
    if fmt == "text":
        rule = "\n" + "—" * 40 + "\n\n"
        return rule.join(sections) + "\n" + "\n".join(footer(lg, dg.profile) for lg in langs) + "\n"
    if fmt == "fragment":
        return "\n".join(sections)
    import css_inline

    env = _env(first, html=True)
    doc = env.get_template("digest/email.html.j2").render(
        sections=[Markup(s) for s in sections],
        subject=digest_title(dg.period, first, dg.profile),
        html_lang="zh-CN" if first == "zh" else "en",
        footer=" ".join(footer(lg, dg.profile) for lg in langs),
    )
    inliner = css_inline.CSSInliner(load_remote_stylesheets=False, keep_style_tags=False)
    return str(inliner.inline(doc))


def render_digest(
    store: Store,
    week: str,
    lang: str,
    fmt: str,
    *,
    site_url: str | None = None,
    profile: Profile | None = None,
) -> str:
    """The digest of ``week`` (a key from :func:`digest_weeks` or ``A..B``) in ``lang``
    (zh, en, both) as ``fmt``: ``text``, ``html`` (a whole document with inlined CSS, as
    mailed) or ``fragment`` (the sections only, for a site page)."""
    dg = gather(store, period_from_key(week), profile)
    return render(dg, lang, fmt, site_url)
