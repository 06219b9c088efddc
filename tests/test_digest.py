"""The weekly digest: week arithmetic, what it gathers from a real KB, text/HTML, .eml, CLI."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

import pytest
from digestkb import EN_TITLE, WEEK, ZH_TITLE, _rec, digest_kb
from hypothesis import given, settings
from hypothesis import strategies as st

from prkb.cli import main
from prkb.errors import InputError
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.publish import digest as dg
from prkb.store import Store

# --- weeks ------------------------------------------------------------------------------------


def test_iso_week_bounds_and_default_week() -> None:
    p = dg.week_period("2026-W21")
    assert p.start == datetime(2026, 5, 18, tzinfo=UTC)
    assert p.end == datetime(2026, 5, 25, tzinfo=UTC)
    assert (str(p.first_day), str(p.last_day)) == ("2026-05-18", "2026-05-24")
    # ISO week 1 of 2027 starts on Monday 2027-01-04; 2026 has a week 53.
    assert dg.week_period("2027-W01").start == datetime(2027, 1, 4, tzinfo=UTC)
    assert dg.week_period("2026-W53").first_day.isoformat() == "2026-12-28"
    # Default: the last complete week, also across a year boundary.
    assert dg.last_complete_week(datetime(2026, 5, 25, 0, 0, 1, tzinfo=UTC)).key == WEEK
    assert dg.last_complete_week(datetime(2026, 5, 24, 23, 59, tzinfo=UTC)).key == "2026-W20"
    assert dg.last_complete_week(datetime(2027, 1, 5, tzinfo=UTC)).key == "2026-W53"
    assert dg.period_for(now=datetime(2026, 5, 27, tzinfo=UTC)).key == WEEK


def test_since_until_and_bad_periods() -> None:
    p = dg.period_for(since="2026-05-01", until="2026-05-07")
    assert p.key == "2026-05-01..2026-05-07"
    assert p.end == datetime(2026, 5, 8, tzinfo=UTC)
    assert dg.period_from_key(p.key) == p
    for kw in (
        {"week": "2025-W53"}, {"week": "2026-21"}, {"since": "2026-05-01"},
        {"since": "2026-05-07", "until": "2026-05-01"}, {"since": "May 1", "until": "2026-05-07"},
        {"week": WEEK, "since": "2026-05-01", "until": "2026-05-02"},
    ):
        with pytest.raises(InputError):
            dg.period_for(**kw)


def test_parse_time_treats_naive_as_utc() -> None:
    assert dg.parse_time("2026-05-18T00:00:00") == datetime(2026, 5, 18, tzinfo=UTC)
    assert dg.parse_time("2026-05-18T02:00:00+02:00") == datetime(2026, 5, 18, tzinfo=UTC)
    assert dg.parse_time("2026-05-18T00:00:00Z") == datetime(2026, 5, 18, tzinfo=UTC)
    assert dg.parse_time(None) is None and dg.parse_time("garbage") is None


# --- gathering --------------------------------------------------------------------------------


def test_gather_picks_the_weeks_events_only(digest_db: Path) -> None:
    with Store(digest_db) as store:
        d = dg.gather(store, dg.week_period(WEEK))
        assert [i.number for i in d.merged] == [101]
        assert [i.number for i in d.opened] == [102]
        assert [i.number for i in d.closed] == [103]
        assert [(c.class_name, c.before, c.after, c.pr.number) for c in d.level_changes] == [
            ("TritonMLAMetadataBuilder", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", 101)
        ]
        assert [(f.rule, f.pr.number) for f in d.findings] == [
            ("cg-uniform-without-spec-decode", 101)
        ]
        # a record not collected from a clone: its effective state is not known, and said so
        assert (d.effective, [i.number for i in d.effective_unknown]) == ([], [101])
        assert "Not read from the code (no clone was read for them): #101" in dg.render_section(
            d, "en", "text")
        risks = {r.pr.number: r.codes for r in d.risks}
        assert risks[101] == ["core-path", "missing-tests"]
        assert [(r.source, r.type, r.target) for r in d.relations] == [
            ("pr:101", "fixes-regression-from", "pr:90")
        ]
        assert not d.empty
        assert dg.gather(store, dg.week_period("2026-W17")).empty
        assert dg.gather(store, dg.week_period("2026-W22")).merged[0].number == 104
        assert dg.digest_weeks(store) == ["2026-W18", "2026-W19", "2026-W20", WEEK, "2026-W22"]
        # The week still running is left out of the site's list by default.
        in_w22 = datetime(2026, 5, 27, tzinfo=UTC)
        assert dg.digest_weeks(store, now=in_w22)[-1] == WEEK
        assert dg.digest_weeks(store, now=in_w22, complete_only=False)[-1] == "2026-W22"
        entries = dg.digest_entries(store, "en", site_url="https://s.example", now=in_w22)
        assert [e.key for e in entries] == [WEEK, "2026-W20", "2026-W19", "2026-W18"]
        assert entries[0].title.endswith("Weekly digest 2026-W21")
        assert entries[0].counts["merged"] == 1
        assert entries[0].end == datetime(2026, 5, 25, tzinfo=UTC)
        assert 'href="https://s.example/en/pr/101.html"' in entries[0].html


def test_text_is_plain_and_html_is_escaped_with_inlined_css(digest_db: Path) -> None:
    site = "https://kb.example.org/prkb"
    with Store(digest_db) as store:
        text = dg.render_digest(store, WEEK, "both", "text", site_url=site)
        html = dg.render_digest(store, WEEK, "both", "html", site_url=site)
        frag = dg.render_digest(store, WEEK, "en", "fragment")
    # Plain style: "•" bullets, no Markdown markup, no control characters; Chinese first.
    assert text.index(ZH_TITLE) < text.index("Weekly digest 2026-W21")
    # the change and relation sentences are the report's (report/_changes.j2, _evidence.j2)
    assert ("• #101: `TritonMLAMetadataBuilder`: `_cudagraph_support` lowered from "
            "`UNIFORM_BATCH` to `UNIFORM_SINGLE_TOKEN_DECODE` (correctness fix)") in text
    assert ("• #101：`TritonMLAMetadataBuilder`：`_cudagraph_support` 由 `UNIFORM_BATCH` 降低为 "
            "`UNIFORM_SINGLE_TOKEN_DECODE`（正确性修复）") in text
    assert "\x1b" not in text and "**" not in text and "##" not in text
    assert "#101 修复了 #90 引入的问题" in text and "#101 fixes a regression from #90" in text
    # each relation with its evidence, a line per sentence, as the report words it
    assert ("• #101 fixes a regression from #90:\n"
            "  – Description of #101: “a regression from #90”\n") in text
    assert "• #101 修复了 #90 引入的问题：\n  – #101 的描述：“a regression from #90”\n" in text
    assert f"{site}/zh/pr/101.html" in text and f"{site}/en/pr/101.html" in text
    assert "核心路径变更" in text and "missing test coverage" in text
    assert "声明 UNIFORM_BATCH 但未启用推测解码重排" in text
    assert "#104" not in text and "#105" not in text
    # HTML: untrusted title escaped, no script, CSS inlined (no <style> left), table present.
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in html
    assert "<style" not in html and 'style="' in html
    assert "<table" in html and "<td" in html
    assert "#101 的描述：“a regression from #90”</li>\n</ul></li>" in html
    assert f'href="{site}/zh/pr/101.html"' in html and f'href="{site}/en/pr/90.html"' in html
    assert f'href="{site}/zh/digest/{WEEK}.html"' in html
    # Without a site the PR's own URL is the link; the fragment is a section, not a document.
    assert 'href="https://github.com/vllm-project/vllm/pull/101"' in frag
    assert frag.lstrip().startswith("<section") and "<html" not in frag


def test_cli_preview_eml_and_empty_week(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = digest_kb(tmp_path)
    monkeypatch.delenv("PRKB_MAIL_FROM", raising=False)
    assert main(["--db", str(db), "digest", "--week", WEEK, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(ZH_TITLE) and "\x1b" not in out

    eml = tmp_path / "d.eml"
    assert main(["--db", str(db), "digest", "--week", WEEK, "-o", str(eml), "--to",
                 "team@example.org", "--from", "bot@kb.example.org",
                 "--site-url", "https://s.example"]) == 0
    msg = message_from_bytes(eml.read_bytes(), policy=default_policy)
    assert str(msg["Subject"]) == f"{ZH_TITLE} / {EN_TITLE}"  # --lang both: both
    assert msg.get_content_type() == "multipart/alternative"
    assert msg["Message-ID"].endswith("@kb.example.org>") and msg["Date"]
    assert msg["List-Id"] == "prkb digest <vllm-cudagraph.prkb.local>"
    assert msg["List-Unsubscribe"] == (
        "<mailto:bot@kb.example.org?subject=unsubscribe%20prkb%20digest%20"
        "%3Cvllm-cudagraph.prkb.local%3E>")
    plain = msg.get_body(("plain",))
    html = msg.get_body(("html",))
    assert plain is not None and html is not None
    assert plain.get_content_charset() == "utf-8" and "级别变更" in plain.get_content()
    assert "https://s.example/en/pr/101.html" in html.get_content()
    assert not list(tmp_path.glob(".d.eml.*"))  # the temp file was renamed, not left

    # An empty week says so and writes nothing, unless --send-empty.
    empty = tmp_path / "empty.eml"
    assert main(["--db", str(db), "digest", "--week", "2026-W17", "-o", str(empty)]) == 0
    assert "nothing changed" in capsys.readouterr().out and not empty.exists()
    assert main(["--db", str(db), "digest", "--week", "2026-W17", "-o", str(empty),
                 "--send-empty", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["empty"] is True
    body = message_from_bytes(empty.read_bytes(), policy=default_policy).get_body(("plain",))
    assert body is not None and "本期没有变化" in body.get_content()


def test_cli_rejects_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = digest_kb(tmp_path)
    assert main(["--db", str(db), "digest", "--week", "2026-21"]) == 2
    assert "2026-W21" in capsys.readouterr().err
    assert main(["--db", str(db), "digest", "--week", WEEK, "--send", "--to", "a@example.org",
                 "-o", str(tmp_path / "x.eml")]) == 2
    assert main(["--db", str(db), "digest", "--week", WEEK, "--send", "--to",
                 "a@example.org\r\nBcc: x@evil.example", "--smtp-host", "127.0.0.1",
                 "--from", "bot@example.org"]) == 2
    assert "not an email address" in capsys.readouterr().err


def test_every_digest_message_has_a_chinese_translation() -> None:
    from babel.messages.extract import extract_from_file

    from prkb.paths import templates_dir

    msgids = set()
    for path in sorted((templates_dir() / "digest").glob("*.j2")):
        for _line, msgid, _comments, _ctx in extract_from_file(
            "jinja2", str(path), options={"extensions": "jinja2.ext.i18n"}
        ):
            msgids.add(msgid if isinstance(msgid, str) else msgid[0])
    assert "Weekly digest" in msgids and "Effective level changes" in msgids
    zh, en = dg._env("zh"), dg._env("en")
    render = "{{ _(m, **kw) }}"
    for msgid in msgids:
        kw = {name: 1 for name in re.findall(r"%\((\w+)\)", msgid)}
        english = msgid % kw
        assert zh.from_string(render).render(m=msgid, kw=kw) != english, msgid
        assert en.from_string(render).render(m=msgid, kw=kw) == english, msgid


@given(
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31)),
    st.sampled_from(["Z", "+00:00", "+05:30", "-08:00", ""]),
)
@settings(max_examples=400, deadline=None)
def test_pr_weeks_fast_path_equals_parsing_each_stamp(when: datetime, zone: str) -> None:
    """Stored UTC stamps are read by their day (cached); every stamp gives the week that
    parsing it in full gives."""
    text = when.strftime("%Y-%m-%dT%H:%M:%S") + zone
    pr = {"state": "merged", "created_at": text, "merged_at": text, "closed_at": None,
          "source": "github"}
    t = dg.parse_time(text)
    assert t is not None
    assert dg.pr_weeks(pr) == {dg.week_key(t)}
    assert dg.pr_weeks({**pr, "state": "closed", "merged_at": None, "closed_at": "junk"}) \
        == {dg.week_key(t)}



def test_a_git_only_record_is_never_listed_as_opened(tmp_path: Path) -> None:
    """A record made from git history alone knows when its commit was authored, not when its
    PR was opened: it is listed in the week it merged and never under "Opened"."""
    profile = load_profile()
    rec = {
        "number": 4242, "title": "[Perf] from git only", "state": "merged",
        "created_at": "2026-05-11T09:00:00Z",  # the author date, a week before the merge
        "merged_at": "2026-05-19T09:00:00Z", "closed_at": "2026-05-19T09:00:00Z",
        "merge_commit_sha": "a" * 40, "source": "git", "files": [],
    }
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, rec, profile)
        ingest(st, {**rec, "number": 4243, "merge_commit_sha": "b" * 40, "source": "github"},
               profile)
        w20 = dg.gather(st, dg.week_period("2026-W20"), profile)
        w21 = dg.gather(st, dg.week_period("2026-W21"), profile)
        weeks = dg.digest_weeks(st, profile, now=datetime(2026, 7, 1, tzinfo=UTC))
    assert [it.number for it in w20.opened] == [4243]  # the GitHub record's opening only
    assert [it.number for it in w21.merged] == [4242, 4243]
    assert weeks == ["2026-W20", "2026-W21"]  # W20 only for #4243's opening


def test_a_relation_is_news_in_the_week_of_its_later_end(tmp_path: Path) -> None:
    """#201 merged in 2026-W20; #202, merged in 2026-W28, fixes a regression from it. The
    relation is not in W20's digest (nobody knew it then) but is in W28's."""
    db = tmp_path / "kb.sqlite"
    profile = load_profile()
    with Store(db) as store:
        ingest(store, _rec(201, title="[Perf] raise the level", created_at="2026-05-10T00:00:00Z",
                           merged_at="2026-05-12T00:00:00Z"), profile)
        ingest(store, _rec(202, title="[Bugfix] lower it again",
                           body="Fixes a regression from #201.",
                           created_at="2026-07-06T00:00:00Z",
                           merged_at="2026-07-08T00:00:00Z"), profile)
        from prkb.graph import build_relations

        build_relations(store, profile)
        early = dg.gather(store, dg.week_period("2026-W20"), profile)
        late = dg.gather(store, dg.week_period("2026-W28"), profile)
    assert [it.number for it in early.merged] == [201]
    assert early.relations == []
    assert [(r.source, r.type, r.target) for r in late.relations] == [
        ("pr:202", "fixes-regression-from", "pr:201")]


def test_level_changes_name_the_file_of_a_class_two_files_hold_and_a_bool_by_spelling(
    tmp_path: Path,
) -> None:
    """A builder is its file and class: when the week's level changes name one class in two
    files (a V0 and a V1 builder), each says its file, in text and HTML; a bool value in the
    HTML table (which has no attribute column) is its spelling and value, not a level."""
    profile = load_profile()
    v0, v1 = "vllm/attention/backends/x_attn.py", "vllm/v1/attention/backends/x_attn.py"

    def rec(number: int, file: str, attr: str, before: str, after: str, direction: str) -> dict:
        return {"number": number, "title": f"change {number}", "state": "merged",
                "created_at": "2026-05-19T09:00:00Z", "merged_at": "2026-05-19T09:00:00Z",
                "merge_commit_sha": f"{number:040x}", "source": "github",
                "files": [{"filename": file, "status": "modified"}],
                "prkb": {"symbol_changes": [{"file": file, "class": "XMetadataBuilder",
                                             "attr": attr, "before": before, "after": after,
                                             "direction": direction}]}}

    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, rec(7001, v0, "full_cudagraph_supported", "False", "True", "raised"),
               profile)
        ingest(st, rec(7002, v1, "_cudagraph_support", "UNIFORM_BATCH",
                       "UNIFORM_SINGLE_TOKEN_DECODE", "lowered"), profile)
        text = dg.render_digest(st, WEEK, "en", "text", profile=profile)
        html = dg.render_digest(st, WEEK, "en", "fragment", profile=profile)
    assert f"• #7001: in `{v0}`: `XMetadataBuilder`: `full_cudagraph_supported`" in text
    assert f"• #7002: in `{v1}`: `XMetadataBuilder`: `_cudagraph_support`" in text
    table = html.split('<table class="levels">', 1)[1].split("</table>", 1)[0]
    assert v0 in table and v1 in table
    cells = re.findall(r"<td>([^<]*)</td>", table)
    assert "full_cudagraph_supported = True" in cells and "True" not in cells, cells


def test_a_record_url_is_linked_only_when_it_is_http(tmp_path: Path) -> None:
    """Without a site URL the digest links each PR to its own URL: a record's URL is
    untrusted, and one that is not http(s) is never an href (email, site feeds)."""
    from prkb.site.build import build_site
    from tests.report_helpers import add, record

    store = Store(tmp_path / "kb.sqlite")
    for number, url in ((500, "javascript:alert(1)"), (501, "https://github.com/o/r/pull/501")):
        rec = record(number, title=f"change {number}")
        rec.update(html_url=url, state="merged", created_at="2026-05-18T09:00:00Z",
                   merged_at="2026-05-19T09:00:00Z")
        add(store, rec)
    d = dg.gather(store, dg.week_period(WEEK), load_profile())
    assert [it.number for it in d.merged] == [500, 501]
    for html in (dg.render(d, "both", "html"), dg.render(d, "both", "fragment")):
        assert "javascript:" not in html
        assert re.search(r'<a href="https://github\.com/o/r/pull/501"[^>]*>#501</a>', html)
        assert "#500" in html  # the label, as text
    build_site(store, tmp_path / "site", load_profile(), search=False)  # no --base-url
    for lang in ("en", "zh"):
        feed = (tmp_path / "site" / f"digest-{lang}.xml").read_text(encoding="utf-8")
        assert "https://github.com/o/r/pull/501" in feed and "javascript:" not in feed
    store.close()


def test_the_sites_week_page_links_the_prs_that_have_a_page(digest_db: Path) -> None:
    """On the site's own week page a PR with a page links to it relatively, a PR without one
    (#90: outside the knowledge base; #102: a page left out here) is its text, and there is
    no "read online" link to the page itself."""
    with Store(digest_db) as store:
        d = dg.gather(store, dg.week_period(WEEK))
    for lang in ("en", "zh"):
        page = dg.render_section(d, lang, "html", "https://ignored.example",
                                 site_pages=frozenset({"101", "103"}))
        assert set(re.findall(r'<a href="([^"]*)"', page)) == {"../pr/101.html",
                                                              "../pr/103.html"}
        assert "ignored.example" not in page and "github.com" not in page
        assert '<a href="../pr/101.html">#101</a>' in page
        # #90 and #102 are named, escaped, without a link
        assert re.search(r"(?<![\w>])#90\b", page) and "pr/90" not in page
        assert re.search(r"<li>#102\b", page) and "pr/102" not in page
        period = re.search(r'<p class="period">[^\n]*', page)
        assert period and period.group(0).endswith("</p>") and "<a" not in period.group(0)
        # the same digest without a site keeps its absolute links
        mailed = dg.render_section(d, lang, "html", "https://s.example")
        assert f'href="https://s.example/{lang}/pr/90.html"' in mailed
        assert f'href="https://s.example/{lang}/digest/{WEEK}.html"' in mailed
