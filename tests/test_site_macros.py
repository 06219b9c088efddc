"""The site's page helpers (site/macros.py) escape every value; its date filters are Babel's."""

from __future__ import annotations

import html
import re
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prkb.site.render import escaping_env

HOSTILE = st.one_of(
    st.sampled_from(['<script>alert("x")</script>', "a&b", "' onmouseover='x", "\u202edir",
                     "FULL_AND_PIECEWISE", "", "–"]),
    st.text(max_size=20),
)
MAYBE = st.one_of(st.none(), HOSTILE)


# the markup the helpers may make: these tags, attributes whose values hold no quote or angle
# bracket (every value from the knowledge base escaped)
_TAG = re.compile(r'</?(span|a|code)( (class|title|href)="[^"<>]*")*>')


@pytest.mark.parametrize("lang", ["zh", "en"])
@settings(max_examples=60, deadline=None)
@given(value=MAYBE, level=MAYBE, rank=st.one_of(st.none(), st.integers(0, 4)),
       dynamic=st.booleans(), label=HOSTILE, slug=MAYBE, state=HOSTILE,
       direction=st.sampled_from(["raised", "lowered", "added", "removed", "dynamic-added",
                                  "dynamic-changed", "<b>x</b>"]),
       level_text=MAYBE)
def test_site_helpers_escape_every_value(
    lang: str, value: str | None, level: str | None, rank: int | None, dynamic: bool,
    label: str, slug: str | None, state: str, direction: str, level_text: str | None,
) -> None:
    g = escaping_env(lang, "site/x.html").globals
    run = {"value": value, "level": level, "rank": rank, "dynamic": dynamic,
           "level_text": level_text}
    c = {"class": label, "before": value, "after": level, "direction": direction}
    outs = [g["level_badge"](run, {}), g["level_badge"](None, {}),
            g["pr_link"]("../", {"slug": slug, "label": label}), g["state_name"](state),
            g["change_line"](c)]
    for out in outs:
        for tag in re.findall(r"<[^>]*>", str(out)):
            assert _TAG.fullmatch(tag), tag
        assert "<script" not in str(out) and "<b>" not in str(out)
    # what the reader sees of a value is the value
    assert html.unescape(re.sub(r"<[^>]*>", "", str(outs[2]))) == label
    assert html.unescape(str(g["state_name"](state))) in (state, g["state_name"](state))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_site_date_filters_match_i18n(lang: str) -> None:
    from prkb.render.i18n import format_date_for, format_datetime_for

    env = escaping_env(lang, "site/x.html")
    values = [None, "", "nonsense", "2025-03-04", "2025-03-04T05:06:07Z",
              "2025-03-04T23:30:00-05:00", "2025-03-04 05:06:07", "2024-12-31T23:59:59+09:00"]
    for v in values:
        for fmt in ("long", "medium", "short"):
            assert env.filters["format_date"](v, fmt) == format_date_for(v, lang, fmt), v
            assert env.filters["format_datetime"](v, fmt) == format_datetime_for(v, lang, fmt)
        assert env.filters["format_date"](v) == format_date_for(v, lang)
        assert env.filters["format_datetime"](v) == format_datetime_for(v, lang)


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1)),
       st.sampled_from(["Z", "+00:00", "+09:00", "-05:30", ""]),
       st.sampled_from(["full", "long", "medium", "short"]))
@settings(max_examples=300, deadline=None)
def test_site_datetime_filter_matches_babel_for_any_time(when: datetime, zone: str,
                                                         fmt: str) -> None:
    """The cached date and time parts join to what Babel's format_datetime gives."""
    from prkb.render.i18n import format_datetime_for

    text = when.isoformat() + zone
    for lang in ("zh", "en"):
        env = escaping_env(lang, "site/x.html")
        assert env.filters["format_datetime"](text, fmt) == format_datetime_for(text, lang, fmt)
