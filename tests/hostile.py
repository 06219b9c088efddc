"""ONE corpus of hostile strings, and the checks that prove an output kept them inert.

Every hardening test that pushes untrusted text into an output (terminal, Markdown, HTML
report, site, email, Atom feed, graph exports) takes its strings from ``HOSTILE`` and checks
the result with the helpers below, so a new payload added here is tried everywhere.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

ESC = "\x1b"
CSI8 = "\x9b"  # the 8-bit Control Sequence Introducer
RLO = "\u202e"

HOSTILE: tuple[str, ...] = (
    # script and markup injection
    "<script>alert('t1')</script>",
    "</title><script>alert('t2')</script>",
    '"><script>alert("t3")</script>',
    "<img src=x onerror=alert('t4')>",
    "<body onload=alert('t5')>",
    "<a href=\"javascript:alert('t6')\">click</a>",
    "[md link](javascript:alert('t7'))",
    "[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgndDgnKTwvc2NyaXB0Pg==)",
    "![img](javascript:alert('t9'))",
    "<iframe src=\"data:text/html,<script>alert('t10')</script>\"></iframe>",
    "<svg onload=alert('t11')><circle r=1 /></svg>",
    "<svg><script>alert('t12')</script></svg>",
    "<svg><a xlink:href=\"javascript:alert('t13')\"><text>x</text></a></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('t14')>",
    "<math href=\"javascript:alert('t15')\">m</math>",
    "<!-- <script>alert('t16')</script> -->",
    "--><script>alert('t17')</script><!--",
    "<style>*{display:none}</style><div style=\"background:url(javascript:alert('t18'))\">",
    "<object data=\"javascript:alert('t19')\"></object><embed src=x>",
    "<form action=javascript:alert('t20')><button>go</button></form>",
    "<input autofocus onfocus=alert('t21')>",
    "<details open ontoggle=alert('t22')>",
    "jav&#x09;ascript:alert('t23')",
    "<scr<script>ipt>alert('t24')</scr</script>ipt>",
    "<base href=\"javascript:alert('t25')//\">",
    "<meta http-equiv=refresh content=\"0;url=javascript:alert('t26')\">",
    # template syntax (Jinja2 and friends) must print as text, never evaluate
    "{{ 7*7 }} {{ config }} {{ ''.__class__.__mro__ }}",
    "{% for x in range(3) %}loop{% endfor %} {# c #}",
    "${7*7} #{7*7} <%= 7*7 %>",
    # terminal escape sequences
    "\x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared",
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]0;window title\x07 bell",
    "\x9b31m csi8 \x9bH",
    "\x1bP+q696e646578\x1b\\ dcs",
    "back\rspace\x08\x08 and \x00 nul \x7f del",
    # right-to-left overrides and other invisible controls
    "\u202eevil.py\u202c txt.exe",
    "admin\u2066\u2069 \u2067isolate\u2069 \u200f\u200e mark",
    "zero\u200bwidth \ufeffbom",
    # Markdown structure breakers
    "# heading\n\n- list\n\n> quote\n\n```\nfence\n```\n| a | b |\n|---|---|",
    "`` ` `` ``` fence ``` ~~~ tilde",
    # XML breakers (Atom, GraphML, DOT, Mermaid)
    "]]><evil/><![CDATA[",
    "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>&e;",
    "\"; digraph { evil } //",
    "a\"]) --> evil[\"x",
    # non-ASCII text that must survive (not hostile, but must not be mangled away)
    "修复 TritonMLA 推测解码 ✓",
)

# the hostile strings that are plain file-name-like and short (file names, author names)
SHORT: tuple[str, ...] = tuple(s for s in HOSTILE if len(s) <= 80 and "\n" not in s)

_TERM_BAD = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_problems(text: str) -> list[str]:
    """Raw control characters (ESC, CSI, C1, BEL, CR...) and bidi overrides in ``text``."""
    return sorted({f"U+{ord(m.group(0)):04X}" for m in _TERM_BAD.finditer(text)})


_ACTIVE = ("script", "iframe", "object", "embed", "base", "meta", "frame")
_URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "data", "poster")


class _Probe(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        csp = tag == "meta" and all(
            n != "http-equiv" or (v or "").lower() == "content-security-policy" for n, v in attrs
        )
        if tag in _ACTIVE and not csp:
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            v = re.sub(r"[\x00-\x20]", "", (value or "")).lower()
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in _URL_ATTRS and v.startswith(("javascript:", "data:", "vbscript:")):
                self.problems.append(f"<{tag} {name}={v[:40]}>")

    handle_startendtag = handle_starttag


def html_problems(html: str, *, allow_scripts: tuple[str, ...] = ()) -> list[str]:
    """Executable HTML: script/iframe/object/... elements, on* attributes, javascript: or
    data: URLs. ``allow_scripts``: the site's own ``<script src=...>`` files are fine."""
    for src in allow_scripts:
        html = re.sub(rf"<script[^>]*\bsrc=\"[^\"]*{re.escape(src)}\"[^>]*></script>", "", html)
    p = _Probe()
    p.feed(html)
    p.close()
    return p.problems
