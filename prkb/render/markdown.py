"""Safe Markdown: untrusted text made inert for Markdown output, Markdown turned into safe HTML.

``to_html`` renders with markdown-it-py's ``js-default`` preset (raw HTML off, link
validation on: no ``javascript:``, ``vbscript:``, ``file:`` or ``data:`` links) and then
cleans the result with nh3 against a strict allow-list (no scripts, no event handlers, no
``style`` attributes, only http/https/mailto URLs, comments dropped).

``md_escape``/``md_code``/``md_fence`` make untrusted text safe *inside* Markdown that prkb
writes; ``plain`` makes it safe for plain text (e-mail, terminals).
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

# Bidirectional embedding/override/isolate controls and marks: dropped from untrusted text so
# it cannot reorder what a reader sees around it ("Trojan Source").
_BIDI = dict.fromkeys(
    [0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)], None
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# any character clean_text removes or changes (a control, "\r", a bidi control)
_UNCLEAN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(f"\\u{c:04x}" for c in _BIDI) + "]"
)

ALLOWED_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li",
    "blockquote", "pre", "code", "em", "strong", "del", "s", "table", "thead", "tbody",
    "tr", "th", "td", "img", "section", "span",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
    "section": {"lang"},
    "span": {"lang"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def clean_text(text: str | None) -> str:
    """Text without control characters (except newline and tab) and without bidi controls."""
    if not text:
        return ""
    if text.isascii() and text.isprintable():  # nothing to remove: most text, at no cost
        return text
    if _UNCLEAN.search(text) is None:  # nothing to remove from text in another script either
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text.translate(_BIDI))


def one_line(text: str | None, limit: int | None = None) -> str:
    """``clean_text`` on one line (whitespace runs collapsed), cut to ``limit`` characters."""
    s = " ".join(clean_text(text).split())
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 1)].rstrip() + "…"
    return s


# Backslash escapes (CommonMark): a reader of the Markdown sees the character itself, not an
# entity such as ``&lt;``; ``\<`` starts no HTML tag or autolink, ``\&`` no entity.
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~<>&])")
# What would start a block if it began a line: ATX heading, list item, quote, setext line or
# thematic break made of "=" or "-" only.
_LINE_START = re.compile(
    r"^(\s*)(?:(#{1,6}|[-+*])(?=\s|$)|(>)|(=+|-+)(?=\s*$)|(\d{1,9})([.)])(?=\s|$))"
)


def _escape_start(s: str) -> str:
    def fix(m: re.Match[str]) -> str:
        lead = m.group(1)
        if m.group(5):  # ordered list marker: escape the delimiter, not the digits
            return f"{lead}{m.group(5)}\\{m.group(6)}"
        return lead + "\\" + (m.group(2) or m.group(3) or m.group(4))

    return _LINE_START.sub(fix, s, count=1)
_CODE_SPAN = re.compile(r"(`+)([^`].*?)\1(?!`)")


def _escape(s: str) -> str:
    return _INLINE_SPECIAL.sub(r"\\\1", s)


def md_escape(text: str | None) -> str:
    """Untrusted text as inert inline Markdown: one line, specials escaped, no raw HTML."""
    return _escape_start(_escape(one_line(text)))


def split_code_spans(s: str) -> list[tuple[str, bool]]:
    """A line cut into its runs of text (``False``) and the contents of its inline code spans
    (``True``, stripped), in order: for re-emitting each kind safely in another form."""
    parts: list[tuple[str, bool]] = []
    pos = 0
    for m in _CODE_SPAN.finditer(s):
        parts.append((s[pos : m.start()], False))
        parts.append((m.group(2).strip(), True))
        pos = m.end()
    parts.append((s[pos:], False))
    return parts


def md_inline(text: str | None) -> str:
    """Like ``md_escape`` but keeps the text's own inline code spans (re-emitted safely)."""
    parts = split_code_spans(one_line(text))
    return _escape_start("".join(md_code(p) if code else _escape(p) for p, code in parts))


def md_code(text: str | None) -> str:
    """Untrusted text as one inline code span (a fence longer than any backtick run)."""
    s = one_line(text)
    if not s:
        return ""
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def md_fence(text: str | None, info: str = "") -> str:
    """Untrusted text as a fenced code block whose fence no line of the text can close."""
    body = clean_text(text).rstrip("\n")
    run = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * max(3, run + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def md_link(url: str | None, text: str | None = None) -> str:
    """A link only for http(s) URLs; anything else is shown as inert code."""
    u = one_line(url)
    if re.match(r"^https?://[^\s<>()\[\]`]+$", u):
        return f"[{md_escape(text or u)}]({u})" if text else f"<{u}>"
    return md_code(u) if u else ""


def plain(text: str | None, limit: int | None = None) -> str:
    """Untrusted text for plain-text output: one line, no control or bidi characters."""
    return one_line(text, limit)


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})


def to_html(text: str) -> str:
    """Markdown to HTML, safe for any input: markdown-it-py (no raw HTML) then nh3."""
    rendered = _md().render(clean_text(text))
    return sanitize_html(rendered)


def sanitize_html(html: str) -> str:
    """HTML from outside through nh3's strict allow-list."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
    )
