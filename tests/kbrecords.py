"""PR records to ingest in knowledge-base tests.

- ``github_pr(number, **kw)``: a merged PR as the GitHub collector stores it, whose patch
  raises ``RocmAttentionMetadataBuilder`` from UNIFORM_BATCH to ALWAYS; ``kw`` overrides fields.
- ``record(number, title, date, ...)``: a PR whose facts are given, not derived from a patch:
  ``symbol_changes`` (built with ``change``), git ``lineage`` (blamed lines; the record is
  then a git record) and ``builder_levels``, all on ``FILE``. Merged records get the commit
  ``sha(number)``. ``march(day)`` is a date in March 2026 for ``date``.
"""

from __future__ import annotations

import hashlib
from typing import Any

FILE = "vllm/v1/attention/backends/foo_attn.py"


def github_pr(number: int, **kw: object) -> dict[str, object]:
    rec: dict[str, object] = {
        "number": number,
        "title": f"[ROCm] change {number}",
        "state": "merged",
        "merged_at": "2026-03-01T10:00:00Z",
        "updated_at": "2026-03-01T10:00:00Z",
        "user": {"login": "dev"},
        "files": [
            {
                "filename": "vllm/v1/attention/backends/rocm_attn.py",
                "status": "modified",
                "additions": 1,
                "deletions": 1,
                "patch": (
                    "@@ -10,3 +10,3 @@ class RocmAttentionMetadataBuilder(Base):\n"
                    "-    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n"
                    "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n"
                ),
            }
        ],
        "source": "github",
    }
    rec.update(kw)
    return rec


def sha(n: int) -> str:
    """The merge commit of PR ``n`` (40 hex digits)."""
    return hashlib.sha1(str(n).encode()).hexdigest()


def march(day: int) -> str:
    return f"2026-03-{day:02d}T00:00:00Z"


def change(attr: str, before: str | None, after: str | None, direction: str,
           cls: str = "FooBuilder", before_attr: str | None = None) -> dict[str, Any]:
    return {"file": FILE, "class": cls, "attr": attr, "before": before, "after": after,
            "direction": direction, "before_attr": before_attr}


def record(number: int, title: str, date: str | None, *, state: str = "merged",
           changes: list[dict[str, Any]] | None = None, body: str = "",
           lineage: list[dict[str, Any]] | None = None,
           levels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    prkb: dict[str, Any] = {"symbol_changes": changes or []}
    if lineage is not None:
        prkb["lineage"] = lineage
    if levels is not None:
        prkb["builder_levels"] = levels
    return {
        "number": number,
        "title": title,
        "body": body,
        "state": state,
        "created_at": date,
        "merged_at": date if state == "merged" else None,
        "closed_at": date if state != "open" else None,
        "merge_commit_sha": sha(number) if state == "merged" else None,
        "files": [{"filename": FILE, "status": "modified"}],
        "source": "git" if lineage is not None else "github",
        "prkb": prkb,
    }
