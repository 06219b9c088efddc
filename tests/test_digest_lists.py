"""The digest's long lists written in Python (prkb/publish/digest_lists.py) say what the loops
of digest/section.j2 said (kept as tests/golden/digest_lists_before.j2), byte for byte, in text
and HTML, in both languages: the PRs merged, opened and closed, the risk highlights and the
declaration changes' rows."""

from __future__ import annotations

from typing import Any

import pytest
from markupsafe import Markup
from section_oracle import GOLDEN

from prkb.publish import digest
from prkb.publish.digest import Digest, LevelChange, PrItem, RiskItem

OLD = (GOLDEN / "digest_lists_before.j2").read_text()
HOSTILE = '<script>alert("x")</script> & %(title)s 100%\u202e \t two  spaces'


def _link(item: Any) -> str | None:
    """An address for most PRs (a hostile one too), none for some."""
    number = item.number
    if number is None or number % 5 == 0:
        return None
    return f'https://example.org/pr/{number}?a=1&b="2"' if number % 7 == 0 \
        else f"../pr/{number}.html"


def _crafted() -> Digest:
    """PRs with hostile or empty titles, a commit without a PR, risks with one tag or every
    highlighted one, declaration changes with and without their file named and values."""
    dg = Digest(digest.week_period("2026-W10"), digest.load_profile())
    items = [PrItem(n, f"pr:{n}" if n else "sha:" + "ab" * 20, title, "merged", None, None,
                    "2026-03-02")
             for n, title in [(1, HOSTILE), (5, ""), (7, "plain title"), (None, HOSTILE),
                              (14, "中文 标题 <b>")]]
    dg.merged, dg.opened, dg.closed = items, items[::-1], items[:1]
    dg.risks = [RiskItem(it, list(digest.HIGHLIGHT_TAGS[:k + 1])) for k, it in enumerate(items)]
    dg.level_changes = [
        LevelChange(cls, file, before, after, direction, it, before_text=before,
                    after_text=after, name_file=name_file)
        for (cls, file, before, after, direction, name_file), it in zip(
            [("FlashBuilder", "vllm/a.py", "NEVER", "ALWAYS", "raised", False),
             (HOSTILE, HOSTILE, None, "UNIFORM_BATCH", "added", True),
             ("X", "x.py", "ALWAYS", None, "removed", True),
             ("Y", "y.py", HOSTILE, "", "<b>unknown</b>", False)], items, strict=False)]
    return dg


def _digests(store: Any) -> list[Digest]:
    weeks = [digest.gather(store, digest.week_period(k)) for k in digest.digest_weeks(store)]
    assert sum(len(w.merged) + len(w.opened) for w in weeks) > 20
    assert sum(len(w.risks) for w in weeks) > 5 and sum(len(w.level_changes) for w in weeks) > 5
    return [*weeks, _crafted(), Digest(digest.week_period("2026-W11"), digest.load_profile())]


@pytest.mark.parametrize("html", [True, False])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lists_are_what_the_template_wrote(bundled: Any, lang: str, html: bool) -> None:
    env = digest._env(lang, html)
    lists = env.globals["lists"]
    before = env.from_string(OLD)

    def risk_labels(codes: list[str]) -> list[str]:
        return [digest.risk_label(c, lang) for c in codes]

    def direction(code: str) -> str:
        return digest.direction_label(code, lang)

    said = 0
    for dg in _digests(bundled):
        for items in (dg.merged, dg.opened, dg.closed):
            got = lists.prs(items, _link)
            assert str(got) == before.render(part="prs", items=items, link=_link)
            assert isinstance(got, Markup) == html
            said += len(items)
        got = lists.risks(dg.risks, _link, risk_labels)
        assert str(got) == before.render(part="risks", dg=dg, link=_link,
                                         risk_labels=risk_labels)
        assert isinstance(got, Markup) == html
        got = lists.change_rows(dg.level_changes, _link, direction)
        assert str(got) == before.render(part="changes", dg=dg, link=_link,
                                         direction=direction)
        said += len(dg.risks) + len(dg.level_changes)
    assert said > 50


def test_a_week_page_lists_each_pr_once(bundled: Any) -> None:
    """Through the section's template: each list holds an item per PR, in both formats."""
    for key in digest.digest_weeks(bundled):
        dg = digest.gather(bundled, digest.week_period(key))
        if not (dg.merged and dg.risks):
            continue
        html = digest.render_section(dg, "en", "html")
        merged = html.split("<h2>Merged</h2>", 1)[1].split("</ul>", 1)[0]
        assert merged.count("<li>") == len(dg.merged)
        text = digest.render_section(dg, "en", "text")
        for it in dg.merged:
            assert f"• {it.label} " in text
        return
    pytest.fail("no week of the bundled data has a merged PR with a risk highlight")
