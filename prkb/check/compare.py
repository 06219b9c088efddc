"""The pull-request check: the consistency audit at a base and a head revision, compared.

Everything is read from git objects (no checkout). The audit runs at head and at base with one
:class:`~prkb.analyze.audit.AuditCache`, so the base costs only the blobs the change touched.

* **Findings** are matched by (rule, file, class). A file that git's rename detection pairs
  between base and head (``git diff -M``) is the same file; a class that left one file and
  arrived in another (same rule, same class name, one candidate on each side) is the same
  finding, moved. A head finding without a match is **new**; a base finding without a match
  is **fixed**; the others are **kept**.
* **Declaration changes**: the files that changed between base and head are parsed at both
  sides and compared per class (:func:`prkb.analyze.symbols.diff_declarations`), renames and
  moves folded (``moved_declarations``, ``pair_moves``); plus each builder whose *effective*
  levels (declared or inherited) differ between the two audits.
* **Documentation drift** (:mod:`prkb.publish.docsdrift`) at base and at head: the stale rows,
  missing builders and orphan rows present at head and not at base are the drift the change
  introduces. They are warnings: they never decide the exit code.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..analyze.audit import AuditCache, AuditResult, BuilderInfo, audit_revision
from ..analyze.state import state_changes
from ..analyze.symbols import (
    ClassFacts,
    SourceError,
    diff_declarations,
    direction_of,
    moved_declarations,
    pair_moves,
    parse_classes,
)
from ..errors import InputError
from ..gitrepo import GitRepo
from ..models import Finding, SymbolChange
from ..profile import Profile
from ..publish.docsdrift import DriftReport, TableError, check_drift, parse_table

Warn = Callable[[str], None]

FAIL_ON = ("new", "any", "none")
DRIFT_RULE = "docs-level-drift"


@dataclass
class CheckFinding:
    """A finding of the audit, placed at head (new, kept) or at base (fixed)."""

    rule: str
    file: str
    class_name: str
    line: int  # the class statement's line (at head; at base for a fixed finding)
    message_en: str
    message_zh: str
    status: str  # new | kept | fixed
    moved_from: str | None = None  # the file at base, when the class moved
    severity: str = "error"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "file": self.file, "class": self.class_name, "line": self.line,
            "status": self.status, "moved_from": self.moved_from, "severity": self.severity,
            "message_en": self.message_en, "message_zh": self.message_zh,
        }


@dataclass
class LevelChange:
    """A declaration the diff changes (one class, one attribute or method)."""

    file: str
    class_name: str
    attr: str
    before: str | None
    after: str | None
    direction: str  # as SymbolChange.direction
    before_file: str | None = None
    meaning_before: dict[str, str] = field(default_factory=dict)  # lang -> meaning
    meaning_after: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "class": self.class_name, "attr": self.attr,
            "before": self.before, "after": self.after, "direction": self.direction,
            "before_file": self.before_file, "meaning_before": self.meaning_before,
            "meaning_after": self.meaning_after,
        }


@dataclass
class EffectiveChange:
    """A builder whose effective levels (declared or inherited) differ between the audits."""

    file: str
    class_name: str
    line: int
    before: str | None  # None: no such builder at base
    after: str | None  # None: no such builder at head
    direction: str
    # where each side's level comes from (analyze/state.py: declared, inherited:<Class>,
    # method, stale, default; None: no such builder there)
    before_source: str | None = None
    after_source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "class": self.class_name, "line": self.line,
                "before": self.before, "after": self.after, "direction": self.direction,
                "before_source": self.before_source, "after_source": self.after_source}


@dataclass
class DriftItem:
    """Drift of the documentation table that the change introduces (a warning)."""

    kind: str  # stale | missing | orphan
    file: str  # where to point: the document (stale, orphan) or the builder's file (missing)
    line: int
    name: str  # the row (stale, orphan) or the builder class (missing)
    message_en: str
    message_zh: str
    rule: str = DRIFT_RULE
    severity: str = "warning"

    @property
    def class_name(self) -> str:
        return self.name

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rule": self.rule, "file": self.file, "line": self.line,
                "name": self.name, "message_en": self.message_en, "message_zh": self.message_zh}


@dataclass
class CheckReport:
    base: str  # as given
    head: str
    base_sha: str
    head_sha: str
    changed_files: int
    new: list[CheckFinding] = field(default_factory=list)
    fixed: list[CheckFinding] = field(default_factory=list)
    kept: list[CheckFinding] = field(default_factory=list)
    changes: list[LevelChange] = field(default_factory=list)
    effective: list[EffectiveChange] = field(default_factory=list)
    drift: list[DriftItem] = field(default_factory=list)
    doc: str | None = None
    doc_note: str | None = None  # why the documentation was not checked
    builders_base: int = 0
    builders_head: int = 0
    warnings: list[str] = field(default_factory=list)

    def failing(self, fail_on: str) -> bool:
        """Whether the check fails (exit code 1) for ``--fail-on``."""
        if fail_on not in FAIL_ON:
            raise InputError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        if fail_on == "new":
            return bool(self.new)
        if fail_on == "any":
            return bool(self.new or self.kept)
        return False

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base, "head": self.head,
            "base_sha": self.base_sha, "head_sha": self.head_sha,
            "changed_files": self.changed_files,
            "builders": {"base": self.builders_base, "head": self.builders_head},
            "new": [f.to_json() for f in self.new],
            "fixed": [f.to_json() for f in self.fixed],
            "kept": [f.to_json() for f in self.kept],
            "declaration_changes": [c.to_json() for c in self.changes],
            "effective_changes": [c.to_json() for c in self.effective],
            "docs": {"doc": self.doc, "note": self.doc_note,
                     "introduced": [d.to_json() for d in self.drift]},
            "warnings": self.warnings,
        }


# --- the diff ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    status: str  # A, M, D, R, C, T
    old_path: str | None
    path: str | None  # None when deleted
    old_blob: str | None
    new_blob: str | None


def diff_files(repo: GitRepo, base: str, head: str) -> list[FileChange]:
    """The files that differ between two commits, with git's rename detection."""
    out = repo.git("diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", base, head)
    parts = out.split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(parts):
        meta = parts[i]
        if not meta.startswith(":"):
            i += 1
            continue
        fields = meta[1:].split()
        old_blob, new_blob, status = fields[2], fields[3], fields[4][0]
        zero = set("0")
        ob = None if set(old_blob) == zero else old_blob
        nb = None if set(new_blob) == zero else new_blob
        if status in ("R", "C"):
            old, new = parts[i + 1], parts[i + 2]
            i += 3
        else:
            old = new = parts[i + 1]
            i += 2
        changes.append(FileChange(
            status,
            None if status == "A" else old,
            None if status == "D" else new,
            ob, nb,
        ))
    return changes


def _resolve(repo: GitRepo, rev: str, what: str) -> str:
    try:
        return repo.resolve(rev, what)
    except InputError:
        if repo.is_shallow():
            raise InputError(
                f"{repo.path}: {what} {rev!r} is not in this shallow clone; fetch the whole "
                "history (actions/checkout with fetch-depth: 0, or git fetch --unshallow)"
            ) from None
        raise


# --- declaration changes ----------------------------------------------------------------------


def _classes(repo: GitRepo, blob: str | None, path: str, profile: Profile,
             warn: Warn) -> dict[str, ClassFacts] | None:
    if blob is None:
        return None
    text = repo.read_text(blob)
    if text is None:
        warn(f"{path}: blob {blob[:12]} is missing from the repository; skipped")
        return None
    if not profile.watch_regex.search(text):
        return {}
    try:
        return parse_classes(text, profile, filename=path)
    except SourceError as e:
        warn(f"{path}: {e}; skipped")
        return None


def _meaning(level: str | None, profile: Profile) -> dict[str, str]:
    if level is None:
        return {}
    lv = profile.normalize_level(level)
    meaning = profile.raw.get("levels", {}).get("meaning", {})
    return {lang: str(m[lv]) for lang, m in meaning.items() if lv in m}


def declaration_changes(
    repo: GitRepo, files: list[FileChange], profile: Profile, warn: Warn
) -> list[LevelChange]:
    glob = profile.python_glob
    raw: list[SymbolChange] = []
    for fc in files:
        path = fc.path or fc.old_path or ""
        if not fnmatch.fnmatch(path.rsplit("/", 1)[-1], glob):
            continue
        before = _classes(repo, fc.old_blob, fc.old_path or path, profile, warn)
        after = _classes(repo, fc.new_blob, path, profile, warn)
        if (fc.old_blob and before is None) or (fc.new_blob and after is None):
            continue  # one side unreadable: no change can be told
        raw.extend(diff_declarations(path, before, after, profile,
                                     old_path=fc.old_path if fc.status == "R" else None))
        if fc.status == "R" and fc.old_path:
            raw.extend(c for c in moved_declarations(fc.old_path, path, before, after, profile)
                       if c.file != c.before_file)
    out = []
    for c in pair_moves(raw):
        out.append(LevelChange(
            c.file, c.class_name, c.attr, c.before, c.after, c.direction, c.before_file,
            _meaning(c.before, profile), _meaning(c.after, profile),
        ))
    return out


def _levels_text(b: BuilderInfo) -> str:
    return b.level_text()


def effective_changes(
    base: AuditResult, head: AuditResult, renames: dict[str, str], profile: Profile
) -> list[EffectiveChange]:
    before = {(renames.get(b.file, b.file), b.class_name): b for b in base.builders}
    # where each side's level comes from: the one state model's reading of both audits
    source = {(c.file, c.class_name): c
              for c in state_changes(base.builders, head.builders, renames)
              if c.value == profile.display}

    def sources(key: tuple[str, str]) -> tuple[str | None, str | None]:
        c = source.get(key)
        if c is None:  # the level text changed, not the value in force: one source
            h = next((x for x in head.builders if (x.file, x.class_name) == key), None)
            got = (h.values.get(profile.display) or {}).get("source") if h else None
            return got, got
        return (c.before.source if c.before else None, c.after.source if c.after else None)

    out: list[EffectiveChange] = []
    seen: set[tuple[str, str]] = set()
    for h in head.builders:
        key = (h.file, h.class_name)
        seen.add(key)
        b = before.get(key)
        if b is None:
            out.append(EffectiveChange(h.file, h.class_name, h.lineno, None, _levels_text(h),
                                       "added", None, sources(key)[1]))
            continue
        if _levels_text(b) == _levels_text(h):
            continue
        if len(b.levels) == 1 and len(h.levels) == 1:
            direction = direction_of(b.levels[0], h.levels[0], profile)
        elif not profile.has_levels:  # an int compares as a number, a bool flips
            direction = direction_of(b.effective, h.effective, profile)
        else:
            direction = "changed"
        out.append(EffectiveChange(h.file, h.class_name, h.lineno, _levels_text(b),
                                   _levels_text(h), direction, *sources(key)))
    for key, b in before.items():
        if key not in seen:
            out.append(EffectiveChange(b.file, b.class_name, b.lineno, _levels_text(b), None,
                                       "removed", sources(key)[0], None))
    return out


# --- findings ---------------------------------------------------------------------------------


def _line_of(result: AuditResult, f: Finding) -> int:
    for b in result.builders:
        if b.file == f.file and b.class_name == f.class_name:
            return b.lineno
    return 1


def match_findings(
    base: AuditResult, head: AuditResult, renames: dict[str, str]
) -> tuple[list[CheckFinding], list[CheckFinding], list[CheckFinding]]:
    """(new, kept, fixed). ``renames``: base path -> head path (git's rename detection)."""
    base_left = list(base.findings)
    new: list[Finding] = []
    kept: list[tuple[Finding, str | None]] = []
    for f in head.findings:
        hit = next(
            (b for b in base_left if b.rule == f.rule and b.class_name == f.class_name
             and renames.get(b.file, b.file) == f.file),
            None,
        )
        if hit is not None:
            base_left.remove(hit)
            kept.append((f, hit.file if hit.file != f.file else None))
        else:
            new.append(f)
    # a class that moved to a file git does not pair with its old one: one candidate each side
    for f in list(new):
        same_new = [g for g in new if (g.rule, g.class_name) == (f.rule, f.class_name)]
        same_old = [b for b in base_left if (b.rule, b.class_name) == (f.rule, f.class_name)]
        if len(same_new) == 1 and len(same_old) == 1:
            new.remove(f)
            base_left.remove(same_old[0])
            kept.append((f, same_old[0].file))

    def at_head(f: Finding, status: str, moved: str | None = None) -> CheckFinding:
        return CheckFinding(f.rule, f.file, f.class_name, _line_of(head, f), f.message_en,
                            f.message_zh, status, moved, f.severity)

    return (
        [at_head(f, "new") for f in new],
        [at_head(f, "kept", moved) for f, moved in kept],
        [CheckFinding(f.rule, f.file, f.class_name, _line_of(base, f), f.message_en,
                      f.message_zh, "fixed", None, f.severity) for f in base_left],
    )


# --- documentation drift ----------------------------------------------------------------------


def _drift_at(repo: GitRepo, sha: str, result: AuditResult, profile: Profile,
              doc: str) -> DriftReport | str:
    entries = [e for e in repo.ls_tree(sha, [doc]) if e.path == doc and e.type == "blob"]
    if not entries:
        return f"{doc} does not exist at {sha[:12]}"
    text = repo.read_text(entries[0].sha)
    if text is None:
        return f"{doc}: blob missing from the repository"
    try:
        table = parse_table(text, profile)
    except TableError as e:
        return f"{doc} at {sha[:12]}: {e}"
    return check_drift(result, table, profile, doc)


def introduced_drift(before: DriftReport | None, after: DriftReport, head: AuditResult,
                     default_level: str) -> list[DriftItem]:
    def keys(rep: DriftReport | None, kind: str) -> set[str]:
        if rep is None:
            return set()
        if kind == "stale":
            return {f"{s['row']}\0{s['class']}" for s in rep.stale}
        if kind == "missing":
            return {m["class"] for m in rep.missing}
        return {o["row"] for o in rep.orphans}

    out: list[DriftItem] = []
    old = keys(before, "stale")
    for s in after.stale:
        if f"{s['row']}\0{s['class']}" in old:
            continue
        out.append(DriftItem(
            "stale", after.doc, int(s["line"]), str(s["row"]),
            f"The documentation table row {s['row']!r} says {s['documented']}, but "
            f"{s['class']} is now {s['code']}: update the row.",
            f"文档表格中的 {s['row']!r} 行写的是 {s['documented']}，但 {s['class']} 现在是 "
            f"{s['code']}：请更新该行。",
        ))
    old = keys(before, "missing")
    lines = {(b.file, b.class_name): b.lineno for b in head.builders}
    for m in after.missing:
        if m["class"] in old:
            continue
        out.append(DriftItem(
            "missing", str(m["file"]), lines.get((m["file"], m["class"]), 1), str(m["class"]),
            f"{m['class']} is now {m['effective']}, but {after.doc} does not list it and says "
            f"unlisted backends are {default_level}: add a row.",
            f"{m['class']} 现在是 {m['effective']}，但 {after.doc} 未列出它，且该文档说明未列出的"
            f"后端为 {default_level}：请补上一行。",
        ))
    old = keys(before, "orphan")
    for o in after.orphans:
        if o["row"] in old:
            continue
        out.append(DriftItem(
            "orphan", after.doc, int(o["line"]), str(o["row"]),
            f"The documentation table row {o['row']!r} matches no builder any more.",
            f"文档表格中的 {o['row']!r} 行已不再对应任何构建器。",
        ))
    return out


# --- the check --------------------------------------------------------------------------------


def run_check(
    path: str,
    base: str,
    head: str,
    profile: Profile,
    *,
    warn: Warn | None = None,
    doc: str | None = None,
) -> CheckReport:
    """Audit ``base`` and ``head`` of the repository at ``path`` and compare them."""
    warnings: list[str] = []

    def note(msg: str) -> None:
        warnings.append(msg)
        if warn is not None:
            warn(msg)

    with GitRepo(path) as repo:
        base_sha = _resolve(repo, base, "base revision")
        head_sha = _resolve(repo, head, "head revision")
        files = diff_files(repo, base_sha, head_sha)
        renames = {f.old_path: f.path for f in files
                   if f.status == "R" and f.old_path and f.path}
        cache = AuditCache()
        head_res = audit_revision(repo, head_sha, profile, warn=note, cache=cache)
        base_res = audit_revision(repo, base_sha, profile, warn=note, cache=cache)
        new, kept, fixed = match_findings(base_res, head_res, renames)
        report = CheckReport(
            base, head, base_sha, head_sha, len(files), new=new, fixed=fixed, kept=kept,
            builders_base=len(base_res.builders), builders_head=len(head_res.builders),
        )
        report.changes = declaration_changes(repo, files, profile, note)
        report.effective = effective_changes(base_res, head_res, renames, profile)
        doc = doc or str(profile.docs.get("table_doc", "")) or None
        report.doc = doc
        if doc is None:
            report.doc_note = "the profile names no documentation table"
        else:
            after = _drift_at(repo, head_sha, head_res, profile, doc)
            if isinstance(after, str):
                report.doc_note = after
            else:
                before = _drift_at(repo, base_sha, base_res, profile, doc)
                report.drift = introduced_drift(
                    None if isinstance(before, str) else before, after, head_res,
                    profile.default_level,
                )
    report.warnings = sorted(set(warnings))
    return report
