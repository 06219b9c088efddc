"""The weekly digests inside the site: one page per ISO week, a list of weeks, Atom feeds.

The weeks are those of :func:`prkb.publish.digest.digest_weeks` (ended weeks in which a PR of
the profile's repository opened, merged or closed), worked out here from the gathered site
data so that planning costs no query. A week page's inputs are the digests of the PRs that
make up that week and the dates of the other ends of their relations (a relation is news in
the week its later end happened), so an incremental build renders again only the weeks a
changed PR is in or dates a relation of.
The digest itself comes from ``prkb.publish.digest`` (the same text and markup as the mailed
digest), rendered as an HTML fragment by its autoescaping template, as the PR reports are:
every value from the knowledge base is escaped, the markup is the template's own
(``DigestHtml``), and the hostile-input tests check every week page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from ..profile import Profile
from ..store import Store
from .fragments import FragmentCache
from .gather import SiteData
from .page import Page
from .safe import site_safe
from .search import digest_shard

FEED_WEEKS = 20  # entries of each digest feed (newest weeks)
def feed_path(lang: str) -> str:
    return f"digest-{lang}.xml"


def week_prs(
    data: SiteData, profile: Profile, now: datetime | None = None
) -> dict[str, list[int]]:
    """Week key -> ids of the PRs that appear in that week's digest, newest week first.

    The same weeks as ``digest_weeks(store, profile)``: a PR counts in the week it opened and
    in the week it merged (or closed without merging); only weeks that have ended.
    """
    from ..publish.digest import pr_weeks, week_key

    current = week_key(now or datetime.now(UTC))
    weeks: dict[str, list[int]] = {}
    for pr in reversed(data.prs):  # oldest first: ids in a fixed order
        if pr["repo"] != profile.repo:
            continue
        for key in pr_weeks(pr):
            if key < current:
                weeks.setdefault(key, []).append(pr["id"])
    return dict(sorted(weeks.items(), reverse=True))


def week_hashes(
    weeks: dict[str, list[int]], pr_hash: dict[int, str], ends: dict[str, str] | None = None
) -> dict[str, str]:
    """A hash per week of everything its digest shows: the hashes of its PRs' own data and,
    in ``ends`` (week -> hash), of when the other ends of their relations happened (a
    relation is news in the week of its later end: a date of a PR outside the week can move
    it in or out)."""
    ends = ends or {}
    return {
        key: hashlib.sha256(
            f"{key}|{'|'.join(pr_hash[i] for i in ids)}|{ends.get(key, '')}".encode()
        ).hexdigest()
        for key, ids in weeks.items()
    }


def relation_end_times(data: SiteData, ids: Iterable[int]) -> dict[int, str]:
    """PR id -> the times the digest dates the other ends of its relations by (state,
    opening, merge, closing, source: ``prkb.publish.digest.record_time``), as one text."""
    times = {node: f";{node},{p['state']},{p['created_at']},{p['merged_at']},"
                   f"{p['closed_at']},{p['source']}"
             for node, p in data.by_node.items()}
    by_id = data.by_id
    out: dict[int, str] = {}
    for i in ids:
        rels = by_id[i]["relations"]
        if rels:
            out[i] = "".join([times[o] for o in [r[2] for r in rels] if o in times])
    return out


class FromGather:
    """The relations and PR dates a week's digest reads (``prkb.publish.digest.ReadAlready``),
    answered from a read of every PR and relation instead of two queries a week (a third of a
    week's read at 10,000 PRs): what ``Store.relations_touching`` and ``Store.pr_dates``
    return, in the same order. ``data``: the site's full gather, or the early child's own
    read (``site/early.py``: the PRs' stamps and numbers, the relations); either read the
    knowledge base after the change journal's cursor, as every query of the render does."""

    def __init__(self, data: SiteData) -> None:
        self.data = data
        self._numbered: dict[str, dict[int, dict[str, Any]]] = {}  # repo -> number -> dates

    def relations_touching(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        """The relations with an end among ``keys`` (graph keys), by source, type, target."""
        keys = list(keys)  # read twice when one is no PR's (_from_all)
        by_node = self.data.by_node
        seen: dict[tuple[str, str, str], dict[str, Any]] = {}
        for key in keys:
            pr = by_node.get(key)
            if pr is None:  # a key of no PR: the gather gave none of its relations to a PR
                return self._from_all(keys)
            for type_, direction, other, evidence, confidence, origin in pr["relations"]:
                source, target = (key, other) if direction == "out" else (other, key)
                seen.setdefault((source, type_, target), {
                    "source": source, "target": target, "type": type_, "evidence": evidence,
                    "confidence": confidence, "origin": origin})
        return [seen[k] for k in sorted(seen)]

    def _from_all(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        wanted = set(keys)
        return [{"source": s, "target": t, "type": ty, "evidence": e, "confidence": c,
                 "origin": o}
                for s, t, ty, e, c, o in sorted(self.data.relations,
                                                key=lambda r: (r[0], r[2], r[1]))
                if s in wanted or t in wanted]

    def pr_dates(self, repo: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The PRs of ``repo`` numbered ``numbers``: number -> ``number, state, created_at,
        merged_at, closed_at, source`` (of two rows with one number, the newer row's, as
        the query's index order gives)."""
        table = self._numbered.get(repo)
        if table is None:
            table = self._numbered[repo] = {}
            for pr_id in sorted(self.data.by_id):
                pr = self.data.by_id[pr_id]
                if pr["repo"] == repo and pr["number"] is not None:
                    table[int(pr["number"])] = {
                        "number": pr["number"], "state": pr["state"],
                        "created_at": pr["created_at"], "merged_at": pr["merged_at"],
                        "closed_at": pr["closed_at"], "source": pr["source"]}
        return {n: table[n] for n in sorted(set(numbers)) if n in table}


class WeekData:
    """Each week's digest data, read once (per process) for both languages and the feeds.

    One per plan: every build reads the knowledge base afresh. Bounded: the pages of a week
    are rendered next to each other, so the oldest entries are dropped when it fills.
    ``read``: a read of every PR and relation made already (:class:`FromGather`).
    """

    LIMIT = 64

    def __init__(self, store: Store, profile: Profile, read: FromGather | None = None) -> None:
        self.store = store
        self.profile = profile
        self.read = read
        self._weeks: dict[str, Any] = {}

    def of(self, key: str) -> Any:
        """The digest data of week ``key`` (``prkb.publish.digest.gather``)."""
        from ..publish.digest import gather, week_period

        got = self._weeks.get(key)
        if got is None:
            if len(self._weeks) >= self.LIMIT:
                self._weeks.clear()
            got = self._weeks[key] = gather(self.store, week_period(key), self.profile,
                                            read=self.read)
        return got


def week_fragment(
    weeks: WeekData, key: str, lang: str, slugs: frozenset[str],
    site_url: str | None = None, *, in_site: bool = True,
) -> str:
    """The week's digest as safe HTML (its autoescaping template).

    ``in_site``: for the week's own page; PR links are relative links to the PR pages, a
    PR without a page in the site (a relation to a PR outside the KB) is its text, and there
    is no "read online" link (to the page itself). Otherwise links are absolute under
    ``site_url`` (or the PRs' GitHub URLs without one), as in a feed, and made fit for the
    offline site by :func:`site_safe`.
    """
    from ..publish.digest import render, render_section

    dg = weeks.of(key)
    # no nh3 pass: the template escapes every value and writes only its own markup (nh3
    # stripped the classes the site's style reads, at a quarter of a week page's cost)
    if in_site:  # the links made for the site as the template writes them, not rewritten
        return render_section(dg, lang, "html", site_pages=slugs)
    return site_safe(render(dg, lang, "fragment", site_url))


@dataclass
class DigestPlan:
    """The digest pages and what the next build's partial read needs to know of them."""

    pages: list[Page]
    weeks: dict[str, list[int]]  # week -> its PRs (week_prs)
    week_ends: dict[str, str]  # week -> a hash of the dates of its PRs' relation ends
    # what the week pages are made from besides each week's digest: the rows of the weeks
    # and the PRs with a page (week_fingerprint)
    made_from: tuple[list[dict[str, Any]], frozenset[str]]


def digest_pages(
    store: Store,
    data: SiteData,
    profile: Profile,
    langs: list[str],
    common: dict[str, Any],
    pr_hash: dict[int, str],
    fixed: dict[str, dict[str, Any]],
    whole: Any = None,
    fragments: FragmentCache | None = None,
) -> DigestPlan:
    """The digest pages of every language and their feeds.

    ``whole`` (a :class:`prkb.site.plan.Whole`): ``data`` is a partial read; the weeks,
    their relation ends and the PR slugs are the whole site's, from there (``pr_hash`` then
    holds every PR)."""
    # a full read holds every relation and PR: the weeks read theirs from it
    week_data = WeekData(store, profile, FromGather(data) if whole is None else None)
    if whole is None:
        weeks = week_prs(data, profile)
        times = relation_end_times(data, {i for ids in weeks.values() for i in ids})
        ends = {key: hashlib.sha256("".join(times.get(i, "") for i in ids).encode()).hexdigest()
                for key, ids in weeks.items()}
        slugs = frozenset(p["slug"] for p in data.prs)
    else:
        weeks, ends, slugs = whole.weeks, whole.week_ends, whole.slugs
    hashes = week_hashes(weeks, pr_hash, ends)
    pages: list[Page] = []
    rows = week_rows(weeks)
    h_rows = hashlib.sha256(repr(rows).encode()).hexdigest()
    for lang in langs:
        pages.append(Page(
            f"{lang}/digest/index.html", "site/digests.html", {**common, "h": h_rows},
            partial(dict, fixed[lang], weeks=rows, feed=feed_path(lang)),
            lang=lang,
        ))
    # a week's pages in every language next to each other: the renderer hands out pages in
    # runs, so one process reads the week's digest once for all its languages
    # (the feeds, made of the newest weeks, follow those weeks' pages for the same reason)
    newest = rows[:FEED_WEEKS]

    def feeds() -> list[Page]:
        return [
            Page(feed_path(lang), "", {**common, "h": [hashes[r["key"]] for r in newest]},
                 partial(_feed_context, week_data, newest, lang, common.get("base"),
                         [hashes[r["key"]] for r in newest], fragments),
                 lang=None, kind="bytes", when=_when(newest[-1]) if newest else "")
            for lang in langs
        ]

    for n, row in enumerate(rows):
        key = row["key"]
        for lang in langs:
            pages.append(week_page(week_data, fixed[lang], row, lang, slugs,
                                   {**common, "h": hashes[key]}))
        if n == len(newest) - 1:
            pages.extend(feeds())
    if not rows:
        pages.extend(feeds())
    return DigestPlan(pages, weeks, ends, (rows, slugs))


def week_rows(weeks: dict[str, list[int]]) -> list[dict[str, Any]]:
    """The row of each week of :func:`week_prs` (its key, first and last day and number of
    PRs), in the same order: what its page and the list of weeks show of it."""
    from ..publish.digest import week_period

    rows: list[dict[str, Any]] = []
    for key, ids in weeks.items():
        period = week_period(key)
        rows.append({"key": key, "first": period.first_day.isoformat(),
                     "last": period.last_day.isoformat(), "prs": len(ids)})
    return rows


def week_page(
    week_data: WeekData, fixed: dict[str, Any], row: dict[str, Any], lang: str,
    slugs: frozenset[str], inputs: Any,
) -> Page:
    """The page of the week of ``row`` (:func:`week_rows`) in ``lang``; ``slugs``: the PRs
    that have a page in the site (its PR links go to those)."""
    key = row["key"]
    return Page(f"{lang}/digest/{key}.html", "site/digest.html", inputs,
                partial(_week_context, week_data, fixed, row, lang, slugs),
                lang=lang, search=True, shard=digest_shard(key), when=_when(row))


def week_fingerprint(rows: list[dict[str, Any]], slugs: frozenset[str]) -> str:
    """A hash of everything a week page is made from besides the knowledge base's digest of
    that week (:func:`week_page`): the rows of every week and the PRs with a page."""
    text = repr((rows, sorted(slugs)))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _when(row: dict[str, Any]) -> str:
    """A week page's place among dated pages: the end of its last day (after the PRs of that
    day, newest first)."""
    return f"{row['last']}T99"


def _week_context(
    weeks: WeekData, fixed: dict[str, Any], row: dict[str, Any], lang: str,
    slugs: frozenset[str],
) -> dict[str, Any]:
    from ..publish.digest import digest_title, week_period

    title = digest_title(week_period(row["key"]), lang, weeks.profile)
    return {**fixed, "week": {**row, "title": title},
            "digest": week_fragment(weeks, row["key"], lang, slugs)}


def _feed_context(
    weeks: WeekData, rows: list[dict[str, Any]], lang: str, base_url: str | None,
    hashes: list[str], fragments: FragmentCache | None,
) -> dict[str, Any]:
    """The feed of the newest weeks; ``hashes``: each row's week hash, by which ``fragments``
    keeps its rendered entry (a week the previous build rendered is read, not rendered)."""
    from ..publish.digest import digest_title, week_period
    from .feed import digest_feed, feed_title

    def render(row: dict[str, Any]) -> str:
        return week_fragment(weeks, row["key"], lang, frozenset(), base_url, in_site=False)

    def html(row: dict[str, Any], week_hash: str) -> str:
        if fragments is None:
            return render(row)
        key = fragments.key("digest-feed-entry", lang, row["key"], week_hash)
        got = fragments.get(key)
        if got is None:
            got = render(row)
            fragments.put(key, got)
        return got

    entries = [
        {**row, "title": digest_title(week_period(row["key"]), lang, weeks.profile),
         "html": html(row, week_hash)}
        for row, week_hash in zip(rows, hashes, strict=True)
    ]
    return {"body": digest_feed(entries, lang=lang, base_url=base_url,
                                feed_path=feed_path(lang),
                                title=feed_title(weeks.profile, lang, digests=True))}
