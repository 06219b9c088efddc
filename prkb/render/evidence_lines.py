"""A relation's evidence worded once per build and wording, not once per page that shows it.

The same relation's evidence (``report/_evidence.j2`` ``lines``) is said on the pages of both
of its PRs and in the digest of its week, in each language. What the macro makes of it
depends only on:

- the evidence itself: its stored text (:class:`prkb.evidence.Evidence`, equal text is equal
  evidence), and the item markup (``li``, ``end``) the caller passes;
- the wording of the environment that says it: its language (the ``label`` filter's
  glossary), its autoescaping, its ``c`` and ``q`` filters and ``codes`` (the report
  formatter's), what its catalog makes of every message of ``report/_evidence.j2`` (a report
  about a commit, or a profile's audit rule, can word a message its own way:
  :class:`.i18n.SubjectCatalog`), and the labels of ``report/_labels.j2`` it reads.

Environments whose wording is the same share one table, so a site build renders a relation's
evidence about once per language and worker process, whichever page asks first. The table
holds the macro's text by that key; a build empties it when it starts
(:func:`clear`: nothing is kept from one build to the next), and it is bounded.
Evidence without its stored text (a plain list) is worded every time, as before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import extract_from_ast

from .jinja_calls import FastMacro

EVIDENCE = "report/_evidence.j2"
LIMIT = 65536  # entries of one table before it is emptied

# wording -> (evidence text, li, end) -> what the macro made (its text, before Markup)
_TABLES: dict[tuple[Any, ...], dict[tuple[str, str, str], str]] = {}


def clear() -> None:
    """Forget every worded evidence (a build starts with none)."""
    for table in _TABLES.values():
        table.clear()  # in place: the macros made so far hold their table


def wording(env: jinja2.Environment, lang: str, gettext: Callable[[str], str]) -> tuple[Any, ...]:
    """What the evidence macro's words depend on in ``env`` besides the evidence (see the
    module): equal for environments that word every evidence alike. ``gettext``: the
    environment catalog's lookup of a message (its text, no variables put in)."""
    auto = env.autoescape
    escapes = bool(auto(EVIDENCE) if callable(auto) else auto)
    messages, label_names = _reads(env)
    labels = env.globals.get("labels")
    return (lang, escapes, env.filters.get("c"), env.filters.get("q"), env.globals.get("codes"),
            tuple(gettext(m) for m in messages),
            tuple(repr(getattr(labels, name, None)) for name in label_names))


def _reads(env: jinja2.Environment) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The messages of the evidence template, and the labels (``labels.NAME`` of
    ``report/_labels.j2``) it reads."""
    assert env.loader is not None
    return _reads_of(env.loader.get_source(env, EVIDENCE)[0])


@lru_cache(maxsize=4)
def _reads_of(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # parsed once per process by a bare environment (the environments that render it add
    # only extensions that do not change its messages; parsing costs ~10 ms)
    ast = jinja2.Environment(extensions=["jinja2.ext.i18n"]).parse(source)
    messages = tuple(m for _line, _func, message in extract_from_ast(ast)
                     for m in (message if isinstance(message, tuple) else (message,))
                     if isinstance(m, str))
    names = tuple(sorted({
        node.attr for node in ast.find_all(nodes.Getattr)
        if isinstance(node.node, nodes.Name) and node.node.name == "labels"
    }))
    return messages, names


def cached_module(module: Any, key: tuple[Any, ...],
                  writer: Callable[[Any, Any, Any], str] | None = None) -> Any:
    """A copy of the evidence template's module whose ``lines`` keeps what it made, by the
    evidence's stored text, in the table of wording ``key``. ``lines`` stays the macro
    (:class:`~.jinja_calls.FastMacro`): a template calls it as before, and a call that is
    not the plain positional one goes through Jinja as before, uncached. ``writer``: what
    words the evidence in the macro's place (``render.evidence_items.EvidenceItems``, the
    same text); None: the macro's own function."""
    lines = getattr(module, "lines", None)
    if type(lines) is not FastMacro or lines.direct is None:
        return module
    made = writer or lines.direct
    table = _TABLES.setdefault(key, {})

    def direct(items: Any, li: Any = "", end: Any = "") -> str:
        text = getattr(items, "text", None)
        if text is None or not isinstance(li, str) or not isinstance(end, str):
            return made(items, li, end)
        k = (text, li, end)
        got = table.get(k)
        if got is None:
            if len(table) >= LIMIT:
                table.clear()
            got = table[k] = made(items, li, end)
        return got

    macro = copy.copy(lines)
    macro.direct = direct
    out = copy.copy(module)
    out.lines = macro
    return out
