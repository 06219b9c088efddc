"""The digest tests' knowledge base: PRs inside, before and after the week ``WEEK``
(2026-W21), one with a hostile title (``EVIL``), and one relation. ``digest_kb(tmp_path)``
writes it and returns its path; the ``digest_db`` fixture (conftest) does so per test.
``ZH_TITLE`` is the Chinese subject line of that week's digest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.store import Store

WEEK = "2026-W21"  # Monday 2026-05-18 to Sunday 2026-05-24
EVIL = "Fix <script>alert(1)</script> & \x1b[31m修复 TritonMLA"
ZH_TITLE = "注意力元数据构建器的 CUDA Graph 支持 · 周报 2026-W21"
EN_TITLE = "CUDA graph support of attention metadata builders · Weekly digest 2026-W21"


def _rec(number: int, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "number": number,
        "title": kw.pop("title", f"[ROCm] change {number}"),
        "state": kw.pop("state", "merged"),
        "html_url": f"https://github.com/vllm-project/vllm/pull/{number}",
        "user": {"login": "someone"},
        "source": "curated",
        "files": kw.pop("files", [
            {"filename": "vllm/v1/attention/backends/mla/triton_mla.py", "status": "modified"}
        ]),
        "prkb": {"repo": "vllm-project/vllm", **kw.pop("prkb", {"symbol_changes": []})},
    }
    rec.update(kw)
    return rec


def digest_kb(tmp_path: Path) -> Path:
    """A KB with PRs inside, before and after 2026-W21, and one relation."""
    db = tmp_path / "kb.sqlite"
    profile = load_profile()
    records = [
        _rec(
            101, title=EVIL, created_at="2026-05-10T09:00:00Z", merged_at="2026-05-19T08:00:00Z",
            prkb={
                "symbol_changes": [{
                    "file": "vllm/v1/attention/backends/mla/triton_mla.py",
                    "class": "TritonMLAMetadataBuilder", "attr": "_cudagraph_support",
                    "before": "UNIFORM_BATCH", "after": "UNIFORM_SINGLE_TOKEN_DECODE",
                    "direction": "lowered",
                }],
                "findings": [{
                    "rule": "cg-uniform-without-spec-decode",
                    "file": "vllm/v1/attention/backends/mla/triton_mla.py",
                    "class": "TritonMLAMetadataBuilder",
                    "message_en": "declares UNIFORM_BATCH without spec-decode reordering",
                    "message_zh": "声明 UNIFORM_BATCH 但未启用推测解码重排",
                }],
            },
        ),
        _rec(102, state="open", title="[XPU] open this week", created_at="2026-05-20T12:00:00"),
        _rec(103, state="closed", title="[CPU] closed unmerged", created_at="2026-05-01T00:00:00Z",
             closed_at="2026-05-24T23:59:59Z"),
        _rec(104, title="merged next week", created_at="2026-05-01T00:00:00Z",
             merged_at="2026-05-25T00:00:00Z"),
        _rec(105, title="merged last week", created_at="2026-05-01T00:00:00Z",
             merged_at="2026-05-17T23:59:59Z"),
    ]
    with Store(db) as store:
        for rec in records:
            ingest(store, rec, profile)
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
                "VALUES ('pr:101', 'pr:90', 'fixes-regression-from', ?, 0.9, 'text')",
                ('[{"kind":"quote","pr":"#101","text":"a regression from #90","where":"body"}]',),
            )
    return db
