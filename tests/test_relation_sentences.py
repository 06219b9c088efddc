"""Every relation type, in both directions and both languages, is one sentence that reads the
right way round: in the report (Markdown and text), the site's PR page and the digest; and a
relation inferred from lineage or a heuristic says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prkb.graph.relations import RELATION_TYPES
from prkb.profile import load_profile
from prkb.publish import digest as dg
from prkb.render.report import render_report
from prkb.site.report_page import report_html
from prkb.store import Store
from tests.report_helpers import add, record

PROFILE = load_profile()
ME = 500

# (type, direction) -> (English, Chinese); N stands for the other PR
SENTENCES = {
    ("fixes-regression-from", "out"): ("This PR fixes a regression from #N",
                                       "本 PR 修复了 #N 引入的问题"),
    ("fixes-regression-from", "in"): ("#N fixes a regression from this PR",
                                      "#N 修复了本 PR 引入的问题"),
    ("attempts-fix-of", "out"): ("This PR tried to fix a regression from #N",
                                 "本 PR 曾尝试修复 #N 引入的问题"),
    ("attempts-fix-of", "in"): ("#N tried to fix a regression from this PR",
                                "#N 曾尝试修复本 PR 引入的问题"),
    ("follow-up-of", "out"): ("This PR follows up #N", "本 PR 是 #N 的后续工作"),
    ("follow-up-of", "in"): ("#N follows up this PR", "#N 是本 PR 的后续工作"),
    ("modifies-declaration-of", "out"): ("This PR modifies a declaration last set by #N",
                                         "本 PR 修改了 #N 设定的声明"),
    ("modifies-declaration-of", "in"): ("#N modifies a declaration last set by this PR",
                                        "#N 修改了本 PR 设定的声明"),
    ("depends-on", "out"): ("This PR depends on #N", "本 PR 依赖 #N"),
    ("depends-on", "in"): ("#N depends on this PR", "#N 依赖本 PR"),
    ("supersedes", "out"): ("This PR supersedes #N", "本 PR 取代了 #N"),
    ("supersedes", "in"): ("#N supersedes this PR", "#N 取代了本 PR"),
    ("alternative-to", "out"): ("This PR is an alternative to #N", "本 PR 是 #N 的替代方案"),
    ("alternative-to", "in"): ("#N is an alternative to this PR", "#N 是本 PR 的替代方案"),
    ("reverts", "out"): ("This PR reverts #N", "本 PR 回滚了 #N"),
    ("reverts", "in"): ("#N reverts this PR", "#N 回滚了本 PR"),
    ("mentions", "out"): ("This PR mentions #N", "本 PR 提及 #N"),
    ("mentions", "in"): ("#N mentions this PR", "#N 提及本 PR"),
}
# the digest names both PRs: (English, Chinese) with S (source) and T (target)
BETWEEN = {
    "fixes-regression-from": ("#S fixes a regression from #T", "#S 修复了 #T 引入的问题"),
    "attempts-fix-of": ("#S tried to fix a regression from #T", "#S 曾尝试修复 #T 引入的问题"),
    "follow-up-of": ("#S follows up #T", "#S 是 #T 的后续工作"),
    "modifies-declaration-of": ("#S modifies a declaration last set by #T",
                                "#S 修改了 #T 设定的声明"),
    "depends-on": ("#S depends on #T", "#S 依赖 #T"),
    "supersedes": ("#S supersedes #T", "#S 取代了 #T"),
    "alternative-to": ("#S is an alternative to #T", "#S 是 #T 的替代方案"),
    "reverts": ("#S reverts #T", "#S 回滚了 #T"),
    "mentions": ("#S mentions #T", "#S 提及 #T"),
}
# (origin, confidence, inferred?)
MARKS = [("lineage", 0.8, True), ("timeline", 0.6, True), ("timeline", 1.0, False),
         ("code", 0.7, True), ("text", 0.5, False), ("curated", 1.0, False)]
INFERRED = {"en": "{} (inferred)", "zh": "{}（推测）"}


def test_the_tables_cover_every_type() -> None:
    assert {t for t, _ in SENTENCES} == set(RELATION_TYPES) == set(BETWEEN)


def expected(lang: str) -> set[str]:
    """Each relation of PR 500: its sentence with the other PR's number."""
    i = 0 if lang == "en" else 1
    out = set()
    for k, (_key, texts) in enumerate(sorted(SENTENCES.items())):
        out.add(texts[i].replace("#N", f"#{600 + k}"))
    for k, (_origin, _conf, inferred) in enumerate(MARKS):
        s = SENTENCES[("follow-up-of", "out")][i].replace("#N", f"#{800 + k}")
        out.add(INFERRED[lang].format(s) if inferred else s)
    return out


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("sentences") / "kb.sqlite")
    add(store, record(ME, title="[Core] the PR every relation is seen from"))
    rows = []
    for k, (rtype, direction) in enumerate(sorted(SENTENCES)):
        me, other = f"pr:{ME}", f"pr:{600 + k}"
        src, dst = (me, other) if direction == "out" else (other, me)
        rows.append((src, dst, rtype, f"evidence {k}", 0.9, "text"))
    for k, (origin, conf, _) in enumerate(MARKS):
        rows.append((f"pr:{ME}", f"pr:{800 + k}", "follow-up-of", f"lineage {k}", conf, origin))
    store.conn.executemany(
        "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
        "VALUES (?,?,?,?,?,?)", rows,
    )
    store.conn.commit()
    return store


def _related_lines(text: str, heading: str, bullet: str) -> list[str]:
    part = text.split(heading, 1)[1]
    return [ln[len(bullet):] for ln in part.splitlines() if ln.startswith(bullet)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["md", "txt"])
def test_report_says_each_relation_as_one_sentence(kb: Store, lang: str, fmt: str) -> None:
    text = render_report(kb, ME, lang=lang, fmt=fmt)
    heading = {"en": "Related PRs", "zh": "关联脉络"}[lang]
    lines = _related_lines(text, heading, "- " if fmt == "md" else "• ")
    # the sentence is what comes before " (confidence ...): <evidence>"
    got = {_sentence(ln) for ln in lines}
    assert got == expected(lang)


def _sentence(line: str) -> str:
    """The relation sentence of a line: before its confidence and origin, in either language."""
    return re.split(r" \(confidence |（置信度", line)[0]


def _visible(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_site_report_says_each_relation_as_one_sentence(kb: Store, lang: str) -> None:
    html = report_html(kb, {"ref": str(ME)}, lang, PROFILE)
    items = re.findall(r"<li>(.*?)</li>", html.split("<h2>", 8)[-1], re.S)
    got = {_sentence(_visible(i)) for i in items}
    assert expected(lang) <= got


def test_site_pr_page_says_each_relation_once_with_links(kb: Store, tmp_path: Path) -> None:
    from prkb.site.build import build_site

    out = tmp_path / "site"
    build_site(kb, out, PROFILE, langs=["en", "zh"], search=False)
    for lang in ("en", "zh"):
        page = (out / lang / "pr" / f"{ME}.html").read_text(encoding="utf-8")
        # one list of related PRs: the report's, with each relation's evidence
        heading = {"en": "Related PRs", "zh": "关联脉络"}[lang]
        assert page.count(f"<h2>{heading}</h2>") == 1
        assert 'class="box related"' not in page
        part = page.split(f"<h2>{heading}</h2>", 1)[1]
        items = re.findall(r"<li>(.*?)</li>", part.split("</div>", 1)[0], re.S)
        got = {_sentence(_visible(i)) for i in items}
        assert expected(lang) <= got
        # the others are not in the knowledge base: no page, so no link to one
        assert 'class="prlink"' not in part


def test_site_report_links_each_related_pr_that_has_a_page(tmp_path: Path) -> None:
    from prkb.site.build import build_site

    store = Store(tmp_path / "kb.sqlite")
    add(store, record(ME, title="[Core] the PR every relation is seen from"))
    add(store, record(601, title="[Core] fix 中文"))
    store.conn.executemany(
        "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
        "VALUES (?,?,?,?,?,?)",
        [("pr:601", f"pr:{ME}", "fixes-regression-from", "", 0.9, "text"),
         (f"pr:{ME}", "pr:999", "depends-on", "", 0.9, "text")],
    )
    store.conn.commit()
    out = tmp_path / "site"
    build_site(store, out, PROFILE, langs=["en", "zh"], search=False)
    for lang in ("en", "zh"):
        page = (out / lang / "pr" / f"{ME}.html").read_text(encoding="utf-8")
        links = re.findall(r'<a class="prlink" href="([^"]+)">([^<]*)</a>', page)
        # #601 has a page, a neighbour of this one; #999 is not in the knowledge base
        assert links == [("601.html", "#601")]
        assert (out / lang / "pr" / "601.html").is_file()
        # what a reader sees is the report's own sentence, spacing included
        text = render_report(store, ME, lang=lang, fmt="txt", profile=PROFILE)
        want = next(ln[2:] for ln in text.splitlines() if ln.startswith("• ") and "#601" in ln)
        line = next(i for i in re.findall(r"<li>(.*?)\n", page) if "601.html" in i)
        assert _visible(line).rstrip() == want.rstrip()
        # the page's graph link stays
        assert f"graph.html?focus={ME}" in page
    store.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_digest_says_each_relation_as_one_sentence(lang: str) -> None:
    i = 0 if lang == "en" else 1
    d = dg.Digest(dg.week_period("2026-W21"), PROFILE)
    want_text, want_html = set(), set()
    for k, rtype in enumerate(sorted(BETWEEN)):
        s, t = 100 + k, 200 + k
        inferred = k % 2 == 0
        d.relations.append(dg.RelationItem(f"pr:{s}", f"pr:{t}", rtype, [], s, t, inferred))
        sentence = BETWEEN[rtype][i].replace("#S", f"#{s}").replace("#T", f"#{t}")
        sentence = INFERRED[lang].format(sentence) if inferred else sentence
        want_text.add(sentence)
        want_html.add(sentence)
    text = dg.render_section(d, lang, "text")
    assert {ln[2:] for ln in text.splitlines() if ln.startswith("• #")} == want_text
    html = dg.render_section(d, lang, "fragment")
    assert {_visible(x) for x in re.findall(r"<li>(#\d.*?)</li>", html)} == want_html
