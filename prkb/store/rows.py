"""One mapper from SQLite rows to plain values: JSON columns decoded once, the same way.

Readers in ``*_queries.py`` use :func:`row_dict` (a row as a dict, named JSON columns
decoded; :func:`dict_rows`, every row of a query so, faster), :func:`json_value` (one JSON
column; ``None`` or empty gives the default) and :func:`in_chunks` (many values bound into
``IN (...)`` lists a few hundred at a time).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

_V = TypeVar("_V")
IN_CHUNK = 500  # values bound in one ``IN (...)`` list: well under SQLite's variable limit


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


def dict_rows(conn: sqlite3.Connection, sql: str,
              params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of ``sql`` as :func:`row_dict` makes them (no JSON column), read as plain
    tuples and named once per query: several times cheaper per row than a
    :class:`sqlite3.Row` made and copied into a dict by name."""
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def in_chunks(values: Sequence[_V]) -> Iterator[tuple[list[_V], str]]:
    """``values`` :data:`IN_CHUNK` at a time, each run with the placeholders of its
    ``IN (...)`` list (``?,?,...``)."""
    for i in range(0, len(values), IN_CHUNK):
        chunk = list(values[i:i + IN_CHUNK])
        yield chunk, ",".join("?" * len(chunk))
