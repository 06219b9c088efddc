"""Progress bars on stderr (rich), silent with ``--quiet`` and plain when stderr is no TTY."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported only when a bar or a table is drawn (fast start-up)
    from rich.console import Console
    from rich.progress import Progress

_console: Console | None = None


def console() -> Console:
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=True, highlight=False, soft_wrap=True)
    return _console


class Bar:
    """A task on a progress bar; ``advance`` and ``note`` are no-ops when quiet."""

    def __init__(self, progress: Progress | None, task: Any) -> None:
        self._p = progress
        self._t = task

    def advance(self, n: int = 1) -> None:
        if self._p is not None:
            self._p.advance(self._t, n)

    def total(self, n: int | None) -> None:
        if self._p is not None:
            self._p.update(self._t, total=n)

    def note(self, text: str) -> None:
        if self._p is not None:
            self._p.update(self._t, info=text)


@contextmanager
def bar(label: str, total: int | None = None, *, quiet: bool = False) -> Iterator[Bar]:
    if quiet or not sys.stderr.isatty():
        yield Bar(None, None)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console(),
        transient=True,
    ) as p:
        task = p.add_task(label, total=total, info="")
        yield Bar(p, task)


def warn(msg: str, *, quiet: bool = False) -> None:
    """One warning line on stderr (shown even when quiet: warnings are not progress)."""
    del quiet
    print(f"warning: {safe_term(msg)}", file=sys.stderr, flush=True)


# bidi embeddings, overrides, isolates and marks: they reorder what a reader sees
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


# what a terminal must not get raw: C0 controls but newline and tab, DEL, C1, bidi controls
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def _visible(m: re.Match[str]) -> str:
    o = ord(m.group())
    return f"\\u{o:04x}" if o > 0xFF else f"\\x{o:02x}"


def safe_term(text: str) -> str:
    """Text with control characters made visible, so no escape sequence reaches a terminal
    (``\\x1b``, ``\\u202e``); newlines and tabs are kept."""
    return _CONTROLS.sub(_visible, text)


def json_term(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with C1 and bidi controls as ``\\u`` escapes.

    ``json.dumps`` escapes only C0 controls; U+0080..U+009F (CSI is U+009B) and bidi
    overrides would reach a terminal raw. Such characters occur only inside JSON strings,
    where the escape denotes the same value, so the output parses to the same data.
    """
    return _JSON_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_JSON_CONTROLS = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}]")



PIPE_CELL = 60  # the widest a truncated column gets when no terminal gives a width


def text_table(header: list[str], rows: list[list[str]], *,
               width: int | None = None, truncate: bool = False) -> Iterator[str]:
    """The lines of a table: columns aligned by their width on a terminal (a Chinese character
    takes two cells), two spaces apart; every cell made safe for a terminal (:func:`safe_term`,
    a newline or tab is a space).

    ``width`` (a terminal's): the widest columns are narrowed until a line fits, not below 10
    cells, and a cell longer than its column folds onto more lines (at spaces, else anywhere);
    None: one line per row, nothing folded (what a pipe or a file gets, for grep).
    ``truncate``: one line per row, a cell longer than its column cut with an ellipsis (the
    columns fit ``width``; without one, none is wider than :data:`PIPE_CELL`). Rows are
    measured one by one: tens of thousands take well under a second (rich's table measures
    each cell through its renderables: about a millisecond a row)."""
    from rich.cells import cell_len

    def clean(text: str) -> str:
        return safe_term(text.replace("\n", " ").replace("\t", " "))

    table = [[clean(c) for c in header]] + [[clean(c) for c in row] for row in rows]
    widths = [max(cell_len(c) for c in col) for col in zip(*table, strict=True)]
    if truncate and width is None:
        widths = [min(w, PIPE_CELL) for w in widths]
    if width is not None:
        gaps = 2 * (len(widths) - 1)
        while sum(widths) + gaps > width:
            widest = max(range(len(widths)), key=widths.__getitem__)
            if widths[widest] <= 10:
                break
            widths[widest] -= 1
    last = len(widths) - 1
    for row in table:
        if truncate:
            parts = [[_cut(cell, w, cell_len)] for cell, w in zip(row, widths, strict=True)]
        elif width is None:
            parts = [[cell] for cell in row]
        else:
            parts = [_fold(cell, w, cell_len) for cell, w in zip(row, widths, strict=True)]
        for k in range(max(len(p) for p in parts)):
            cells = []
            for i, p in enumerate(parts):
                cell = p[k] if k < len(p) else ""
                cells.append(cell if i == last else cell + " " * (widths[i] - cell_len(cell)))
            yield "  ".join(cells).rstrip()


def _cut(text: str, w: int, cell_len: Any) -> str:
    """``text`` in at most ``w`` terminal cells, its end replaced by an ellipsis if cut."""
    if cell_len(text) <= w:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > w - 1:
            break
        out += ch
    return out + "…"


def _fold(text: str, w: int, cell_len: Any) -> list[str]:
    """``text`` in lines of at most ``w`` terminal cells: broken at spaces, a longer word cut."""
    if cell_len(text) <= w:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        joined = f"{line} {word}" if line else word
        if cell_len(joined) <= w:
            line = joined
            continue
        if line:
            lines.append(line)
        while cell_len(word) > w:
            used, cut = 0, 0
            while cut < len(word) and used + cell_len(word[cut]) <= w:
                used += cell_len(word[cut])
                cut += 1
            cut = max(cut, 1)  # a character wider than the column still goes somewhere
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    lines.append(line)
    return lines
