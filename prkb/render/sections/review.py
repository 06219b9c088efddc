"""The review highlights: the discussion as topics (:mod:`prkb.analyze.topics`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analyze.topics import synthesize
from ..prfacts import PrFacts


@dataclass(frozen=True)
class Review:
    collected: bool  # False: a record from git history only, no discussion was read
    status: str
    author: str | None
    topics: list[dict[str, Any]]


def build(f: PrFacts) -> Review:
    discussion = synthesize(f.record)
    return Review(collected=not f.git_only, status=discussion.status,
                  author=discussion.author, topics=[_topic(t) for t in discussion.topics])


def _topic(t: Any) -> dict[str, Any]:
    q = t.decisive
    return {
        "kind": t.kind, "outcome": t.outcome, "evidence": t.evidence,
        "participants": [vars(p) for p in t.participants], "opener": t.opener,
        "comments": t.comments, "path": t.path, "line": t.line,
        "decisive": vars(q) if q is not None else None,
    }
