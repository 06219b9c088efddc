"""Small typed records passed between the pipeline's stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SymbolChange:
    """One (file, class, attribute) whose declared value differs between before and after.

    ``attr`` is a family spelling, or a method name for dynamic-support changes: then
    ``before``/``after`` are what the overriding method can return, with conditions
    (``UNIFORM_BATCH if c; else NEVER``), or None where it is not overridden (``"overridden"``
    when only a patch was read, not the method's body).
    """

    file: str
    class_name: str
    attr: str
    before: str | None
    after: str | None
    direction: (
        str  # added, removed, raised, lowered, changed, renamed, moved, dynamic-added,
        # dynamic-changed, dynamic-removed
    )
    before_attr: str | None = None  # the spelling on the before side when renamed
    before_file: str | None = None  # the file the class was in before, when it moved

    @property
    def sets_value(self) -> bool:
        """Whether the change sets a value: a rename or a move carries the old one along."""
        return self.direction not in ("renamed", "moved")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "class": self.class_name,
            "attr": self.attr,
            "before": self.before,
            "after": self.after,
            "direction": self.direction,
            "before_attr": self.before_attr,
            "before_file": self.before_file,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SymbolChange:
        return cls(
            file=str(d["file"]),
            class_name=str(d.get("class") or d.get("class_name")),
            attr=str(d["attr"]),
            before=d.get("before"),
            after=d.get("after"),
            direction=str(d.get("direction") or "changed"),
            before_attr=d.get("before_attr"),
            before_file=d.get("before_file"),
        )


@dataclass(frozen=True)
class Finding:
    rule: str
    file: str
    class_name: str
    message_en: str
    message_zh: str
    commit: str | None = None
    severity: str = "error"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "file": self.file,
            "class": self.class_name,
            "message_en": self.message_en,
            "message_zh": self.message_zh,
            "commit": self.commit,
            "severity": self.severity,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Finding:
        return cls(
            rule=str(d["rule"]),
            file=str(d.get("file") or ""),
            class_name=str(d.get("class") or d.get("class_name") or ""),
            message_en=str(d.get("message_en") or ""),
            message_zh=str(d.get("message_zh") or ""),
            commit=d.get("commit"),
            severity=str(d.get("severity") or "error"),
        )


@dataclass(frozen=True)
class RiskTag:
    code: str
    en: str
    zh: str

    def to_json(self) -> dict[str, str]:
        # what asdict makes of it, without its recursive copy (read once per tag of a PR)
        return {"code": self.code, "en": self.en, "zh": self.zh}


@dataclass(frozen=True)
class Relation:
    source: str  # node key, e.g. "pr:47144"
    target: str
    type: str
    evidence: str
    confidence: float
    origin: str = "text"  # text, timeline, lineage, curated


@dataclass
class Analysis:
    """Everything the analyse stage derives for one PR."""

    symbol_changes: list[SymbolChange] = field(default_factory=list)
    tests_touched: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    core_paths: list[str] = field(default_factory=list)
    risk_tags: list[RiskTag] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- PR records (store/pr_queries.py) ----------------------------------------------------------


@dataclass(frozen=True)
class StoredPr:
    """What ingest compares a new record with: the stored row's id, hash and updated_at."""

    id: int
    raw_hash: str
    updated_at: str | None


@dataclass(frozen=True)
class KbSummary:
    """Counts of a knowledge base's contents."""

    prs: int
    changes: int
    classes: int
    findings: int
    relations: int
    first: str | None  # earliest merge (or creation) time
    last: str | None
    by_direction: list[tuple[str, int]]  # symbol changes per direction, most first


# --- the relation graph and the support matrix (prkb.graph, prkb.publish.matrix;
# store: graph_queries)


SHORT_SHA = 12  # the characters of a commit's sha every output shows
# the side of a declaration change where the class declares nothing (never Python's None)
NOT_DECLARED = "(not declared)"


def record_label(number: int | None, ref: str) -> str:
    """How every output names a stored record: ``#N``, or ``commit <sha12>`` for a commit
    without a PR (``ref`` ``sha:<40>``; the report and the site's page add the repository
    where it is reachable)."""
    if number is not None:
        return f"#{number}"
    return f"commit {ref.removeprefix('sha:')[:SHORT_SHA]}"


def node_key(number: int | None, merge_commit_sha: str | None) -> str:
    """The graph key of a stored PR (a commit key for records without a PR number)."""
    return f"pr:{number}" if number is not None else f"commit:{merge_commit_sha}"


@dataclass(frozen=True)
class PrNode:
    """A stored PR (or a commit record without a PR) as the graph reads it: a row of ``prs``
    without its record, analysis and labels."""

    id: int
    number: int | None
    ref: str
    repo: str
    title: str
    body: str | None
    state: str
    created_at: str | None
    merged_at: str | None
    closed_at: str | None
    merge_commit_sha: str | None

    @property
    def key(self) -> str:
        """Its graph node key (:func:`node_key`)."""
        return node_key(self.number, self.merge_commit_sha)

    @property
    def date(self) -> str:
        """When it ended: merged, else closed, else created ("" when none is known)."""
        return str(self.merged_at or self.closed_at or self.created_at or "")


@dataclass(frozen=True)
class Node:
    """A row of ``nodes``: a graph node that is not (only) a stored PR, or a stored commit."""

    key: str  # pr:N, issue:N, commit:SHA, ext:owner/repo#N
    kind: str  # pr, issue, commit, external
    number: int | None = None
    title: str | None = None
    repo: str | None = None

    @classmethod
    def from_key(cls, key: str) -> Node:
        """The node a relation endpoint needs, read from its key (no title)."""
        kind, _, rest = key.partition(":")
        if kind == "pr" or kind == "issue":
            return cls(key, kind, int(rest) if rest.isdigit() else None)
        if kind == "ext":
            repo, _, num = rest.partition("#")
            return cls(key, "external", int(num) if num.isdigit() else None, None, repo)
        return cls(key, "commit")


@dataclass(frozen=True)
class LevelReading:
    """One audit reading of a builder at a mined commit (a row of ``builder_levels``)."""

    repo: str
    commit_sha: str
    committed_at: str
    pr_ref: str | None
    class_name: str
    file: str
    declared: str | None
    effective: str | None
    dynamic: bool
    meets_rule: bool | None  # the audit rule's reading (None: not applicable, or no rule)
    # the levels the builder could report (None for rows stored before prkb kept them, or
    # unreadable), and the same with their conditions when the level is dynamic
    level_set: list[str] | None
    level_text: str | None
