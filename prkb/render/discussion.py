"""Review highlights: reviewers and verdicts, comments grouped by topic, open questions.

The topic rules are here and nowhere else: a comment goes to the first topic (in
``TOPICS`` order) one of whose keywords it contains (case-insensitive, whole words where
the keyword is a word), else to ``other``. Testing, CI, performance and correctness count
as technical discussion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .markdown import one_line

COMMENT_CHARS = 300
MAX_ITEMS = 30

TOPICS: dict[str, tuple[str, ...]] = {
    "ci": (
        "ci", "pre-commit", "buildkite", "pipeline", "flaky", "rebase", "checks", "workflow",
        "green", "red",
    ),
    "testing": (
        "test", "tests", "pytest", "unit test", "lm_eval", "accuracy", "coverage", "regression",
    ),
    "performance": (
        "perf", "performance", "throughput", "latency", "speedup", "faster", "slower",
        "cpu bound", "benchmark", "singlet", "overhead",
    ),
    "correctness": (
        "crash", "assert", "assertion", "bug", "wrong", "incorrect", "correctness", "fails",
        "failure", "error", "race", "deadlock", "nan", "mismatch",
    ),
}
TECHNICAL = ("testing", "ci", "performance", "correctness")
TOPIC_ORDER = (*TECHNICAL, "other")

_PATTERNS = {
    topic: [re.compile(rf"(?<![A-Za-z0-9]){re.escape(k)}(?![A-Za-z0-9])", re.I) for k in words]
    for topic, words in TOPICS.items()
}


def topic_of(text: str) -> str:
    for topic in TOPICS:
        if any(p.search(text) for p in _PATTERNS[topic]):
            return topic
    return "other"


@dataclass
class Item:
    author: str | None
    kind: str          # review, comment, review_comment
    when: str | None
    text: str          # one line, capped
    topic: str
    question: bool
    path: str | None = None
    answered: bool = True


def _login(u: Any) -> str | None:
    if isinstance(u, dict) and u.get("login"):
        return str(u["login"])
    return None


def timeline(rec: dict[str, Any]) -> list[Item]:
    """Every non-empty review body and comment, in time order.

    Items without a timestamp keep the record's order (reviews, then conversation comments,
    then line comments) after the timestamped ones before them.
    """
    raw: list[tuple[str, dict[str, Any], str | None]] = []
    raw += [("review", r, r.get("submitted_at")) for r in rec.get("reviews") or []]
    raw += [("comment", c, c.get("created_at")) for c in rec.get("comments") or []]
    raw += [("review_comment", c, c.get("created_at")) for c in rec.get("review_comments") or []]
    items: list[Item] = []
    for kind, obj, when in raw:
        full = str(obj.get("body") or "")
        text = one_line(full[:20_000], COMMENT_CHARS)
        if not text:
            continue
        items.append(
            Item(
                author=_login(obj.get("user")),
                kind=kind,
                when=when,
                text=text,
                topic=topic_of(full[:20_000]),
                question=one_line(full[:20_000]).rstrip().endswith("?"),
                path=obj.get("path") if kind == "review_comment" else None,
            )
        )
    if all(i.when for i in items):
        items = sorted(items, key=lambda i: str(i.when))
    # a question is open when nobody else wrote after it
    for idx, it in enumerate(items):
        if it.question:
            later = items[idx + 1 :]
            it.answered = any(o.author is None or o.author != it.author for o in later)
    return items[:MAX_ITEMS]


def reviewers(rec: dict[str, Any]) -> list[dict[str, str]]:
    """Each reviewer once with their last verdict (review state), sorted by name."""
    last: dict[str, str] = {}
    for r in rec.get("reviews") or []:
        who = _login(r.get("user"))
        if who is None:
            continue
        last[who] = str(r.get("state") or "COMMENTED").upper()
    return [{"login": k, "state": last[k]} for k in sorted(last, key=str.lower)]


def highlights(rec: dict[str, Any]) -> dict[str, Any]:
    items = timeline(rec)
    groups = []
    for topic in TOPIC_ORDER:
        members = [i for i in items if i.topic == topic]
        if members:
            groups.append({"topic": topic, "items": [vars(i) for i in members]})
    return {
        "reviewers": reviewers(rec),
        "groups": groups,
        "count": len(items),
        "technical": any(i.topic in TECHNICAL for i in items),
        "open_questions": [vars(i) for i in items if i.question and not i.answered],
    }
