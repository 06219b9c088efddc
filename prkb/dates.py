"""The one parser of the ISO dates and times prkb stores, reads and prints.

Stored times are ISO 8601 text: an aware time is stored in UTC (``...Z``); a time whose zone
the source did not give is stored without one, and a bare day as ``YYYY-MM-DD``
(:mod:`prkb.records`). Code that computes with times calls :func:`parse_time`
(always an aware UTC datetime; a time without a zone is read as UTC, the convention of
GitHub and git); code that prints a time calls :func:`parse_when`, which keeps a missing zone
missing so the reader can be told it is unknown.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from functools import lru_cache

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _iso(text: str) -> datetime:
    """``datetime.fromisoformat`` over the spellings we meet: ``Z``, a space before the time."""
    s = text.strip().replace(" ", "T", 1)
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    return datetime.fromisoformat(s)


@lru_cache(maxsize=65536)  # a pure function of the text; a datetime is immutable
def parse_time(text: str | None) -> datetime | None:
    """An ISO date or time as an aware UTC datetime (a bare day is its midnight UTC).

    ``None`` for no text or text that is not ISO 8601; a time without a zone is read as UTC.
    """
    if not text:
        return None
    try:
        dt = _iso(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def parse_when(value: object) -> datetime | date | None:
    """A stored date or time for display: a bare day stays a ``date``; a time keeps its zone,
    or its lack of one (naive), so a printer can say the zone is unknown. ``None`` if
    unparseable."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime | date):
        return value
    text = str(value).strip()
    if _DAY.match(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    try:
        return _iso(text)
    except ValueError:
        return None


def parse_day(text: str) -> date:
    """A ``YYYY-MM-DD`` day; ``ValueError`` for anything else."""
    return date.fromisoformat(text.strip())


def utc_stamp(dt: datetime) -> str:
    """An aware datetime as the stored UTC form ``YYYY-MM-DDTHH:MM:SSZ``."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
