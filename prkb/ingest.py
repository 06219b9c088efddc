"""Ingest: the one door every record goes through on its way into the knowledge base.

``ingest`` validates, analyses and writes one record and everything derived from it in one
transaction; re-ingesting identical content changes nothing. ``ingest_all`` drives a
collector: the collector yields :class:`Collected` items (a record and the resume cursor it
completes), ``ingest_all`` writes each record with its cursor in one transaction, counts the
outcomes and rebuilds the relations once at the end, before the cursors that must wait for
them (the git collector's branch tip).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .analyze.diff import changes_from_patch
from .analyze.risk import analyse
from .analyze.symbols import SourceError, diff_declarations, parse_classes
from .errors import InputError, PrkbError
from .models import Analysis, Finding, StoredPr, SymbolChange
from .profile import DEFAULT_PROFILE, Profile, load_profile, profile_path
from .records import merge_stored, normalize_record, record_ref
from .store import ProfileBinding, Store, StoreBase, canonical_json, content_hash

# --- what collectors yield ---------------------------------------------------------------------


@dataclass(frozen=True)
class StateUpdate:
    """A collector cursor: ``collect_state`` (source, scope, key) becomes ``value``."""

    source: str
    scope: str
    key: str
    value: str


@dataclass(frozen=True)
class MinedCommit:
    """The git collector's mark: commit ``sha`` of ``repo`` was mined into record ``pr_ref``."""

    repo: str
    sha: str
    pr_ref: str


@dataclass(frozen=True)
class CachedPage:
    """An HTTP page to cache (the GitHub collector's conditional requests)."""

    url: str
    etag: str
    body: str


CursorUpdate = StateUpdate | MinedCommit | CachedPage


@dataclass
class Collected:
    """One item a collector yields: a record and the cursor updates written in the same
    transaction as the record (:meth:`only_cursor`: cursor updates alone).

    ``after_relations``: write the updates only after the relations are rebuilt at the end of
    the run (a cursor that says the whole run is done). ``contents`` (whole files before and
    after) and ``extra_findings`` go to :func:`ingest`; ``tag`` is the collector's own name
    for the item (a line number, a PR number), handed back to its callbacks.
    """

    record: Any | None
    cursor_updates: Sequence[CursorUpdate] = ()
    after_relations: bool = False
    contents: dict[str, tuple[str | None, str | None]] | None = None
    extra_findings: list[Finding] | None = None
    tag: Any = None
    has_record: bool = True  # False: cursor updates alone (a record may itself be None)

    @classmethod
    def only_cursor(
        cls, updates: Sequence[CursorUpdate], *, after_relations: bool = False
    ) -> Collected:
        """An item that writes cursor updates alone."""
        return cls(None, updates, after_relations=after_relations, has_record=False)


@dataclass
class IngestResult:
    ref: str
    outcome: str  # new, updated, unchanged, older
    pr_id: int | None = None
    notes: tuple[str, ...] = ()


@dataclass
class IngestCounts:
    """What one :func:`ingest_all` run did."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    older: int = 0
    failed: int = 0  # records refused (InputError) and handed to ``on_error``
    items: int = 0  # items the collector yielded
    relations: dict[str, Any] | None = field(default=None)  # build_relations' stats, if run

    def count(self, res: IngestResult) -> None:
        setattr(self, res.outcome, getattr(self, res.outcome) + 1)

    def summary(self) -> str:
        """One line: what the run stored (what ``prkb collect`` prints for a collector that
        returns these counts)."""
        rel = self.relations or {}
        return (
            f"{self.items} items collected: {self.new} new, {self.updated} updated, "
            f"{self.unchanged} unchanged, {self.older} older, {self.failed} refused records"
            + (f"; {rel.get('relations', 0)} relations" if self.relations is not None else "")
        )

    def to_json(self) -> dict[str, Any]:
        """The counts as a JSON object (``prkb collect ... --json``)."""
        return asdict(self)


# --- one record ----------------------------------------------------------------------------------


def symbol_changes_for(
    rec: dict[str, Any],
    profile: Profile,
    contents: dict[str, tuple[str | None, str | None]] | None = None,
) -> tuple[list[SymbolChange], list[Finding], list[str]]:
    """Declaration changes of one record: collector facts, else whole files, else patches."""
    notes: list[str] = []
    ext = rec.get("prkb") or {}
    findings = [Finding.from_json(f) for f in ext.get("findings", [])]
    if "symbol_changes" in ext:
        return [SymbolChange.from_json(c) for c in ext["symbol_changes"]], findings, notes
    changes: list[SymbolChange] = []
    contents = contents or {}
    for f in rec.get("files", []):
        path = f["filename"]
        if not path.endswith(".py"):
            continue
        # a renamed file: a class the PR removed from it lived at its previous path
        old_path = f.get("previous_filename") if f.get("status") == "renamed" else None
        if path in contents:
            before_src, after_src = contents[path]
            try:
                before = parse_classes(before_src, profile, filename=path) if before_src else None
                after = parse_classes(after_src, profile, filename=path) if after_src else None
            except SourceError as e:
                notes.append(f"{path}: {e}; read from the patch instead")
            else:
                changes.extend(diff_declarations(path, before, after, profile, old_path))
                continue
        patch = f.get("patch")
        if patch:
            changes.extend(changes_from_patch(path, patch, profile, old_path))
    return changes, findings, notes


def ingest(
    store: Store,
    raw: Any,
    profile: Profile,
    *,
    contents: dict[str, tuple[str | None, str | None]] | None = None,
    extra_findings: list[Finding] | None = None,
    cursor_updates: Sequence[CursorUpdate] = (),
    force: bool = False,
    repo: str | None = None,
) -> IngestResult:
    """Validate, analyse and store one record (one transaction). Raises InputError.

    ``cursor_updates`` are written inside that transaction, and also when the record was
    unchanged, so a collector's bookkeeping never lags its data. ``force``: derive and write
    the record's facts again even when its content is unchanged (``prkb rebuild``, after a
    profile change). ``repo``: the repository the record is stored under (default: the
    record's own, else the profile's).
    """
    incoming = normalize_record(raw)
    repo = repo or (incoming.get("prkb") or {}).get("repo") or profile.repo
    ref = record_ref(incoming)
    existing = store.stored_pr(repo, ref)
    rec, across = _merged(store, repo, ref, existing, incoming)
    digest = content_hash(rec)
    kept = None if force else _kept(existing, digest, rec, across)
    if kept is not None:
        if cursor_updates:
            with store.transaction():
                apply_cursor(store, cursor_updates)
        return IngestResult(ref, kept, existing.id if existing is not None else None)

    def analysed(rec: dict[str, Any]) -> tuple[Analysis, list[str]]:
        changes, findings, notes = symbol_changes_for(rec, profile, contents)
        findings.extend(extra_findings or [])
        analysis = analyse(rec, changes, findings, profile)
        # what the collector said of the record (why it was kept, what it could not read)
        analysis.notes = [*notes, *[str(n) for n in (rec.get("prkb") or {}).get("notes") or []]]
        return analysis, notes

    analysis, notes = analysed(rec)
    first_look = existing
    with store.transaction():
        # another process may have written this PR since the look above: look again
        existing = store.stored_pr(repo, ref)
        if existing != first_look and incoming.get("source") in ("git", "github"):
            # merge with what is there now
            rec, across = _merged(store, repo, ref, existing, incoming)
            digest = content_hash(rec)
            analysis, notes = analysed(rec)
        kept = None if force else _kept(existing, digest, rec, across)
        if kept is not None and existing is not None:
            apply_cursor(store, cursor_updates)
            return IngestResult(ref, kept, existing.id)
        levels = (rec.get("prkb") or {}).get("builder_levels") or []
        sha = rec.get("merge_commit_sha")
        if sha and levels:
            when = rec.get("merged_at") or rec.get("created_at") or ""
            store.write_builder_levels(repo, sha, when, ref, levels)
        # the PR's own rows last: the change journal's newest row then names this PR (a site
        # build reads that row again, prkb.store.database changes_since), not a builder's class
        pr_id = _write(store, repo, ref, rec, digest, analysis, existing)
        apply_cursor(store, cursor_updates)
    return IngestResult(ref, "new" if existing is None else "updated", pr_id, tuple(notes))


def _merged(
    store: Store, repo: str, ref: str, existing: StoredPr | None, incoming: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    """``incoming``, or, for a PR stored from the other of git and GitHub, the two merged
    (:func:`prkb.records.merge_stored`: code facts from git, discussion from GitHub)."""
    if existing is None or incoming.get("source") not in ("git", "github"):
        return incoming, False
    stored = store.stored_record(repo, ref)
    merged = merge_stored(normalize_record(stored) if stored is not None else None, incoming)
    # dates of two sources do not order records (a commit's date, a PR's last activity): a
    # record that changes the stored one's source is never "older" than it
    return merged, stored is not None and stored.get("source") != merged.get("source")


def apply_cursor(store: Store, updates: Iterable[CursorUpdate]) -> None:
    """Write cursor updates (call inside a transaction)."""
    for u in updates:
        if isinstance(u, StateUpdate):
            store.set_state(u.source, u.scope, u.key, u.value)
        elif isinstance(u, MinedCommit):
            store.mark_mined(u.repo, u.sha, u.pr_ref)
        else:
            store.cache_page(u.url, u.etag, u.body)


def _kept(
    existing: StoredPr | None, digest: str, rec: dict[str, Any], across: bool = False
) -> str | None:
    """"unchanged" or "older" when the stored record stays as it is; None to write."""
    if existing is None:
        return None
    if existing.raw_hash == digest:
        return "unchanged"
    if across:
        return None
    if existing.updated_at and rec.get("updated_at") and rec["updated_at"] < existing.updated_at:
        return "older"
    return None


def _write(
    store: Store,
    repo: str,
    ref: str,
    rec: dict[str, Any],
    digest: str,
    analysis: Analysis,
    existing: StoredPr | None,
) -> int:
    cols = {
        "repo": repo,
        "ref": ref,
        "number": rec.get("number"),
        "title": rec.get("title") or "",
        "body": rec.get("body"),
        "state": rec["state"],
        "author": (rec.get("user") or {}).get("login"),
        "created_at": rec.get("created_at"),
        "updated_at": rec.get("updated_at"),
        "closed_at": rec.get("closed_at"),
        "merged_at": rec.get("merged_at"),
        "merge_commit_sha": rec.get("merge_commit_sha"),
        "url": rec.get("html_url"),
        "base_ref": (rec.get("base") or {}).get("ref"),
        "labels": json.dumps([lab["name"] for lab in rec.get("labels", [])], ensure_ascii=False),
        "source": rec["source"],
        "raw": canonical_json(rec),
        "raw_hash": digest,
        "analysis": canonical_json(
            {
                "tests_touched": analysis.tests_touched,
                "platforms": analysis.platforms,
                "core_paths": analysis.core_paths,
                "notes": analysis.notes,
                # the code's state change the collector read (None: not read)
                "state_changes": (rec.get("prkb") or {}).get("state_changes"),
                # the symbol's spellings the code reads at the parent and at the commit
                "reads": (rec.get("prkb") or {}).get("reads"),
                # the files of the mechanism it changed, the levels the enum gained or lost
                "framework": (rec.get("prkb") or {}).get("framework"),
                # the audit findings at the parent that no longer hold at the commit
                "findings_fixed": (rec.get("prkb") or {}).get("findings_fixed") or [],
            }
        ),
    }
    pr_id = store.write_pr_row(cols, existing)
    store.write_pr_files(pr_id, rec.get("files", []))
    store.write_symbol_changes(pr_id, analysis.symbol_changes)
    store.write_risk_tags(pr_id, [t.code for t in analysis.risk_tags])
    store.write_findings(pr_id, analysis.findings)
    if rec.get("number") is not None:
        store.upsert_pr_node(rec["number"], rec.get("title"), repo)
    return pr_id


# --- a collector's run -------------------------------------------------------------------------


def ingest_all(
    store: Store,
    records: Iterable[Collected],
    profile: Profile,
    *,
    progress: Callable[[Collected, IngestResult], None] | None = None,
    on_error: Callable[[Collected, InputError], None] | None = None,
    relations: Literal["yielded", "changed", "never"] = "yielded",
) -> IngestCounts:
    """Write what a collector yields, then rebuild the relations once.

    Each item's record is ingested with its cursor updates in one transaction (an item
    without a record writes its updates alone); ``progress`` sees each result before the
    collector is asked for its next item. A refused record (InputError) goes to ``on_error``
    and the run goes on, or, without ``on_error``, ends the run. The relations are rebuilt
    when the collector yielded anything (``"yielded"``: a resumed run rebuilds what a killed
    one left undone), only when a record was new or updated (``"changed"``), or never; the
    ``after_relations`` updates are written after that.
    """
    counts = IngestCounts()
    final: list[CursorUpdate] = []
    try:
        for item in records:
            counts.items += 1
            if item.after_relations:
                final.extend(item.cursor_updates)
                if not item.has_record:
                    continue
            updates = () if item.after_relations else item.cursor_updates
            if not item.has_record:
                if updates:
                    with store.transaction():
                        apply_cursor(store, updates)
                continue
            try:
                res = ingest(
                    store, item.record, profile, contents=item.contents,
                    extra_findings=item.extra_findings, cursor_updates=updates,
                )
            except InputError as e:
                if on_error is None:
                    raise
                counts.failed += 1
                on_error(item, e)
                continue
            counts.count(res)
            if progress is not None:
                progress(item, res)
    finally:
        close = getattr(records, "close", None)
        if close is not None:  # a generator stopped early releases what it holds
            close()
    changed = counts.new + counts.updated > 0
    if (relations == "yielded" and counts.items) or (relations == "changed" and changed):
        from .graph import build_relations  # networkx: imported only when there is work

        counts.relations = build_relations(store, profile)
    if final:
        # the cursor moves only once the relations are built: a run killed in between redoes
        # them
        with store.transaction():
            apply_cursor(store, final)
    return counts


# --- the profile a knowledge base was built with ---------------------------------------------


class ProfileMismatch(PrkbError):
    """A profile other than the one the knowledge base's facts were derived with."""

    exit_code = 2


#: The version of what prkb derives from a record when it stores it (risk tags, platforms,
#: findings, the relations). A knowledge base records the version its facts were derived
#: with, and a later prkb that derives them otherwise says so until ``prkb rebuild``.
#: 2: "platform-specific" only when every changed source file is a platform's; no
#: "declaration removed" tag for a class that is gone or leaves no value (2026-12-03).
ANALYSIS = "2"


def binding_of(profile: Profile, asked: str | None) -> ProfileBinding:
    """What a knowledge base records of ``profile`` (loaded from ``asked``: a bundled name, a
    path, or None for the default)."""
    source = asked or DEFAULT_PROFILE
    if Path(source).suffix == ".toml":
        source = str(profile_path(source).resolve())
    return ProfileBinding(profile.name, source, profile.content_hash, ANALYSIS)


def profile_for(
    db: str | Path, asked: str | None, *, warn: Callable[[str], None] | None = None
) -> Profile:
    """The profile to use on the knowledge base ``db``: the one it records when none is
    asked for; the one asked for when it agrees with the record (or nothing is recorded).

    A different profile is refused (:class:`ProfileMismatch`): its facts would mix with the
    recorded one's (``prkb rebuild --profile NAME`` re-derives them). A recorded profile whose
    text changed since is used, with a warning that older facts came from its earlier text.
    """
    recorded = StoreBase.peek_profile(db)
    if asked is None and recorded is not None:
        try:
            profile = load_profile(recorded.source or recorded.name)
        except InputError as e:
            raise InputError(
                f"knowledge base {db} was built with profile {recorded.name!r} "
                f"({recorded.source}), which cannot be loaded here: {e}; give --profile"
            ) from None
    else:
        profile = load_profile(asked)
    if recorded is None:
        return profile
    if profile.name != recorded.name:
        raise ProfileMismatch(
            f"knowledge base {db} holds facts derived with profile {recorded.name!r}, not "
            f"{profile.name!r}: leave --profile out (or give {recorded.name!r}) to use it, or "
            f"re-derive every record with the new one: prkb --db {db} rebuild --profile "
            f"{asked or profile.name}"
        )
    if recorded.hash and profile.content_hash != recorded.hash and warn is not None:
        warn(
            f"profile {profile.name!r} changed since knowledge base {db} recorded it: facts "
            f"stored before were derived with its earlier text ('prkb rebuild' re-derives them)"
        )
    elif recorded.analysis != ANALYSIS and warn is not None:
        warn(
            f"knowledge base {db} holds facts an earlier prkb derived (analysis "
            f"{recorded.analysis or '1'}, now {ANALYSIS}): stored risk tags and platforms may "
            f"differ from what this one derives ('prkb rebuild' re-derives them)"
        )
    return profile


@dataclass
class RebuildCounts:
    """What :func:`rebuild` did."""

    records: int = 0
    updated: int = 0
    git_records: int = 0  # records whose declaration facts come from the git collector
    relations: dict[str, Any] | None = None


def rebuild(store: Store, profile: Profile, binding: ProfileBinding,
            *, progress: Callable[[int, int], None] | None = None) -> RebuildCounts:
    """Re-derive every stored record with ``profile`` (risk tags, platforms, findings,
    declaration changes read from patches), rebuild the relations, and record ``binding``.

    Records from git keep the declaration facts the git collector computed (with whichever
    profile it ran under); their commits are unmarked so the next ``collect git`` mines them
    again with this profile. Each record is its own transaction: an interrupted rebuild
    leaves whole records, and running it again finishes the work.
    """
    counts = RebuildCounts()
    rows = store.all_prs()
    for i, row in enumerate(rows, 1):
        rec = store.raw_record(row)
        counts.records += 1
        if rec.get("source") == "git":
            counts.git_records += 1
        res = ingest(store, rec, profile, force=True, repo=str(row["repo"]))
        if res.outcome in ("new", "updated"):
            counts.updated += 1
        if progress is not None:
            progress(i, len(rows))
    from .graph import build_relations  # networkx: imported only when there is work

    counts.relations = build_relations(store, profile)
    with store.transaction():
        if counts.git_records:
            store.forget_git_cursors()
        store.set_profile(binding)
    return counts
