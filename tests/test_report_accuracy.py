"""What reports say must be true: times with an unknown zone, the audit as the one judge of
speculative-decoding readiness, paraphrased records labelled as such, portable code, big PRs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from prkb.collect.record import normalize_record
from prkb.profile import load_profile
from prkb.publish import digest as dg
from prkb.publish.site_report import report_html
from prkb.render.markdown import to_html
from prkb.render.report import render_report
from prkb.store import Store
from tests.report_helpers import add, record

PROFILE = load_profile()


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible(html: str) -> str:
    """The words a reader sees, without whitespace (the two renderers lay them out apart)."""
    p = _Text()
    p.feed(html)
    p.close()
    return re.sub(r"\s+", "", "".join(p.parts))


def same_on_site(store: Store, ref: int, lang: str) -> str:
    """The site's report of ``ref`` says what the Markdown report says; returns the latter."""
    md = render_report(store, ref, lang=lang, fmt="md", profile=PROFILE)
    assert visible(report_html(store, {"ref": str(ref)}, lang, PROFILE)) == visible(to_html(md))
    return md


def line_of(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.lstrip("-• ").startswith(start))


# --- times whose zone is unknown ----------------------------------------------------------


def test_normalize_keeps_naive_times_naive_and_days_as_days() -> None:
    rec = normalize_record(record(1, source="curated", merged_at="2026-07-09T10:09:00",
                                  created_at="2026-06-30", updated_at="2026-07-09 10:09",
                                  closed_at="2026-07-09T10:09:00+08:00"))
    assert rec["merged_at"] == "2026-07-09T10:09:00"  # not made UTC: its zone is unknown
    assert rec["created_at"] == "2026-06-30"  # a day stays a day, not midnight UTC
    assert rec["updated_at"] == "2026-07-09T10:09:00"
    assert rec["closed_at"] == "2026-07-09T02:09:00Z"  # an aware time is stored in UTC


def test_a_time_with_an_unknown_zone_is_never_printed_as_utc(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    add(store, record(60001, source="curated", merged_at="2026-07-09T10:09:00",
                      created_at="2026-06-30"))
    add(store, record(60002, merged_at="2026-07-09T10:09:00Z"))
    add(store, record(60003, source="curated", merged_at="2026-07-09"))
    en = same_on_site(store, 60001, "en")
    zh = same_on_site(store, 60001, "zh")
    assert line_of(en, "Merged at") == (
        "- Merged at: Jul 9, 2026, 10:09:00\u202fAM (time zone unknown)"
    )
    assert line_of(zh, "合并时间") == "- 合并时间: 2026年7月9日 10:09:00（时区未知）"
    assert "UTC" not in en and "UTC" not in zh
    # an aware time keeps printing in UTC, a bare day as a day
    assert line_of(same_on_site(store, 60002, "en"), "Merged at").endswith("10:09:00\u202fAM UTC")
    assert line_of(same_on_site(store, 60003, "en"), "Merged at") == "- Merged at: July 9, 2026"
    # the digest lists the PR on the day as written, and says no time of day at all
    week = dg.gather(store, dg.period_for(since="2026-07-06", until="2026-07-12"), PROFILE)
    assert {(it.number, it.when) for it in week.merged} >= {(60001, "2026-07-09")}
    store.close()


def test_dates_of_the_catalogs() -> None:
    from prkb.render.i18n import format_datetime_for

    assert format_datetime_for("2026-07-09T10:09:00", "en").endswith("(time zone unknown)")
    assert format_datetime_for("2026-07-09T10:09:00", "zh").endswith("（时区未知）")
    assert "time zone" not in format_datetime_for("2026-07-09T10:09:00Z", "en")
