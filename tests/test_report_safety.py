"""Hostile PR text renders safely and within bounds in every format."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from prkb.render.markdown import md_code, md_escape, md_fence, md_inline, to_html
from prkb.render.report import render_report
from prkb.store import Store
from tests.report_helpers import add, decl_patch, probe, record

RTL = "\u202e\u2066\u200f"
HOSTILE = (
    "## Purpose\n\n<script>alert('body')</script> <img src=x onerror=alert(1)>\n"
    "[click](javascript:alert(2)) [data](data:text/html;base64,PHNjcmlwdD4=) "
    "<a href=\"javascript:alert(3)\">x</a> <!-- a comment --> " + RTL + "evil" + RTL + "\n"
    "`code` ``` fence\n\n"
    "## Test Plan\n\n```\npytest x\n```\n<style>body{display:none}</style>\n"
    + ("A" * 1_000_000)
)


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    store = Store(tmp_path_factory.mktemp("hostile") / "kb.sqlite")
    add(store, record(
        666,
        title="<script>alert('title')</script> [x](javascript:alert(4)) " + RTL,
        body=HOSTILE,
        user={"login": "<b onmouseover=alert(5)>mallory</b>"},
        html_url="javascript:alert(6)",
        files=[{"filename": "vllm/v1/attention/backends/<script>x.py", "status": "modified",
                "additions": 1, "deletions": 1,
                "patch": decl_patch("EvilMetadataBuilder", "NEVER", "ALWAYS")}],
        comments=[{"user": {"login": "eve"}, "created_at": "2026-03-01T09:00:00Z",
                   "body": "<script>alert(7)</script> see #1 " + "B" * 500_000 + "?"}],
    ))
    yield store
    store.close()


def _assert_safe_html(html: str) -> None:
    p = probe(html)
    assert "script" not in p.tags
    assert "iframe" not in p.tags and "object" not in p.tags
    assert not p.bad_attrs, p.bad_attrs
    assert all(not u.startswith(("javascript:", "data:", "vbscript:")) for u in p.urls), p.urls


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_html_report_is_inert(kb, lang):
    html = render_report(kb, 666, lang=lang, fmt="html")
    _assert_safe_html(html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html.replace("&#39;", "'")
    assert "<style>body{display" not in html
    assert len(html) < 80_000


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_markdown_report_is_inert_even_with_raw_html_on(kb, lang):
    md = render_report(kb, 666, lang=lang, fmt="md")
    # a permissive renderer (raw HTML allowed, as on many Markdown hosts) still yields no script
    html = MarkdownIt("commonmark", {"html": True}).render(md)
    _assert_safe_html(html)
    # prose never carries raw tags (a file name may, inside an inert code span)
    # (a "<" of the text is backslash-escaped: the reader sees it, no renderer opens a tag)
    assert not re.search(r"(?<!\\)<(?:script>alert|!--|img)", md)
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # only escaped, inert brackets
    assert not any(ch in md for ch in RTL)
    assert len(md) < 40_000  # 1.5 MB of input, capped excerpts


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_text_report_has_no_controls(kb, lang):
    txt = render_report(kb, 666, lang=lang, fmt="txt")
    assert not any(ch in txt for ch in RTL)
    assert not any(ord(c) < 32 and c not in "\n" for c in txt)
    assert len(txt) < 40_000
    assert "A" * 801 not in txt


def test_to_html_blocks_dangerous_markup():
    html = to_html(
        "<script>x</script> [a](javascript:alert(1)) [b](data:text/html,x) "
        "![i](javascript:x) [ok](https://example.org) <span onclick=x>s</span> "
        "<!-- c -->\n\n<div style='x'>d</div>"
    )
    _assert_safe_html(html)
    assert 'href="https://example.org"' in html
    assert "<!--" not in html and "<div" not in html and "<span" not in html


def test_escapers_keep_text_inert():
    r = MarkdownIt("commonmark", {"html": True})
    for evil in ("<img src=x onerror=1>", "[x](javascript:y)", "*a* _b_ `c` # d", "1. x",
                 "- y", "a\nb", "``` x"):
        for f in (md_escape, md_inline, md_code):
            _assert_safe_html(r.render(f(evil)))
            assert "\n" not in f(evil)
    fence = md_fence("```\n<script>x</script>\n````")
    out = r.render(fence + "\nafter")
    assert "<script>" not in out and "<p>after</p>" in out


@given(st.text(max_size=200))
@example("---")  # a thematic break (found by hypothesis)
@example(" -- ")
@example("===")
@settings(max_examples=300, deadline=None)
def test_md_escape_is_always_one_plain_paragraph(text):
    """Whatever the text, its escaped form renders as one paragraph of text: no markup."""
    out = md_escape(text)
    html = MarkdownIt("commonmark", {"html": True}).render(out)
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", html))
    assert tags <= {"p"}, (text, out, html)
