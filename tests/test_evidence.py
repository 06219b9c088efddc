"""Relation evidence as data (prkb/evidence.py): stored as JSON items, old text migrated to a
quoted legacy item, worded per language by one catalog sentence per kind
(templates/report/_evidence.j2), and read in English by the graph exports."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from prkb import evidence
from prkb.graph import export, load_graph
from prkb.profile import load_profile
from prkb.render.report import render_report
from prkb.store import Store
from tests.evidence_items import ITEMS
from tests.report_helpers import add, record, seeded_store
from tests.zhstyle import CATEGORIES, measure, proper_names

# what each item reads as in English and Chinese: tests/golden/evidence/{en,zh}.txt, a line
# per sentence (an item of some kinds says two or three things)
GOLDEN = Path(__file__).parent / "golden" / "evidence"


def _evidence_lines(report: str) -> list[str]:
    """The evidence sub-items of the report's relation list (Markdown)."""
    related = report.split("\n## ")[-1]
    return [ln[4:] for ln in related.splitlines() if ln.startswith("  - ")]


def test_every_kind_is_one_catalog_sentence_per_language(tmp_path: Path) -> None:
    store = seeded_store(tmp_path)
    add(store, record(900))
    store.conn.execute(
        "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
        "VALUES ('pr:900', 'pr:901', 'follow-up-of', ?, 0.8, 'text')", (evidence.make(*ITEMS),)
    )
    store.conn.commit()
    names = proper_names(load_profile())
    for lang in ("en", "zh"):
        md = render_report(store, 900, lang=lang, fmt="md")
        want = (GOLDEN / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        assert _evidence_lines(md) == want, lang
        txt = render_report(store, 900, lang=lang, fmt="txt")
        assert "`quote`" not in txt and "[{" not in txt
    zh = render_report(store, 900, lang="zh", fmt="md")
    found = measure(zh.split("\n## ")[-1], names)
    assert {c: [s.text for s in found[c]] for c in CATEGORIES} == {c: [] for c in CATEGORIES}


def test_text_evidence_of_an_old_knowledge_base_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    Store(path).close()
    old = "blame on the parent: 1 changed line(s) in a.py | #9 body: after #8"
    items = evidence.make({"kind": "record", "text": "kept"})
    with sqlite3.connect(path) as conn:  # as prkb before migration 0008 left it
        conn.execute("DELETE FROM migrations WHERE name = '0008_evidence_items'")
        conn.executemany(
            "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
            "VALUES (?, ?, 'follow-up-of', ?, 0.8, 'lineage')",
            [("pr:9", "pr:8", old), ("pr:9", "pr:7", ""), ("pr:9", "pr:6", items)],
        )
    st = Store(path)
    got = {r.target: r.evidence for r in st.relations()}
    assert json.loads(got["pr:8"]) == [{"kind": "legacy", "text": old}]
    assert got["pr:7"] == "[]" and got["pr:6"] == items
    # and text that is no JSON list still reads as one quoted item
    assert evidence.loads("after #1 lands") == [{"kind": "legacy", "text": "after #1 lands"}]
    st.close()


def test_graph_exports_carry_a_readable_evidence(bundled: Store) -> None:
    g = load_graph(bundled)
    data = json.loads(export(g, "json"))
    edge = next(e for e in data["edges"]
                if (e["source"], e["target"], e["type"]) == (47144, 47310, "alternative-to"))
    assert edge["evidence"].endswith("#47310 closed unmerged; #47144 is the merged fix of #42885")
    assert edge["evidence_items"][-1] == {"kind": "closed-unmerged", "pr": "#47310",
                                          "fix": "#47144", "of": "#42885"}
    assert all("[{" not in e["evidence"] for e in data["edges"])
    graphml = export(g, "graphml")
    assert "the merged fix of #42885" in graphml and "evidence_items" not in graphml
