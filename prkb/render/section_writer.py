"""What the report's section parts written in Python share (:mod:`.related_items`,
:mod:`.risks_items`, :mod:`.review_items`, :mod:`.key_files_items`): the environment's
wording and escaping, read once when the environment is made, so that each writes what its
template wrote.

A writer is a global of a report environment (``_``, filters ``t``, ``q``, ``c``, globals
``markup`` and ``labels`` set), called from the section's template as a plain call
(:class:`~.jinja_calls.PlainCallContext`). It joins plain text: each value as ``{{ value }}``
writes it (:attr:`SectionWriter.shown`: escaped under autoescape, else ``str``), and the
whole as :meth:`SectionWriter.made` (Markup under autoescape, so the template writes it as it
is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jinja2
from jinja2.nodes import EvalContext

from .jinja_calls import as_markup, safe_escape


class SectionWriter:
    """The environment's gettext (``say``), escaping (``shown``), filters, formatter
    (``markup``) and label tables (``labels``), for a section part written in Python."""

    _plain_call = True  # called from templates directly (jinja_calls.PlainCallContext)
    # the template whose text the writer writes: its autoescape, where the environment
    # decides it by the template's name (the digest's text environment)
    TEMPLATE: str | None = None

    def __init__(self, env: jinja2.Environment) -> None:
        auto = env.autoescape
        self.auto = bool(auto(self.TEMPLATE) if callable(auto) else auto)
        self.shown: Callable[[Any], str] = safe_escape if self.auto else str  # {{ value }}
        self.say: Any = env.globals["_"]
        filters = env.filters
        self.code, self.text, self.quoted = filters["c"], filters["t"], filters["q"]
        self.label = filters["label"]  # a code's glossary label: label(code, section)
        self.codes: Any = env.globals["codes"]  # several values as code, with a separator
        self.getitem = env.getitem
        # what a template hands the filters and macros that take it (join, replace, a
        # macro's __call__): its autoescape
        self.ctx = EvalContext(env, self.TEMPLATE)
        self.markup: Any = env.globals["markup"]
        labels: Any = env.globals["labels"]
        self.labels = labels
        self.colon = str(self.shown(labels.colon))
        # the list separator as the filters and ``codes`` take it, and as a template wrote it
        self.lsep = labels.lsep
        self.sep = str(self.shown(labels.lsep))

    @staticmethod
    def evidence_lines(env: jinja2.Environment) -> Callable[..., str]:
        """The environment's evidence lines (``sentences.evidence.lines``, worded once per
        build: ``render.evidence_lines``) as a plain call: ``(items, li, end)`` -> text."""
        macro = env.globals["sentences"]["evidence"].lines  # type: ignore[index]
        direct: Callable[..., str] | None = getattr(macro, "direct", None)
        if direct is None:
            raise TypeError("the evidence macro cannot be called directly")
        return direct

    def structure(self, *names: str) -> list[str]:
        """The formatter's structure strings (``li``, ``end_ul``...) as the template wrote
        them."""
        return [str(self.shown(getattr(self.markup, name))) for name in names]

    def punctuation(self, *names: str) -> list[str]:
        """The language's punctuation labels (``lp``, ``rq``...) as the template wrote them."""
        return [str(self.shown(getattr(self.labels, name))) for name in names]

    def after_tag(self, name: str, rest: str) -> str:
        """The structure string ``name`` and the text ``rest`` (starting with a newline) a
        template wrote after a block tag (``{% endif %}{{ markup.end }}``+newline...): when
        the formatter's string is empty (Markdown and text), ``trim_blocks`` took that first
        newline too."""
        written = self.structure(name)[0]
        return f"{written}{rest}" if written else rest[1:]

    def made(self, text: str) -> str:
        """What the writer returns: Markup under autoescape (written as it is), else text."""
        return as_markup(text) if self.auto else text
