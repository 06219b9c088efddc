"""The typed graph: build_relations over the bundled data, conflicts, nodes, tags, exports, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from prkb import evidence
from prkb.cli import main
from prkb.graph import build_relations, load_graph, resolve, subgraph, to_mermaid
from prkb.ingest import ingest
from prkb.models import Relation
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()
SNAPSHOTS = Path(__file__).resolve().parent.parent / "data" / "snapshots"


def rel_rows(st: Store) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in st.conn.execute("SELECT * FROM relations ORDER BY 1, 2, 3")]


def pr(number: int, body: str = "", title: str = "change", **extra: Any) -> dict[str, Any]:
    return {"number": number, "title": title, "body": body, "state": "open", **extra}


def test_seed_records_connect_as_the_reports_describe(bundled: Store) -> None:
    rows = {(r[0], r[1]): r for r in rel_rows(bundled)}
    frf = rows[("pr:47144", "pr:42885")]
    assert frf[2] == "fixes-regression-from" and frf[4] >= 0.6 and "#42885" in frf[3]
    dep = rows[("pr:45149", "pr:47766")]
    assert dep[2] == "depends-on" and "landed" in dep[3]
    alt = rows[("pr:47144", "pr:47310")]  # symmetric: stored once, lower number first
    assert alt[2] == "alternative-to" and ("pr:47310", "pr:47144") not in rows
    facts = bundled.pr_facts(47144)
    rel = {(r["type"], r["other"], r["direction"]) for r in facts["relations"]}
    assert ("fixes-regression-from", 42885, "out") in rel
    assert ("alternative-to", 47310, "out") in rel
    facts = bundled.pr_facts(47766)
    assert ("depends-on", 45149, "in") in {
        (r["type"], r["other"], r["direction"]) for r in facts["relations"]
    }


def test_depends_on_tag_follows_outgoing_depends_on_edges(bundled: Store) -> None:
    tags = {t["code"] for t in bundled.pr_facts(45149)["risk_tags"]}
    assert "depends-on-pr" in tags
    assert "depends-on-pr" not in {t["code"] for t in bundled.pr_facts(47766)["risk_tags"]}


def test_referenced_but_unknown_prs_are_pr_nodes_without_title(bundled: Store) -> None:
    row = bundled.conn.execute("SELECT * FROM nodes WHERE key = 'pr:42885'").fetchone()
    if bundled.pr_row(42885) is None:
        assert row["kind"] == "pr" and row["title"] is None and row["number"] == 42885
    else:  # the git snapshot of real history brought it in
        assert row["title"]


def test_build_is_idempotent_and_drops_stale_relations(tmp_path: Path) -> None:
    st = Store(tmp_path / "kb.sqlite")
    ingest(st, pr(100, "This depends on #5.", updated_at="2026-01-01T00:00:00Z"), PROFILE)
    ingest(st, pr(5, "Base work.", title="Base"), PROFILE)
    first = build_relations(st, PROFILE)
    rows = rel_rows(st)
    nodes = [tuple(r) for r in st.conn.execute("SELECT * FROM nodes ORDER BY key")]
    second = build_relations(st, PROFILE)
    assert rows == rel_rows(st) and first == second
    assert nodes == [tuple(r) for r in st.conn.execute("SELECT * FROM nodes ORDER BY key")]
    assert "depends-on-pr" in {t["code"] for t in st.pr_facts(100)["risk_tags"]}
    # the text changes: the dependency and the tag go; the unknown node #7 is gone too
    ingest(st, pr(100, "Mentions #7 only.", updated_at="2026-01-02T00:00:00Z"), PROFILE)
    build_relations(st, PROFILE)
    ingest(st, pr(100, "No references.", updated_at="2026-01-03T00:00:00Z"), PROFILE)
    build_relations(st, PROFILE)
    assert rel_rows(st) == []
    assert "depends-on-pr" not in {t["code"] for t in st.pr_facts(100)["risk_tags"]}
    keys = {r[0] for r in st.conn.execute("SELECT key FROM nodes")}
    assert keys == {"pr:100", "pr:5"}


def test_issue_external_and_commit_nodes(tmp_path: Path) -> None:
    st = Store(tmp_path / "kb.sqlite")
    # an issue another collector recorded
    st.conn.execute(
        "INSERT INTO nodes(key, kind, number, title) VALUES ('issue:8', 'issue', 8, 'x')"
    )
    base = {**pr(30, title="Base"), "state": "merged", "merged_at": "2026-01-01T00:00:00Z",
            "merge_commit_sha": "ab" * 20}
    ingest(st, base, PROFILE)
    body = (
        "Fixes issue #7. Fixes #8. Depends on pytorch/pytorch#9.\n\n"
        f"This reverts commit {'ab' * 4}. Also reverts commit {'cd' * 20}."
    )
    ingest(st, pr(100, body), PROFILE)
    build_relations(st, PROFILE)
    nodes = {r["key"]: dict(r) for r in st.conn.execute("SELECT * FROM nodes")}
    assert nodes["issue:7"]["kind"] == "issue"
    assert nodes["ext:pytorch/pytorch#9"]["kind"] == "external"
    assert nodes["ext:pytorch/pytorch#9"]["repo"] == "pytorch/pytorch"
    assert nodes[f"commit:{'cd' * 20}"]["kind"] == "commit"
    rows = {(r[0], r[1]): r[2] for r in rel_rows(st)}
    # closing keywords on an issue are kept as mentions, with the phrase as evidence
    assert rows[("pr:100", "issue:7")] == "mentions"
    assert rows[("pr:100", "issue:8")] == "mentions"
    assert rows[("pr:100", "ext:pytorch/pytorch#9")] == "depends-on"
    # a short sha of a stored PR's merge commit resolves to that PR
    assert rows[("pr:100", "pr:30")] == "reverts"
    assert rows[("pr:100", f"commit:{'cd' * 20}")] == "reverts"


def test_curated_relations_in_records(tmp_path: Path) -> None:
    st = Store(tmp_path / "kb.sqlite")
    rec = pr(100, "", prkb={"relations": [
        {"type": "follow-up-of", "target": 90, "evidence": "stated by the maintainer"},
        {"type": "no-such-type", "target": 91},
    ]})
    ingest(st, rec, PROFILE)
    build_relations(st, PROFILE)
    assert rel_rows(st) == [
        ("pr:100", "pr:90", "follow-up-of",
         '[{"kind":"record","text":"stated by the maintainer"}]', 1.0, "curated")
    ]


def R(s: str, t: str, typ: str, conf: float, ev: str = "e", origin: str = "text") -> Relation:
    """A relation whose evidence is one item per text of ``ev`` (texts joined by " | ")."""
    return Relation(s, t, typ, evidence.make(*({"kind": "record", "text": x}
                                              for x in ev.split(" | "))), conf, origin)


def test_resolve_conflicts_deterministically() -> None:
    got = resolve([
        R("pr:2", "pr:1", "mentions", 0.3, "cc"),
        R("pr:2", "pr:1", "depends-on", 0.9, "needs #1"),
        R("pr:2", "pr:1", "modifies-declaration-of", 1.0, "timeline", "timeline"),
        R("pr:2", "pr:1", "depends-on", 0.8, "after #1 lands"),
        R("pr:2", "pr:1", "depends-on", 0.9, "needs #1"),
        R("pr:5", "pr:3", "alternative-to", 0.8, "alt"),
        R("pr:3", "pr:5", "alternative-to", 0.7, "same as"),
        R("pr:7", "pr:7", "mentions", 0.3),
    ])
    assert got == [
        R("pr:2", "pr:1", "depends-on", 0.9, "needs #1 | after #1 lands"),
        R("pr:3", "pr:5", "alternative-to", 0.8, "alt | same as"),
    ]
    # order of the input does not matter
    assert resolve(reversed([
        R("pr:2", "pr:1", "mentions", 0.3, "cc"), R("pr:2", "pr:1", "reverts", 0.9, "r"),
    ])) == [R("pr:2", "pr:1", "reverts", 0.9, "r")]


def test_subgraph_depth_and_types(bundled: Store) -> None:
    g = load_graph(bundled)
    h = subgraph(g, "pr:45149", depth=1)
    assert {"pr:45149", "pr:47766"} <= set(h.nodes)
    assert "pr:47144" not in h.nodes
    h = subgraph(g, "pr:47144", depth=3, types=["alternative-to"])
    assert set(h.nodes) == {"pr:47144", "pr:47310"}
    h = subgraph(g, None, types=["depends-on"])
    assert {k for _, _, k in h.edges(keys=True)} == {"depends-on"}
    assert subgraph(g, "pr:47144", depth=0).number_of_nodes() == 1


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_graph_command_formats(bundled: Store, capsys: pytest.CaptureFixture[str],
                               tmp_path: Path) -> None:
    db = str(bundled.path)
    rc, out, _ = run(capsys, "--db", db, "graph", "47144", "--depth", "1")
    assert rc == 0
    data = json.loads(out)
    ids = {n["id"]: n for n in data["nodes"]}
    assert ids["pr:47144"]["kind"] == "pr" and ids["pr:47144"]["number"] == 47144
    assert ids["pr:42885"]["kind"] == "pr"
    edge = next(e for e in data["edges"] if e["target"] == 42885)
    assert edge["source"] == 47144 and edge["type"] == "fixes-regression-from"
    assert 0.0 <= edge["confidence"] <= 1.0 and edge["evidence"]

    rc, out, _ = run(capsys, "--db", db, "graph", "--types", "depends-on", "--format", "dot")
    assert rc == 0 and out.startswith("digraph prkb {")
    assert '"pr:45149" -> "pr:47766" [label="depends-on (0.9)"];' in out

    path = tmp_path / "g.graphml"
    rc, _, _ = run(capsys, "--db", db, "graph", "--format", "graphml", "-o", str(path))
    assert rc == 0
    g = nx.read_graphml(path)
    assert g.has_edge("pr:47144", "pr:42885")

    rc, out, _ = run(capsys, "--db", db, "graph", "45149", "--format", "mermaid")
    assert rc == 0 and out.startswith("graph LR") and "|depends-on|" in out

    rc, _, err = run(capsys, "--db", db, "graph", "--types", "caused-by")
    assert rc == 2 and "caused-by" in err
    rc, _, err = run(capsys, "--db", db, "graph", "123456")
    assert rc == 1 and "123456" in err
    rc, out, _ = run(capsys, "--db", db, "graph", "--rebuild", "--types", "depends-on")
    assert rc == 0 and json.loads(out)["edges"]


def test_untrusted_titles_stay_text_in_exports(tmp_path: Path) -> None:
    st = Store(tmp_path / "kb.sqlite")
    evil = 'x"]; A --> B["<img src=x onerror=alert(1)> \\" `a` \x1b[31m'
    ingest(st, pr(100, "Depends on #5.", title=evil), PROFILE)
    ingest(st, pr(5, "", title="base"), PROFILE)
    build_relations(st, PROFILE)
    g = load_graph(st)
    mer = to_mermaid(g)
    assert "<img" not in mer and "\x1b" not in mer
    assert mer.count('"') % 2 == 0
    for line in mer.splitlines()[1:]:
        assert line.count('"') in (0, 2)
    from prkb.graph import to_dot

    dot = to_dot(g)
    assert "\x1b" not in dot and '\\"' in dot
    label = next(line for line in dot.splitlines() if line.startswith('  "pr:100" ['))
    # the only unescaped quotes are the ones around the key and the label
    assert label.replace('\\"', "").count('"') == 4


_GRAPHML_NS = "{http://graphml.graphdrawing.org/xmlns}"


def test_graphml_export_is_valid_graphml_with_lowercase_booleans(
    bundled: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import xml.etree.ElementTree as ET

    path = tmp_path / "g.graphml"
    rc, _, _ = run(capsys, "--db", str(bundled.path), "graph", "--format", "graphml",
                   "-o", str(path))
    assert rc == 0
    text = path.read_text(encoding="utf-8")
    assert ">True<" not in text and ">False<" not in text

    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == f"{_GRAPHML_NS}graphml"
    keys: dict[str, str] = {}
    seen_graph = False
    for child in root:  # every key is declared before the graph that uses it
        if child.tag == f"{_GRAPHML_NS}key":
            assert not seen_graph, "key declared after the graph"
            keys[child.attrib["id"]] = child.attrib["attr.type"]
        elif child.tag == f"{_GRAPHML_NS}graph":
            seen_graph = True
    assert seen_graph
    graphs = root.findall(f"{_GRAPHML_NS}graph")
    assert len(graphs) == 1 and graphs[0].attrib["edgedefault"] == "directed"
    boolean_keys = {k for k, t in keys.items() if t == "boolean"}
    assert boolean_keys  # the export does carry a boolean ("stored")
    booleans = 0
    for data in root.iter(f"{_GRAPHML_NS}data"):
        assert data.attrib["key"] in keys, data.attrib
        if data.attrib["key"] in boolean_keys:
            assert data.text in ("true", "false"), data.text
            booleans += 1
    assert booleans

    want = load_graph(bundled)
    got = nx.read_graphml(path)
    assert set(got.nodes) == set(want.nodes)
    assert sorted(got.edges(data="type")) == sorted((u, v, k) for u, v, k in want.edges(keys=True))
    compared = 0
    for n, d in want.nodes(data=True):
        for attr, value in d.items():
            if isinstance(value, bool):
                assert got.nodes[n][attr] is value, (n, attr)
                compared += 1
    assert compared
