"""A report keeps a builder's file and class: a PR that changes a V0 and a V1 class of one
name says each one's spec-decode readiness and effects from its own file's audit reading and
findings, never the other's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbrecords import FILE, change, record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.render.report import report_facts
from prkb.store import Store

PROFILE = load_profile()
V0 = "vllm/attention/backends/foo_attn.py"


def test_readiness_and_effects_of_same_named_builders_are_per_file(tmp_path: Path) -> None:
    def raise_in(file: str) -> dict[str, Any]:
        return {**change("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
                         "raised"), "file": file}

    def reading(file: str, ready: bool) -> dict[str, Any]:
        return {"class": "FooBuilder", "file": file, "declared": "UNIFORM_BATCH",
                "effective": "UNIFORM_BATCH", "dynamic": False, "spec_ready": ready}

    rec = record(7, "[Perf] raise both", "2026-01-05T00:00:00Z",
                 changes=[raise_in(V0), raise_in(FILE)],
                 levels=[reading(V0, True), reading(FILE, False)])
    rec["prkb"]["findings"] = [{"rule": "cg-uniform-without-spec-decode", "file": FILE,
                                "class": "FooBuilder", "message_en": "v1 pinned",
                                "message_zh": "v1 固定"}]
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, rec, PROFILE)
        facts = report_facts(st, "7", PROFILE)
    states = {(c["file"], c["state"], c["source"]) for c in facts.key_code.readings}
    assert states == {(V0, "ready", "reading"), (FILE, "not-ready", "finding")}
    audits = {(b["file"], e["audit"]) for b in facts.risks.builders
              for e in b["effects"] if e["reason"] == "correctness-risk"}
    assert audits == {(V0, "ready"), (FILE, "finding")}
