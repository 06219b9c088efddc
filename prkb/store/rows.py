"""One mapper from SQLite rows to plain values: JSON columns decoded once, the same way.

Readers in ``*_queries.py`` use :func:`row_dict` (a row as a dict, named JSON columns
decoded) and :func:`json_value` (one JSON column; ``None`` or empty gives the default).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any


def json_value(text: str | bytes | None, default: Any = None) -> Any:
    """A JSON column's value; ``default`` when the column is NULL or empty."""
    if text is None or text == "" or text == b"":
        return default
    return json.loads(text)


def row_dict(row: sqlite3.Row, json_columns: Iterable[str] = ()) -> dict[str, Any]:
    """A row as a dict keyed by column name, the named JSON columns decoded."""
    out = dict(zip(row.keys(), tuple(row), strict=True))
    for col in json_columns:
        out[col] = json_value(out.get(col))
    return out
