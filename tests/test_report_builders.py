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
                "effective": "UNIFORM_BATCH", "dynamic": False, "meets_rule": ready}

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


def _states(st: Store) -> set[tuple[str, str, str]]:
    facts = report_facts(st, "7", PROFILE)
    return {(c["file"], c["state"], c["source"]) for c in facts.key_code.readings}


def _two_readings() -> dict[str, Any]:
    """A PR raising one class of two files; the audit read one as meeting its rule and the
    other as not, and says so under the name prkb gave that reading before 0009
    (``spec_ready``)."""
    rec = record(7, "[Perf] raise both", "2026-01-05T00:00:00Z",
                 changes=[{**change("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
                                    "UNIFORM_BATCH", "raised"), "file": f} for f in (V0, FILE)],
                 levels=[{"class": "FooBuilder", "file": f, "declared": "UNIFORM_BATCH",
                          "effective": "UNIFORM_BATCH", "dynamic": False, "spec_ready": ok}
                         for f, ok in ((V0, True), (FILE, False))])
    return rec


def test_a_record_of_an_older_prkb_reads_the_same(tmp_path: Path) -> None:
    """An exported record that calls the rule's reading ``spec_ready`` is read as
    ``meets_rule``, and stored so."""
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, _two_readings(), PROFILE)
        assert _states(st) == {(V0, "ready", "reading"), (FILE, "not-ready", "reading")}
        raw = st.conn.execute("SELECT raw FROM prs").fetchone()[0]
        assert '"meets_rule":' in raw and "spec_ready" not in raw
        assert {(r.file, r.meets_rule) for r in st.level_readings()} == {(V0, True),
                                                                         (FILE, False)}


def test_an_older_knowledge_base_is_migrated(tmp_path: Path) -> None:
    """A knowledge base as prkb left it before migration 0009: the column and the stored
    records say ``spec_ready``; after it, both say ``meets_rule`` and the report reads the
    same readings."""
    import sqlite3

    path = tmp_path / "kb.sqlite"
    with Store(path) as st:
        ingest(st, _two_readings(), PROFILE)
    with sqlite3.connect(path) as conn:  # back to the shape before 0009
        conn.execute("ALTER TABLE builder_levels RENAME COLUMN meets_rule TO spec_ready")
        conn.execute("UPDATE prs SET raw = replace(raw, '\"meets_rule\":', '\"spec_ready\":')")
        conn.execute("DELETE FROM migrations WHERE name = '0009_rule_reading'")
        assert conn.execute("SELECT count(*) FROM prs WHERE raw LIKE '%spec_ready%'"
                            ).fetchone() == (1,)
    with Store(path) as st:
        assert "0009_rule_reading" in st.applied_migrations()
        assert _states(st) == {(V0, "ready", "reading"), (FILE, "not-ready", "reading")}
        assert {(r.file, r.meets_rule) for r in st.level_readings()} == {(V0, True),
                                                                         (FILE, False)}
        assert "spec_ready" not in st.conn.execute("SELECT raw FROM prs").fetchone()[0]
