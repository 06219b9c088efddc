"""JSONL snapshots: one PR per line in GitHub's REST shape, plus ``source`` (and ``prkb``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from ..analyze.diff import trim_patch
from ..errors import InputError
from ..ingest import Collected, IngestResult, ingest_all
from ..profile import Profile
from ..progress import bar
from ..store import Store


@dataclass
class ImportReport:
    lines: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    older: int = 0
    errors: list[str] = field(default_factory=list)
    # lines left out (bad UTF-8, not JSON, not a usable record); a PR seen twice is not one
    failed: int = 0

    def count(self, res: IngestResult) -> None:
        setattr(self, res.outcome, getattr(self, res.outcome) + 1)


def iter_lines(path: Path) -> Iterator[tuple[int, str | None, str | None]]:
    """(line number, text, decode error) for each non-empty line; bad UTF-8 is reported."""
    with path.open("rb") as fh:
        for no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield no, raw.decode("utf-8"), None
            except UnicodeDecodeError as e:
                yield no, None, f"not valid UTF-8 at byte {e.start}"


def import_jsonl(
    store: Store,
    path: Path,
    profile: Profile,
    *,
    on_progress: Callable[[int], None] | None = None,
    relations: Literal["yielded", "changed", "never"] = "never",
) -> ImportReport:
    """Import every good line; bad lines are reported with their number and left out.

    ``relations`` says when the import rebuilds the relations (see
    :func:`prkb.ingest.ingest_all`)."""
    _check(path)
    report = ImportReport()
    ingest_all(
        store, _records(path, report, {}, on_progress), profile, progress=_stored,
        on_error=_refused, relations=relations,
    )
    return report


def import_snapshots(
    store: Store,
    paths: list[Path],
    profile: Profile,
    *,
    quiet: bool = True,
    relations: Literal["yielded", "changed", "never"] = "yielded",
) -> list[ImportReport]:
    """Import several snapshots in one run (one relations rebuild at the end), each with its
    progress bar and report."""
    for path in paths:
        _check(path)
    reports = [ImportReport() for _ in paths]

    def records() -> Iterator[Collected]:
        for path, report in zip(paths, reports, strict=True):
            with bar(f"import {path.name}", quiet=quiet) as b:
                yield from _records(path, report, {}, lambda _n: b.advance())

    ingest_all(
        store, records(), profile, progress=_stored, on_error=_refused, relations=relations
    )
    return reports


@dataclass(frozen=True)
class _Line:
    """Where an imported record came from, and the report it counts in."""

    path: Path
    no: int
    report: ImportReport
    seen: dict[str, int]  # ref -> the first line that held it, in this file


def _check(path: Path) -> None:
    if not path.exists():
        raise InputError(f"snapshot {path} does not exist")
    if path.is_dir():
        raise InputError(f"snapshot {path} is a directory, not a JSONL file")


def _records(
    path: Path,
    report: ImportReport,
    seen: dict[str, int],
    on_progress: Callable[[int], None] | None,
) -> Iterator[Collected]:
    """The parsed lines of one snapshot; lines that are not JSON are reported and left out."""
    for no, text, err in iter_lines(path):
        report.lines += 1
        if on_progress:
            on_progress(no)
        if err:
            report.errors.append(f"{path.name}:{no}: {err}")
            report.failed += 1
            continue
        assert text is not None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            report.errors.append(f"{path.name}:{no}: not JSON: {e.msg} at column {e.colno}")
            report.failed += 1
            continue
        except RecursionError:
            report.errors.append(f"{path.name}:{no}: not JSON: nested too deeply")
            report.failed += 1
            continue
        yield Collected(obj, tag=_Line(path, no, report, seen))


def _stored(item: Collected, res: IngestResult) -> None:
    line: _Line = item.tag
    if res.ref in line.seen and res.outcome in ("updated", "older"):
        line.report.errors.append(
            f"{line.path.name}:{line.no}: PR {res.ref} also on line {line.seen[res.ref]}; "
            "kept the record with the newer updated_at"
        )
    line.seen.setdefault(res.ref, line.no)
    line.report.count(res)


def _refused(item: Collected, e: InputError) -> None:
    line: _Line = item.tag
    line.report.errors.append(f"{line.path.name}:{line.no}{_ident(item.record)}: {e}")
    line.report.failed += 1


def _ident(obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("number"), int | str):
        return f" (PR {str(obj['number'])[:20]})"
    return ""


def export_records(
    store: Store, *, trim: bool = False, profile: Profile | None = None
) -> Iterator[dict[str, Any]]:
    """Every stored record in snapshot shape (GitHub's REST shape plus ``source`` and ``prkb``),
    oldest first."""
    for row in store.prs_for_export():
        rec = store.raw_record(row)
        if trim and profile is not None:
            for f in rec.get("files", []):
                if f.get("patch"):
                    f["patch"] = trim_patch(f["patch"], profile) or None
        yield rec


def export_jsonl(
    store: Store, out: TextIO, *, trim: bool = False, profile: Profile | None = None
) -> int:
    """Write the knowledge base as JSONL to ``path`` (``-``: stdout); returns the number of
    records."""
    n = 0
    for rec in export_records(store, trim=trim, profile=profile):
        out.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
        n += 1
    return n
