"""Documentation drift: a hand-written backend table in Markdown versus the code's levels.

The table is found with markdown-it-py (GFM tables: escaped pipes, any extra columns): the first
table with a column whose header names the tracked symbol (any family spelling, compared without
underscores and case) is read; its backend column is the one whose header says "backend", else
the first one. Rows are matched to builders by normalised names (class name without its
``MetadataBuilder`` suffix, registered backend names) and by the profile's ``[docs.aliases]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..analyze.audit import AuditResult, BuilderInfo, audit_revision
from ..errors import InputError
from ..gitrepo import GitRepo
from ..profile import Profile


class TableError(InputError):
    """The documentation table cannot be found or read (exit code 2)."""

    exit_code = 2


@dataclass
class DocRow:
    name: str
    level_text: str
    levels: list[str]
    line: int  # 1-based line in the document
    cells: dict[str, str]


@dataclass
class DocTable:
    header: list[str]
    backend_col: str
    level_col: str
    rows: list[DocRow]
    unlisted_default: bool  # the document says unlisted backends have the default level
    line: int


@dataclass
class DriftReport:
    doc: str
    rev: str
    table: DocTable
    matched: dict[int, list[str]] = field(default_factory=dict)  # row index -> builder classes
    stale: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    orphans: list[dict[str, Any]] = field(default_factory=list)
    # rows of builders that override the dynamic-support method and whose documented level is
    # not the declared one: the code decides at run time, so these are shown, not counted
    dynamic: list[dict[str, Any]] = field(default_factory=list)
    builders: int = 0

    @property
    def drift(self) -> bool:
        return bool(self.stale or self.missing or self.orphans)

    def to_json(self) -> dict[str, Any]:
        return {
            "doc": self.doc,
            "rev": self.rev,
            "builders": self.builders,
            "rows": len(self.table.rows),
            "unlisted_means_default": self.table.unlisted_default,
            "stale": self.stale,
            "missing": self.missing,
            "orphans": self.orphans,
            "dynamic": self.dynamic,
            "matched": {self.table.rows[i].name: v for i, v in self.matched.items()},
            "drift": self.drift,
        }

    def summary(self) -> str:
        lines = [
            f"{self.doc} at {self.rev[:12]}: {len(self.table.rows)} rows, {self.builders} builders;"
            f" {len(self.stale)} stale rows, {len(self.missing)} missing builders,"
            f" {len(self.orphans)} orphan rows"
        ]
        for s in self.stale:
            lines.append(
                f"  stale   line {s['line']}: {s['row']}: documented {s['documented']}, "
                f"code {s['code']} ({s['class']})"
            )
        for m in self.missing:
            lines.append(f"  missing {m['class']} ({m['backend'] or '-'}): {m['effective']}"
                         f"  {m['file']}")
        for d in self.dynamic:
            lines.append(
                f"  dynamic line {d['line']}: {d['row']}: documented {d['documented']}, declared "
                f"{d['code']} ({d['class']} decides at run time; not counted as drift)"
            )
        for o in self.orphans:
            lines.append(f"  orphan  line {o['line']}: {o['row']}")
        if not self.table.unlisted_default:
            lines.append("  (the document does not say unlisted backends are the default level, "
                         "so unlisted builders are not reported)")
        return "\n".join(lines)


def norm(text: str) -> str:
    """A backend or builder name reduced for matching (case and punctuation folded)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


_STRIP = ("metadatabuilder", "builder", "backend", "attention", "attn")


def _variants(text: str) -> set[str]:
    key = norm(text)
    out = {key} if key else set()
    changed = True
    while changed:
        changed = False
        for suffix in _STRIP:
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[: -len(suffix)]
                out.add(key)
                changed = True
    return out


def _inline_text(tok: Token) -> str:
    parts = []
    for child in tok.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


def _levels_in(text: str, profile: Profile) -> list[str]:
    found: list[str] = []
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        lv = profile.normalize_level(word)
        if lv in profile.levels and lv not in found:
            found.append(lv)
    if not found and profile.bool_spellings:
        low = text.strip().lower()
        if low in ("true", "false"):
            found.append("True" if low == "true" else "False")
    return found


def parse_table(text: str, profile: Profile) -> DocTable:
    """The backend table of the design document: one row per backend with the level it claims."""
    md = MarkdownIt("commonmark").enable("table")
    try:
        tokens = md.parse(text)
    except Exception as e:  # markdown-it raises only on pathological input
        raise TableError(f"the document cannot be parsed as Markdown: {e}") from None
    family = {norm(f) for f in (*profile.family, profile.display)}
    tables: list[tuple[int, list[str], list[tuple[int, list[str]]]]] = []
    i = 0
    while i < len(tokens):
        if tokens[i].type != "table_open":
            i += 1
            continue
        start = (tokens[i].map or [0, 0])[0] + 1
        header: list[str] = []
        body: list[tuple[int, list[str]]] = []
        current: list[str] | None = None
        line = start
        in_head = False
        i += 1
        while i < len(tokens) and tokens[i].type != "table_close":
            t = tokens[i]
            if t.type == "thead_open":
                in_head = True
            elif t.type == "thead_close":
                in_head = False
            elif t.type == "tr_open":
                current = []
                line = (t.map or [line - 1, 0])[0] + 1
            elif t.type == "tr_close" and current is not None:
                if in_head:
                    header = current
                else:
                    body.append((line, current))
                current = None
            elif t.type == "inline" and current is not None:
                current.append(_inline_text(t))
            i += 1
        tables.append((start, header, body))
        i += 1
    chosen = None
    for start, header, body in tables:
        level_cols = [h for h in header if norm(h) in family]
        if level_cols:
            chosen = (start, header, body, level_cols[0])
            break
    if chosen is None:
        raise TableError(
            f"no Markdown table with a {profile.display.lstrip('_')} column "
            f"({len(tables)} tables in the document)"
        )
    start, header, body, level_col = chosen
    backend_col = next((h for h in header if "backend" in h.lower()), header[0])
    rows = []
    for line, cells in body:
        by_col = {h: (cells[k] if k < len(cells) else "") for k, h in enumerate(header)}
        name = by_col.get(backend_col, "")
        if not name:
            continue
        level_text = by_col.get(level_col, "")
        rows.append(DocRow(name, level_text, _levels_in(level_text, profile), line, by_col))
    default = profile.default_level
    unlisted = False
    for t in tokens:
        if t.type == "inline" and (t.map or [0])[0] + 1 > start:
            words = _inline_text(t)
            if re.search(r"\b(unlisted|not listed|other backends)\b", words, re.I) and (
                default in words
            ):
                unlisted = True
                break
    return DocTable(header, backend_col, level_col, rows, unlisted, start)


def _builder_keys(b: BuilderInfo) -> tuple[set[str], set[str], set[str]]:
    """Tiers of keys: exact class-derived, exact backend names, suffix-stripped variants."""
    short = b.class_name.rsplit(".", 1)[-1]
    cls_exact = {norm(short)} | {v for v in _variants(short) if v != norm(short)}
    cls_first = set()
    for suffix in ("metadatabuilder", "builder"):
        if norm(short).endswith(suffix):
            cls_first.add(norm(short)[: -len(suffix)])
    names = [n.strip() for n in (b.backend_name or "").split(",") if n.strip()]
    backend_exact = {norm(n) for n in names}
    loose = set().union(*(_variants(n) for n in names)) if names else set()
    return cls_first or {norm(short)}, backend_exact, loose | cls_exact


def match_rows(
    table: DocTable, builders: list[BuilderInfo], profile: Profile
) -> dict[int, list[str]]:
    """Pair each documented row with the builder it names (the profile's docs aliases first)."""
    aliases = {norm(k): str(v) for k, v in dict(profile.docs.get("aliases", {})).items()}
    keyed = [(b, _builder_keys(b)) for b in builders]
    out: dict[int, list[str]] = {}
    for idx, row in enumerate(table.rows):
        alias = aliases.get(norm(row.name))
        if alias:
            hits = [b.class_name for b in builders if b.class_name.rsplit(".", 1)[-1] == alias]
            if hits:
                out[idx] = hits
                continue
        row_exact = norm(row.name)
        row_loose = _variants(row.name)
        for tier in range(3):
            if tier < 2:
                hits = [b.class_name for b, keys in keyed if row_exact in keys[tier]]
            else:
                hits = [b.class_name for b, keys in keyed if row_loose & keys[2]]
            if hits:
                out[idx] = hits
                break
    return out


def check_drift(
    result: AuditResult, table: DocTable, profile: Profile, doc: str = ""
) -> DriftReport:
    """Where the document's table and the audited builders disagree (a level, a missing row, a row
    for no builder)."""
    report = DriftReport(doc=doc, rev=result.rev, table=table, builders=len(result.builders))
    by_class = {b.class_name: b for b in result.builders}
    report.matched = match_rows(table, result.builders, profile)
    covered: set[str] = set()
    for idx, row in enumerate(table.rows):
        hits = report.matched.get(idx)
        if not hits:
            report.orphans.append({"row": row.name, "line": row.line, "documented": row.level_text})
            continue
        for cls in hits:
            covered.add(cls)
            b = by_class[cls]
            code_levels = b.levels or [b.effective]
            ok = bool(row.levels) and all(lv in code_levels for lv in row.levels)
            if not ok:
                overridden = bool(b.dynamic_reason and "overrides" in b.dynamic_reason)
                target = report.dynamic if overridden else report.stale
                target.append({
                    "row": row.name, "line": row.line, "class": cls, "file": b.file,
                    "documented": row.level_text or "(empty)",
                    "code": b.level_text() if b.decided_by is not None
                    else b.effective if not b.condition
                    else f"{' or '.join(code_levels)} (if {b.condition})",
                    "dynamic": b.dynamic,
                })
    # subclasses that inherit a documented builder's value are covered by its row
    for b in result.builders:
        if b.class_name not in covered and b.declared is None and b.declared_in in covered:
            covered.add(b.class_name)
    if table.unlisted_default:
        parents = {a for b in result.builders for a in b.ancestors}
        for b in result.builders:
            if b.class_name in covered:
                continue
            if b.levels == [profile.default_level] or (not b.levels and
                                                       b.effective == profile.default_level):
                continue
            if not b.backend_name and b.class_name in parents:
                continue  # an abstract base: its concrete subclasses are reported instead
            report.missing.append({
                "class": b.class_name, "backend": b.backend_name, "file": b.file,
                "effective": b.effective, "dynamic": b.dynamic,
            })
    return report


def drift_at(
    path: str | Path,
    rev: str,
    profile: Profile,
    doc: str | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> DriftReport:
    """:func:`check_drift` of the document ``doc`` (default: the profile's
    ``docs.table_doc``) against the audit of ``rev``, both read from the git repository at
    ``path``. InputError without a document; TableError when it is missing or has no table."""
    doc = doc or str(profile.docs.get("table_doc", ""))
    if not doc:
        raise InputError("no --doc given and the profile names no docs.table_doc")
    with GitRepo(path) as repo:
        sha = repo.resolve(rev)
        entries = [e for e in repo.ls_tree(sha, [doc]) if e.path == doc and e.type == "blob"]
        if not entries:
            raise TableError(f"{doc}: no such file at {rev}")
        text = repo.read_text(entries[0].sha)
        if text is None:
            raise TableError(f"{doc}: blob missing from the repository")
        table = parse_table(text, profile)
        result = audit_revision(repo, sha, profile, warn=warn)
    return check_drift(result, table, profile, doc)
