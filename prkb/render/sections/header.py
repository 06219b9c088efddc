"""The report's head: the PR (or the commit without a PR) and the notes of its record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..prfacts import PrFacts

# where the description text comes from: the PR's own description (quoted), the commit
# message (git), or a paraphrase of public information (curated)
TEXT_ORIGIN = {"github": "description", "git+github": "description", "git": "commit",
               "curated": "paraphrase"}


@dataclass(frozen=True)
class Header:
    """``pr``: what every section may say of the PR (number, title, state, dates, source,
    ``text``: where its description comes from, ``commit``: for a commit without a PR, its
    short sha and repository); ``notes``: the record's own notes."""

    pr: dict[str, Any]
    notes: list[str]


def build(f: PrFacts) -> Header:
    facts = f.facts
    pr = {
        "repo": facts["repo"],
        "ref": facts["ref"],
        "number": facts["number"],
        "title": facts["title"],
        "state": facts["state"],
        "author": facts["author"],
        "created_at": facts["created_at"],
        "merged_at": facts["merged_at"],
        "closed_at": facts["closed_at"],
        "url": facts["url"],
        # a commit without a PR: headed "commit <short sha> on <the repository where it
        # is reachable>" (its page's repository; a fork's own commit is there)
        "commit": commit_name(facts),
        "source": facts["source"],
        "labels": sorted(facts["labels"]),
        "merge_commit_sha": facts["merge_commit_sha"],
        "git_only": f.git_only,
        "text": TEXT_ORIGIN.get(facts["source"], "description"),
    }
    return Header(pr=pr, notes=f.notes)


def commit_name(facts: dict[str, Any]) -> dict[str, str] | None:
    """For a record of a commit without a PR number: its short sha and the repository where
    it is reachable (the one its commit page is on, else the record's); None for a PR."""
    if facts["number"] is not None or not facts.get("merge_commit_sha"):
        return None
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/commit/", str(facts.get("url") or ""))
    return {"sha": str(facts["merge_commit_sha"])[:12],
            "repo": m.group(1) if m else str(facts["repo"])}
