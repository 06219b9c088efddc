"""The per-format helpers of the report template: Markdown, plain text and HTML.

``templates/report/report.j2`` is written once; every piece of markup it needs comes from the
formatter ``markup`` it is rendered with (and the filters ``t``, ``q``, ``c``, ``block``, ``link``
taken from the same object). No formatter holds a word a reader sees: the sentences are
catalog messages in the template.

- ``t`` untrusted text on one line; ``q`` the same, keeping the text's own inline code spans;
  ``c`` inline code; ``block`` a code block; ``link`` an http(s) link, anything else inert.
- structure, as attributes: ``li``/``li2``/``li3`` (a list item at no, two or three spaces of
  indent in text), ``end`` (the end of a one-line item), ``ul``/``end_ul``, ``ol``/``end_ol``,
  ``end_li`` (the end of an item of several lines), ``p``/``end_p``, ``ip`` (a paragraph
  inside a numbered item), ``hr``, ``quote``/``end_quote``, ``ql``/``end_ql`` (a quoted
  line), ``qsep`` (between quoted lines), ``h1``..``h3``/``end_h1``..``end_h3`` (headings),
  ``b``/``end_b`` (strong text), ``noindex``/``end_noindex`` (around a part the site's
  search leaves out: what the report says of other PRs; nothing in Markdown or text);
- and methods ``num`` (an item of a numbered list), ``codes`` (values as code, with
  commas) and ``pr_link`` (another PR's reference as a link to its page: the site's HTML
  only; Markdown and text keep the reference as it is).

Markdown and text have no list or block tags: their ``ul``, ``end_li``... are :data:`DROP`,
a mark that the report's tidy step removes together with its line when nothing else is on
it (so structure of the HTML never adds a blank line to the text). The HTML formatter
escapes every value from the knowledge base, exactly as autoescape would (its structure is
:class:`markupsafe.Markup`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

import jinja2.ext
from markupsafe import Markup, escape

from .jinja_calls import LinkMarkup, as_markup, plain_call, safe_escape
from .markdown import (
    clean_text,
    md_code,
    md_escape,
    md_fence,
    md_inline,
    md_link,
    one_line,
    plain,
    split_code_spans,
)

DROP = "\x00"  # never in text from the knowledge base: every filter drops control characters
_HTTP = re.compile(r"^https?://[^\s<>()\[\]`\"']+$")


def related_ref(
    r: Mapping[str, Any], links: Mapping[str, str] | None,
    code: Callable[[str], Any], pr_link: Callable[[str, Any], Any],
    commit: Callable[[str], Any] | None = None,
) -> Any:
    """The other end of relation ``r`` (a related PR of the report's facts) as the report
    names it: ``#N`` for a PR, a commit as ``commit`` words its short SHA in the report's
    language ("commit SHA"; without ``commit``: None), else its graph node key as code;
    linked (``pr_link``) when ``links`` (graph node key -> the page of that PR) has it."""
    number = r.get("number")
    if number is not None:
        text: Any = f"#{number}"
        key = f"pr:{number}"
    else:
        key = str(r.get("other"))
        if key.startswith("commit:"):
            if commit is None:
                return None
            text = commit(key[7:19])
        else:
            text = code(key)
    if links:
        href = links.get(key)
        if href:
            return pr_link(href, text)
    return text


@plain_call
def _formatter_related_ref(
    fmt: Any, r: Mapping[str, Any], links: Mapping[str, str] | None,
) -> Any:
    """A formatter's ``related_ref`` (every formatter's, the same method): :func:`related_ref`
    with the formatter's ``code`` and ``pr_link``."""
    return related_ref(r, links, fmt.code, fmt.pr_link)


class _Lines:
    """What Markdown and text share: no tags, lists as bullets, structure lines dropped."""

    bullet = "-"
    ul = end_ul = ol = end_ol = end_li = quote = end_quote = noindex = end_noindex = DROP
    end = p = end_p = end_ql = end_h1 = end_h2 = end_h3 = b = end_b = ""
    ip = "   "

    def __init__(self) -> None:
        mark = self.bullet
        self.li, self.li2, self.li3 = f"{mark} ", f"  {mark} ", f"   {mark} "

    @plain_call
    def num(self, i: int) -> str:
        return f"{i}. "

    @plain_call
    def codes(self, items: Iterable[str | None], sep: str = ", ") -> str:
        code = self.code
        return sep.join([code(x) for x in items])

    @staticmethod
    @plain_call
    def pr_link(href: str, text: str) -> str:
        del href  # no page to link to outside the site
        return text

    related_ref = _formatter_related_ref

    def code(self, text: str | None) -> str:  # pragma: no cover - each format defines it
        raise NotImplementedError


class MarkdownFormat(_Lines):
    """Markdown: untrusted text made inert (``prkb report``, and the HTML of ``to_html``)."""

    hr = "---"
    ql = "> "
    h1, h2, h3 = "# ", "## ", "### "
    b = end_b = "**"
    qsep = ">"
    text = staticmethod(md_escape)
    inline = staticmethod(md_inline)
    code = staticmethod(md_code)
    block = staticmethod(md_fence)
    link = staticmethod(md_link)


def _text_code(text: str | None) -> str:
    """Inline code in plain text: between backticks, as plain-text mail writes it (a reader
    tells an identifier from the sentence around it)."""
    s = plain(text)
    return f"`{s}`" if s else ""


def _indent_block(text: str | None, info: str = "") -> str:
    del info
    return "\n".join(("    " + ln) if ln else "" for ln in clean_text(text).split("\n"))


class TextFormat(_Lines):
    """Plain text (e-mail): no markup; inline code between backticks, quoted lines after
    ``> ``, code blocks indented."""

    bullet = "•"
    hr = qsep = DROP
    ql = "> "
    h1 = h2 = h3 = ""
    text = inline = link = staticmethod(plain)
    code = staticmethod(_text_code)
    block = staticmethod(_indent_block)


_EMPTY = Markup("")


@lru_cache(maxsize=16384)
def _text(text: str) -> Markup:
    return escape(one_line(text))


def html_text(text: str | None) -> Markup:
    """Untrusted text on one line, escaped. Cached (a pure function of the text): a PR's
    title is said on its own pages and beside every relation to it, its author's login on
    many pages."""
    if type(text) is str:
        return _text(text)
    return escape(one_line(text))


@lru_cache(maxsize=16384)
def _code(text: str) -> Markup:
    s = one_line(text)
    return Markup(f"<code>{escape(s)}</code>") if s else _EMPTY


def html_code(text: str | None) -> Markup:
    """Untrusted text as inline code (nothing when empty). Cached (a pure function of the
    text): class names, file paths and level values repeat on many pages."""
    if type(text) is str:
        return _code(text)
    s = one_line(text)
    return Markup(f"<code>{escape(s)}</code>") if s else _EMPTY


def html_inline(text: str | None) -> Markup:
    """Untrusted text on one line, its own inline code spans kept as ``<code>``. Cached (a
    pure function of the text): the lines of a PR's description and the quotes of its
    relations are said in both languages' reports, a quote on both PRs' pages."""
    if type(text) is str:
        return _inline(text)
    return _inline_of(text)


@lru_cache(maxsize=16384)
def _inline(text: str) -> Markup:
    return _inline_of(text)


def _inline_of(text: str | None) -> Markup:
    s = one_line(text)
    if "`" not in s:
        return escape(s)
    return Markup("".join(html_code(p) if code else escape(p)
                          for p, code in split_code_spans(s)))


def html_block(text: str | None, info: str = "") -> Markup:
    """Untrusted text as a code block."""
    body = escape(clean_text(text).rstrip("\n"))
    cls = f' class="language-{escape(info)}"' if info else ""
    return Markup(f"<pre><code{cls}>{body}\n</code></pre>")


def web_url(url: str | None) -> str | None:
    """``url`` on one line when it is an http(s) URL a page may link to, else None (a URL
    from a record is untrusted: ``javascript:`` and the like are never an href)."""
    u = one_line(url)
    return u if _HTTP.match(u) else None


def html_link(url: str | None) -> Markup:
    """A link only for http(s) URLs; anything else is shown as inert code."""
    u = web_url(url)
    if u is not None:
        e = escape(u)
        return Markup(f'<a href="{e}">{e}</a>')
    return html_code(one_line(url))


class HtmlFormat:
    """HTML under autoescape: tags as Markup, every value escaped."""

    li = li2 = li3 = Markup("<li>")
    end = end_li = Markup("</li>")
    ul, end_ul = Markup("<ul>"), Markup("</ul>")
    ol, end_ol = Markup("<ol>"), Markup("</ol>")
    p = ip = ql = Markup("<p>")
    end_p = end_ql = Markup("</p>")
    hr = Markup("<hr>")
    h1, end_h1 = Markup("<h1>"), Markup("</h1>")
    h2, end_h2 = Markup("<h2>"), Markup("</h2>")
    h3, end_h3 = Markup("<h3>"), Markup("</h3>")
    b, end_b = Markup("<strong>"), Markup("</strong>")
    quote, end_quote = Markup("<blockquote>"), Markup("</blockquote>")
    # Pagefind skips the element: another PR's title on this PR's page is no reason to find
    # this page, nor to index it again when that title changes (prkb.site.search)
    noindex = Markup('<div class="aside" data-pagefind-ignore>')
    end_noindex = Markup("</div>")
    qsep = _EMPTY
    text = staticmethod(html_text)
    inline = staticmethod(html_inline)
    code = staticmethod(html_code)
    block = staticmethod(html_block)
    link = staticmethod(html_link)


    @staticmethod
    @plain_call
    def num(i: int) -> Markup:
        del i
        return Markup("<li>")

    @staticmethod
    @plain_call
    def codes(items: Iterable[str | None], sep: str = ", ") -> Markup:
        """Several values as inline code, separated by ``sep`` (the language's list
        separator: ``、`` in Chinese)."""
        # Markup items (html_code) joined as text: Markup's join would copy each one
        return as_markup(str.join(safe_escape(sep), [html_code(x) for x in items]))

    @staticmethod
    @plain_call
    def pr_link(href: str, text: str) -> Markup:
        """Another PR's reference (``text``, escaped unless already markup) as a link to its
        page, ``href`` relative to this page (the site gives it: never a URL from a text)."""
        shown = text.striptags() if isinstance(text, Markup) else str(text)
        return LinkMarkup.of(
            f'<a class="prlink" href="{safe_escape(href)}">{safe_escape(text)}</a>', shown)

    related_ref = _formatter_related_ref


FORMATTERS: dict[str, Any] = {"md": MarkdownFormat(), "txt": TextFormat(), "html": HtmlFormat()}


def filters_of(fmt: Any) -> dict[str, Any]:
    """The template filters of a formatter (``t``, ``q``, ``c``, ``block``, ``link``)."""
    return {"t": fmt.text, "q": fmt.inline, "c": fmt.code, "block": fmt.block,
            "link": fmt.link}


def drop_marks(line: str) -> str | None:
    """A line of Markdown or text without its structure marks; None when nothing is left of
    a line that had one (the line goes)."""
    if DROP not in line:
        return line
    rest = line.replace(DROP, "")
    return rest if rest.strip() else None


_CONSTANT = re.compile(r"\{\{ markup\.(\w+) \}\}")


class FormatConstants(jinja2.ext.Extension):
    """Writes the formatter's structure strings (``{{ markup.li }}``, ``{{ markup.end_ul }}``...)
    into the report template's source when it is compiled for a format, so they cost what
    literal text costs (the HTML of a PR page renders tens of them).

    The environment names its formatter in ``report_format`` (``Environment.extend``); an
    environment so made must keep its compiled templates apart from other formats' (the
    bytecode cache keys a template by its source before this step)."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        fmt = getattr(self.environment, "report_format", None)
        if fmt is None or "{{ markup." not in source:
            return source

        def constant(m: re.Match[str]) -> str:
            value = getattr(fmt, m.group(1))
            if not isinstance(value, str) or "{" in value or "}" in value:
                return m.group(0)  # a method or a flag: left to the template
            return str(value)

        return _CONSTANT.sub(constant, source)
