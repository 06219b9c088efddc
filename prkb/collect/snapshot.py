"""JSONL snapshots: one PR per line in GitHub's REST shape, plus ``source`` (and ``prkb``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..analyze.diff import trim_patch
from ..errors import InputError
from ..ingest import IngestResult, ingest
from ..profile import Profile
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
) -> ImportReport:
    """Import every good line; bad lines are reported with their number and left out."""
    if not path.exists():
        raise InputError(f"snapshot {path} does not exist")
    if path.is_dir():
        raise InputError(f"snapshot {path} is a directory, not a JSONL file")
    report = ImportReport()
    seen: dict[str, int] = {}
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
        try:
            res = ingest(store, obj, profile)
        except InputError as e:
            ident = _ident(obj)
            report.errors.append(f"{path.name}:{no}{ident}: {e}")
            report.failed += 1
            continue
        if res.ref in seen and res.outcome in ("updated", "older"):
            report.errors.append(
                f"{path.name}:{no}: PR {res.ref} also on line {seen[res.ref]}; "
                "kept the record with the newer updated_at"
            )
        seen.setdefault(res.ref, no)
        report.count(res)
    return report


def _ident(obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("number"), int | str):
        return f" (PR {str(obj['number'])[:20]})"
    return ""


def export_records(
    store: Store, *, trim: bool = False, profile: Profile | None = None
) -> Iterator[dict[str, Any]]:
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
    n = 0
    for rec in export_records(store, trim=trim, profile=profile):
        out.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
        n += 1
    return n
