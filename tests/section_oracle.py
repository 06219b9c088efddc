"""A report section part moved from its template to Python is held to the template it
replaced (kept under tests/golden/): both render the same context in the same environment
(catalog, filters, formatter, labels), and must write the same text, byte for byte, before
the report's tidy step (which would hide a lost or added blank line)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jinja2

GOLDEN = Path(__file__).parent / "golden"
SECTIONS = Path(__file__).parents[1] / "templates" / "report" / "sections"


def sources(golden: str, section: str) -> tuple[str, str]:
    """The template before (``tests/golden/GOLDEN``) and the section's template now."""
    return (GOLDEN / golden).read_text(), (SECTIONS / section).read_text()


def assert_same_text(env: jinja2.Environment, old: str, new: str,
                     contexts: Iterable[Mapping[str, Any]]) -> str:
    """Render each context with both templates; returns the last text (for more checks)."""
    before, after = env.from_string(old), env.from_string(new)
    want = ""
    for n, names in enumerate(contexts):
        want = before.render(names)
        got = after.render(names)
        assert got == want, f"case {n}: the section's text changed"
    return want
