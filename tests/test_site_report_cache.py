"""The PR report's facts are read once for both languages, and never served stale."""

from __future__ import annotations

from typing import Any

import pytest

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.render.report import localize, report_context, report_facts
from prkb.site import report_page as site_report
from prkb.site.report_page import ReportPages
from prkb.store import Store


def test_localized_facts_are_the_report_context(site_kb: Store) -> None:
    profile = load_profile(None)
    refs = [r[0] for r in site_kb.conn.execute("SELECT ref FROM prs ORDER BY ref")]
    for ref in refs:
        base = report_facts(site_kb, ref, profile)
        for lang in ("zh", "en"):
            assert localize(base, lang, profile) == report_context(site_kb, ref, lang,
                                                                        profile=profile)
        # localize leaves the shared facts as they were
        assert base == report_facts(site_kb, ref, profile)


def test_facts_are_reused_only_for_the_same_pr_dict(
    site_kb: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = load_profile(None)
    calls: list[str] = []
    real = site_report.report_facts

    def counting(store: Any, ref: str, prof: Any, read: Any = None, titles: Any = None) -> Any:
        calls.append(ref)
        return real(store, ref, prof, read, titles)

    monkeypatch.setattr(site_report, "report_facts", counting)
    pages = ReportPages(profile)
    ref = site_kb.conn.execute("SELECT ref FROM prs ORDER BY ref LIMIT 1").fetchone()[0]
    pr = {"ref": ref}
    zh = pages.html(site_kb, pr, "zh")
    en = pages.html(site_kb, pr, "en")
    assert calls == [ref]  # both languages from one read
    assert zh != en
    # the knowledge base changes; the next build gathers a new dict for the PR
    facts = report_facts(site_kb, ref, profile).header.pr
    record = site_kb.raw_record(site_kb.pr_row(facts["ref"], facts["repo"]))
    record["title"] = "A new title <b>now</b>"
    record["updated_at"] = "2031-01-01T00:00:00Z"
    ingest(site_kb, record, profile)
    again = pages.html(site_kb, {"ref": ref}, "en")
    assert len(calls) == 2
    assert "A new title &lt;b&gt;now&lt;/b&gt;" in again
    assert "A new title" not in en
    # a new ReportPages (the next build) reads even the old dict again
    pages = ReportPages(profile)
    assert "A new title" in pages.html(site_kb, pr, "en")
    assert len(calls) == 3
