"""The report on each PR page: the HTML of ``templates/report/report.j2`` (the one report
template, rendered with the HTML formatter of :mod:`prkb.render.formats`), placed by the
site into its page layout.

A PR's language-independent facts are read once for its pages in every language: a
:class:`ReportPages` made for one site build keeps the facts of the last few PRs it rendered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from ..profile import Profile
from ..render.report import ReportFacts, localize, render_context, report_facts
from ..render.report import warm_up as warm_up_report
from ..store import Store
from .page import Page

_RECENT = 2  # the pages of one PR in each language are rendered one after the other


class ReportPages:
    """The PR reports of one site build (make one per build, and per worker connection).

    An entry serves only the very store and gathered PR dict it was made for:
    every build gathers new dicts, so facts never outlive the build (and the knowledge-base
    state) they were read in.
    """

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._recent: list[tuple[Any, dict[str, Any], ReportFacts]] = []
        # the stored rows and facts read ahead for the PR pages of one run, by PR row id,
        # with the store they were read from and the titles of the PRs they relate to
        # (prefetch)
        self._ahead: tuple[Any, dict[int, tuple[sqlite3.Row, dict[str, Any]]],
                           dict[int, str | None]] = (None, {}, {})

    def __call__(self, store: Store, pr: dict[str, Any], lang: str,
                 links: Mapping[str, str]) -> str:
        """:meth:`html` (a ``page.ReportHtml``)."""
        return self.html(store, pr, lang, links)

    def prefetch(self, store: Store, pages: list[Page]) -> None:
        """Read the stored rows and facts of the PRs of ``pages`` (their ``item``), and the
        titles of the PRs they relate to, in a few queries, for :meth:`facts`; what the
        previous run read ahead is dropped."""
        prs = [p.item for p in pages if p.template == "site/pr.html" and p.item is not None]
        if not prs:
            self._ahead = (None, {}, {})
            return
        rows = list(store.pr_rows_by_id([int(pr["id"]) for pr in prs]).values())
        facts = store.facts_from_rows(rows)
        others = {r["other"] for f in facts for r in f["relations"] if isinstance(r["other"], int)}
        titles = store.pr_titles(others) if others else {}
        self._ahead = (store, {int(row["id"]): (row, f)
                               for row, f in zip(rows, facts, strict=True)}, titles)

    def facts(self, store: Store, pr: dict[str, Any]) -> ReportFacts:
        """The language-independent report facts of ``pr`` (a dict with its ``ref``)."""
        for st, key, facts in self._recent:
            if key is pr and st is store:
                return facts
        ahead_store, ahead, titles = self._ahead
        read = ahead.pop(pr["id"], None) if ahead_store is store and "id" in pr else None
        facts = report_facts(store, pr["ref"], self.profile, read,
                             titles if read is not None else None)
        self._recent.insert(0, (store, pr, facts))
        del self._recent[_RECENT:]
        return facts

    def html(self, store: Store, pr: dict[str, Any], lang: str,
             links: Mapping[str, str] | None = None) -> str:
        """The PR's report (the facts and sentences of ``prkb report``) as safe HTML.
        ``links``: the pages of other PRs, by graph node key (``pr:N``, ``commit:SHA``), as
        links relative to this PR's page; the report links each PR it names that has one."""
        ctx = localize(self.facts(store, pr), lang, self.profile)
        if links:
            ctx["pr_links"] = links
        return render_context(ctx, "html")


def report_html(store: Store, pr: dict[str, Any], lang: str, profile: Profile,
                links: Mapping[str, str] | None = None) -> str:
    """One PR's report as safe HTML (nothing kept for the next call)."""
    return ReportPages(profile).html(store, pr, lang, links)


def warm_up(lang: str, rules: str = "") -> None:
    """Make the report environment and load its template (before worker processes fork)."""
    warm_up_report(lang, "html", rules)
