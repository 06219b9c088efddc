"""The PR page's report (HTML from report_context) says what ``prkb report`` says, safely."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from sitekb import make_kb

from prkb.profile import load_profile
from prkb.render.formats import html_block, html_inline, html_link
from prkb.render.markdown import sanitize_html, to_html
from prkb.render.report import render_report
from prkb.site.report_page import report_html
from prkb.store import Store


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _parse(html: str) -> _Text:
    p = _Text()
    p.feed(html)
    p.close()
    return p


def visible(html: str) -> str:
    """The text a reader sees, without any whitespace (layout differs, words must not)."""
    return re.sub(r"\s+", "", "".join(_parse(html).parts))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return make_kb(tmp_path_factory.mktemp("site-report") / "kb.sqlite")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_site_report_has_the_same_text_as_the_markdown_report(kb: Store, lang: str) -> None:
    profile = load_profile(None)
    refs = [r[0] for r in kb.conn.execute("SELECT ref FROM prs ORDER BY ref")]
    assert len(refs) >= 7
    for ref in refs:
        md_html = to_html(render_report(kb, ref, lang=lang, fmt="md", profile=profile))
        ours = report_html(kb, {"ref": ref}, lang, profile)
        assert visible(ours) == visible(md_html), ref
        # the same section headings, in the same order
        heads = re.findall(r"<h[12]>(.*?)</h[12]>", ours)
        assert heads == re.findall(r"<h[12]>(.*?)</h[12]>", md_html), ref


def test_site_report_of_hostile_pr_is_inert(kb: Store) -> None:
    profile = load_profile(None)
    for lang in ("en", "zh"):
        out = report_html(kb, {"ref": "90001"}, lang, profile)
        tags = set(_parse(out).tags)
        assert tags <= {"h1", "h2", "h3", "ul", "ol", "li", "p", "strong", "code", "pre",
                        "blockquote", "hr", "a", "div"}, tags
        # the one div: what the site's search leaves out (the related PRs)
        assert re.findall(r"<div[^>]*>", out) == ['<div class="aside" data-pagefind-ignore>']
        assert "<script" not in out and "<img" not in out and "<svg" not in out
        for tag in re.findall(r"<[A-Za-z][^<>]*>", out):  # text has no raw "<": real tags
            assert not re.search(r"\son[a-z]+\s*=", tag, re.IGNORECASE), tag
        assert "javascript:" not in " ".join(re.findall(r'href="([^"]*)"', out))
        # what nh3 would keep of it is what it already is (nothing to strip)
        assert visible(sanitize_html(out)) == visible(out)
        assert "&lt;script&gt;" in out  # the hostile title is shown, as text


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("a <b> `x<y>` c", "a &lt;b&gt; <code>x&lt;y&gt;</code> c"),
        ("no code & more", "no code &amp; more"),
        ("``a`b`` end", "<code>a`b</code> end"),
    ],
)
def test_inline_filter_escapes_and_keeps_code_spans(text: str, want: str) -> None:
    assert str(html_inline(text)) == want


def test_link_and_block_filters() -> None:
    assert str(html_link("https://e.org/x")) == '<a href="https://e.org/x">https://e.org/x</a>'
    assert str(html_link("javascript:alert(1)")) == "<code>javascript:alert(1)</code>"
    assert str(html_link('https://e.org/"onx=1')).startswith("<code>")
    block = str(html_block("x = '<s>'\n\u202eevil", "diff"))
    assert block == '<pre><code class="language-diff">x = &#39;&lt;s&gt;&#39;\nevil\n</code></pre>'


def test_site_pr_page_carries_the_report(kb: Store, tmp_path: Path) -> None:
    from prkb.site.build import build_site

    out = tmp_path / "site"
    build_site(kb, out, load_profile(None), langs=["en"], search=False)
    page = (out / "en" / "pr" / "90001.html").read_text()
    report: Any = page.split('<section class="report"', 1)[1]
    ours = report_html(kb, {"ref": "90001"}, "en", load_profile(None))
    assert visible(ours) in visible(report)
