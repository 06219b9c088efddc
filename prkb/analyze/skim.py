"""A source with the bodies of the functions the audit never reads blanked out, to parse less.

Most of a large attention backend is method bodies (``forward``, kernels' wrappers) that name
none of the profile's words. ``skim(source, words, methods)`` replaces the body of each such
function with an empty tuple expression over the same lines, so the parsed tree keeps every
class, base, class-body statement, method name and line number, and ``ast.parse`` has far less
to build. A body is left whole when there is any doubt:

- the function is one of ``methods`` (the dynamic-support methods, the backend methods the
  audit reads), or it sits inside a function that is kept;
- its lines name any of ``words`` (the threshold helper calls, whose arguments are read in
  any method) or hold a ``class`` statement; an ``__init__`` is kept when it names a
  threshold attribute or calls a parent's ``__init__`` (``guarded``);
- its first statement (after a docstring) is a ``return`` (a one-line getter is a fact);
- its lines hold an odd number of triple quotes of either kind (a string that crosses the
  body's edge), or its last line ends with a backslash;
- its signature cannot be told with bracket counting, or the body has fewer than 3 lines.

The caller parses the full source when the skimmed one does not parse. A body with a line
less indented than the ``def`` inside brackets ends the region early; such a source fails to
parse when skimmed and is read whole.
"""

from __future__ import annotations

import re

from .declscan import depth_change, indent_of

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
_CLASS = re.compile(r"^[ \t]*class[ \t]", re.MULTILINE)
_MIN_LINES = 3


def _signature_end(lines: list[str], i: int) -> int | None:
    """The line of ``def``'s closing colon (brackets balanced, the line ends with ``:``)."""
    depth = 0
    for j in range(i, min(len(lines), i + 200)):
        depth += depth_change(lines[j])
        code = lines[j].split("#", 1)[0].rstrip()
        if depth < 0:
            return None
        if depth == 0 and not code.endswith("\\"):
            return j if code.endswith(":") else None
    return None


def _first_statement(lines: list[str], start: int, end: int) -> str:
    """The first line of the body's first statement after a leading docstring ('' if none)."""
    j = start
    while j <= end and not lines[j].strip():
        j += 1
    head = lines[j].strip() if j <= end else ""
    m = re.match(r"^[rRuUbB]{0,2}(\"\"\"|''')", head)
    if m:
        quote = m.group(1)
        rest = head[m.end():]
        if quote not in rest:  # the docstring goes on: skip to its closing line
            j += 1
            while j <= end and quote not in lines[j]:
                j += 1
        j += 1
        while j <= end and not lines[j].strip():
            j += 1
        head = lines[j].strip() if j <= end else ""
    return head


def skim(
    source: str, words: set[str], methods: set[str], guarded: dict[str, set[str]] | None = None
) -> str:
    """``source`` with the bodies of unread functions blanked (same lines, same numbers).

    ``guarded`` maps a function name to more words that keep its body (``__init__``: the
    threshold attributes, and ``__init__`` itself for a call of the parent's)."""
    guarded = guarded or {}
    lines = source.split("\n")
    n = len(lines)
    out = list(lines)
    changed = False
    i = 0
    while i < n:
        m = _DEF.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, name = len(m.group(1).expandtabs()), m.group(2)
        sig = _signature_end(lines, i)
        if sig is None:
            i += 1
            continue
        # the body: every following line that is blank or indented deeper than the def
        last = sig
        j = sig + 1
        while j < n:
            line = lines[j]
            if line.strip():
                if indent_of(line.expandtabs()) <= indent:
                    break
                if not line.lstrip().startswith("#"):
                    last = j
            j += 1
        if last == sig:  # a one-line def (``def f(): ...``): nothing to blank
            i = sig + 1
            continue
        if name in methods:
            i = last + 1  # kept whole, nested functions included
            continue
        first = sig + 1
        while not lines[first].strip():
            first += 1
        body = "\n".join(lines[first:last + 1])
        if (
            last - first + 1 < _MIN_LINES
            or any(w in body for w in words)
            or any(w in body for w in guarded.get(name, ()))
            or _CLASS.search(body)
            or body.count('"""') % 2
            or body.count("'''") % 2
            or lines[last].rstrip().endswith("\\")
            or re.match(r"return\b", _first_statement(lines, first, last))
        ):
            i = sig + 1  # look inside: a nested function may still be blanked
            continue
        pad = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        out[first] = pad + "("
        for k in range(first + 1, last):
            out[k] = ""
        out[last] = pad + ")"
        changed = True
        i = last + 1
    return "\n".join(out) if changed else source
