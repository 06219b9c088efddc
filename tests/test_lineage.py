"""Relations from code: symbol timeline across renames, regression candidates, blame lineage,
alternatives; and the ``prkb timeline`` / ``prkb lineage`` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kbrecords import FILE, change, record, sha

from prkb import evidence
from prkb.cli import main
from prkb.graph import build_relations
from prkb.graph.lineage import (
    code_alternatives,
    days_between,
    declaration_events,
    lineage_relations,
    regression_candidates,
    timeline_relations,
)
from prkb.graph.query import class_timeline
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()


HISTORY = [
    record(10, "[Attention] add Foo", "2026-01-05T00:00:00Z",
           changes=[change("attn_cudagraph_support", None, "PURE_DECODE_ONLY", "added")]),
    record(20, "rename the support attribute", "2026-02-01T00:00:00Z",
           changes=[change("cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "UNIFORM_SINGLE_TOKEN_DECODE", "renamed",
                           before_attr="attn_cudagraph_support")]),
    record(30, "[Perf] Foo: raise to uniform batch", "2026-03-01T00:00:00Z",
           changes=[change("cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
                           "raised")]),
    record(40, "[Bugfix] Foo: lower the cudagraph level", "2026-04-01T00:00:00Z",
           changes=[change("cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           levels=[{"class": "FooBuilder", "file": FILE, "declared": "UNIFORM_SINGLE_TOKEN_DECODE",
                    "effective": "UNIFORM_SINGLE_TOKEN_DECODE"}]),
    # a competing fix, closed unmerged a few days later, with a similar title
    record(45, "[Bugfix] Foo: lower the cudagraph level for MTP", "2026-04-03T00:00:00Z",
           state="closed",
           changes=[change("cudagraph_support", "UNIFORM_BATCH", "NEVER", "lowered")]),
    # another class, unrelated
    record(50, "[XPU] Bar: add support", "2026-04-10T00:00:00Z",
           changes=[change("cudagraph_support", None, "UNIFORM_BATCH", "added", cls="BarBuilder")]),
    # a raise and, more than the window later, a "fix" that lowers it: no regression candidate
    record(55, "[Perf] Foo: raise again", "2026-06-01T00:00:00Z",
           changes=[change("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
                           "raised")]),
    record(60, "[Bugfix] Foo: lower again", "2027-06-01T00:00:00Z",
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")]),
    # git records with blamed lines
    record(70, "[Misc] tidy Foo", "2027-07-01T00:00:00Z",
           lineage=[{"file": FILE, "commit": sha(30), "lines": 2},
                    {"file": FILE, "commit": sha(60), "lines": 1},
                    {"file": FILE, "commit": "f" * 40, "lines": 3}]),
    record(72, "[Bugfix] Bar: wrong level", "2027-07-02T00:00:00Z",
           lineage=[{"file": FILE, "commit": sha(50)[:12], "lines": 1}]),
    record(74, 'Revert "[Misc] tidy Foo (#70)"', "2027-07-03T00:00:00Z",
           lineage=[{"file": FILE, "commit": sha(70), "lines": 4}]),
]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    st = Store(tmp_path / "kb.sqlite")
    for rec in HISTORY:
        ingest(st, rec, PROFILE)
    return st


def edges(rels: list[Any]) -> set[tuple[str, str, str]]:
    return {(r.source, r.target, r.type) for r in rels}


def test_timeline_follows_the_attribute_across_spellings(store: Store) -> None:
    events = declaration_events(store, PROFILE, "FooBuilder")
    assert [e.number for e in events] == [10, 20, 30, 40, 45, 55, 60]
    got = edges(timeline_relations(events))
    assert got == {
        ("pr:20", "pr:10", "modifies-declaration-of"),
        # #20 only renamed the attribute: #30's value change points past it to #10's value
        ("pr:30", "pr:10", "modifies-declaration-of"),
        ("pr:40", "pr:30", "modifies-declaration-of"),
        # the closed PR modified the same declaration; it sets nothing itself
        ("pr:45", "pr:40", "modifies-declaration-of"),
        ("pr:55", "pr:40", "modifies-declaration-of"),
        ("pr:60", "pr:55", "modifies-declaration-of"),
    }
    all_events = declaration_events(store, PROFILE)
    assert ("pr:50", "pr:45", "modifies-declaration-of") not in edges(
        timeline_relations(all_events)
    )


def test_regression_candidate_needs_a_recent_raise_and_a_fix(store: Store) -> None:
    rels = regression_candidates(declaration_events(store, PROFILE), PROFILE)
    assert edges(rels) == {("pr:40", "pr:30", "fixes-regression-from")}
    (r,) = rels
    (item,) = evidence.loads(r.evidence)
    assert r.confidence == 0.6
    assert (item["kind"], item["pr"], item["by"], item["before"], item["by_after"]) == (
        "undoes-level", "#40", "#30", "UNIFORM_BATCH", "UNIFORM_BATCH")


def test_line_lineage_maps_blamed_commits_to_prs(store: Store) -> None:
    rels, unmapped = lineage_relations(store, PROFILE)
    assert unmapped == 1
    got = {(r.source, r.target): (r.type, r.confidence) for r in rels}
    assert got == {
        ("pr:70", "pr:30"): ("follow-up-of", 0.8),
        ("pr:70", "pr:60"): ("follow-up-of", 0.8),
        # a fix title is no evidence that the blamed PR caused the bug: blame is lineage
        ("pr:72", "pr:50"): ("follow-up-of", 0.8),
        ("pr:74", "pr:70"): ("reverts", 0.8),
    }
    (blame,) = evidence.loads(next(r.evidence for r in rels if r.target == "pr:30"))
    assert (blame["kind"], blame["lines"], blame["by"]) == ("blame", 2, "#30")
    revert = evidence.loads(next(r.evidence for r in rels if r.type == "reverts"))
    assert [it["kind"] for it in revert] == ["blame", "revert-title"]


def test_alternatives_from_code(store: Store) -> None:
    rels = code_alternatives(store, PROFILE)
    assert edges(rels) == {("pr:40", "pr:45", "alternative-to")}


def test_days_between_honours_the_zone() -> None:
    # 08:00 at +08:00 is midnight UTC; a parser that drops the offset sees 8 hours
    assert days_between("2026-04-01T08:00:00+08:00", "2026-04-01T00:00:00Z") == 0.0
    assert days_between("2026-04-01T00:00:00-06:00", "2026-04-01T00:00:00Z") == 0.25
    assert days_between("2026-04-01T00:00:00", "2026-04-01T12:00:00Z") == 0.5  # no zone: UTC
    assert days_between("", "2026-04-01T00:00:00Z") is None
    assert days_between("April", "2026-04-01T00:00:00Z") is None


def test_alternative_window_counts_in_utc(tmp_path: Path) -> None:
    """A knowledge base written before times were stored in UTC keeps their offsets: 20:00
    at -08:00 on Jan 1 is 04:00 UTC on Jan 2, 44.8 days before Feb 16 (inside the 45-day
    window); read without its offset it would be 45.2 days."""
    st = Store(tmp_path / "kb.sqlite")
    for rec in (
        record(80, "[Bugfix] Foo: lower the level", "2026-01-01T00:00:00Z", state="closed",
               changes=[change("cudagraph_support", "UNIFORM_BATCH", "NEVER", "lowered")]),
        record(81, "[Bugfix] Foo: lower the level again", "2026-02-16T00:00:00Z",
               changes=[change("cudagraph_support", "UNIFORM_BATCH", "NEVER", "lowered")]),
    ):
        ingest(st, rec, PROFILE)
    assert edges(code_alternatives(st, PROFILE)) == set()  # 46 days apart
    with st.transaction() as conn:
        conn.execute("UPDATE prs SET created_at = '2026-01-01T20:00:00-08:00',"
                     " closed_at = '2026-01-01T20:00:00-08:00' WHERE number = 80")
    assert edges(code_alternatives(st, PROFILE)) == {("pr:80", "pr:81", "alternative-to")}
    st.close()


def test_build_relations_resolves_code_relations(store: Store) -> None:
    stats = build_relations(store, PROFILE)
    rows = {
        (r["source"], r["target"]): (r["type"], r["origin"])
        for r in store.conn.execute("SELECT * FROM relations")
    }
    # the regression candidate is stronger than the timeline edge on the same pair
    assert rows[("pr:40", "pr:30")] == ("fixes-regression-from", "timeline")
    assert rows[("pr:30", "pr:10")] == ("modifies-declaration-of", "timeline")
    assert rows[("pr:40", "pr:45")] == ("alternative-to", "code")
    assert ("pr:45", "pr:40") not in rows
    assert stats["lineage_unmapped_commits"] == 1


def test_class_timeline_with_effective_levels(store: Store) -> None:
    tl = class_timeline(store, PROFILE, "FooBuilder")
    assert tl["spellings"] == ["attn_cudagraph_support", "cudagraph_support", "_cudagraph_support"]
    assert tl["declared_now"] == "UNIFORM_SINGLE_TOKEN_DECODE"
    by_pr = {c["pr"]: c for c in tl["changes"]}
    assert by_pr[40]["effective_after"] == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert by_pr[45]["declared_after"] is None and not by_pr[45]["merged"]
    assert by_pr[30]["declared_after"] == "UNIFORM_BATCH"
    assert [e["pr"] for e in tl["effective"]] == [40]


def test_undated_prs_are_placed_by_number(tmp_path: Path) -> None:
    st = Store(tmp_path / "kb.sqlite")
    ingest(st, HISTORY[2], PROFILE)  # #30, dated
    undated = record(35, "[Bugfix] Foo: lower", None,
                     changes=[change("cudagraph_support", "UNIFORM_BATCH",
                                     "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")])
    undated["merged_at"] = None
    undated["state"] = "merged"
    ingest(st, undated, PROFILE)
    ingest(st, HISTORY[0], PROFILE)  # #10, dated before #30
    events = declaration_events(st, PROFILE, "FooBuilder")
    assert [e.number for e in events] == [10, 30, 35]
    assert edges(regression_candidates(events, PROFILE)) == {
        ("pr:35", "pr:30", "fixes-regression-from")
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_timeline_and_lineage_commands(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    build_relations(store, PROFILE)
    db = str(store.path)
    rc, out, _ = run(capsys, "--db", db, "timeline", "FooBuilder", "--json")
    assert rc == 0
    data = json.loads(out)
    assert [c["pr"] for c in data["changes"]] == [10, 20, 30, 40, 45, 55, 60]
    rc, out, _ = run(capsys, "--db", db, "timeline", "FooBuilder")
    assert rc == 0 and "attn_cudagraph_support->cudagraph_support" in out and "#45" in out
    rc, _, err = run(capsys, "--db", db, "timeline", "FooBuildr")
    assert rc == 1 and "did you mean FooBuilder" in err

    rc, out, _ = run(capsys, "--db", db, "lineage", "40", "--json")
    assert rc == 0
    res = json.loads(out)
    anc = {a["number"]: (a["type"], a["depth"], a["via"]) for a in res["ancestors"]}
    assert anc[30] == ("fixes-regression-from", 1, 40)
    assert anc[10] == ("modifies-declaration-of", 2, 30)
    assert 20 not in anc  # the rename set no value #40 builds on
    desc = {d["number"] for d in res["descendants"]}
    assert {55, 60, 70, 74} <= desc
    # #45 is linked to #40 as an alternative, which is not a lineage edge
    assert 45 not in desc and 50 not in desc and 50 not in anc
    rc, out, _ = run(capsys, "--db", db, "lineage", "40")
    assert rc == 0 and "led to it" in out and "#30" in out
    rc, _, err = run(capsys, "--db", db, "lineage", "999")
    assert rc == 1 and "999" in err


def test_timeline_keeps_same_named_builders_of_two_files_apart(tmp_path: Path) -> None:
    """A V0 and a V1 builder of one name are two builders: each shows only the commits where
    its own reading changed, instead of the two alternating at every collected commit."""

    v0, v1 = "vllm/attention/backends/x_attn.py", "vllm/v1/attention/backends/x_attn.py"
    readings = [  # (commit, file, effective): V1 changes at c3, V0 never
        ("c1", v0, "NEVER"), ("c1", v1, "UNIFORM_BATCH"),
        ("c2", v0, "NEVER"), ("c2", v1, "UNIFORM_BATCH"),
        ("c3", v0, "NEVER"), ("c3", v1, "ALWAYS"),
    ]
    with Store(tmp_path / "kb.sqlite") as st, st.transaction():
        for i, (sha, f, eff) in enumerate(readings):
            st.conn.execute(
                "INSERT INTO builder_levels (repo, commit_sha, committed_at, pr_ref, class_name,"
                " file, declared, effective, dynamic) VALUES ('o/r', ?, ?, ?, 'XMetadataBuilder',"
                " ?, ?, ?, 0)",
                (sha, f"2026-01-0{1 + i // 2}T00:00:00Z", sha, f, eff, eff),
            )
    with Store(tmp_path / "kb.sqlite") as st:
        rows = class_timeline(st, PROFILE, "XMetadataBuilder")["effective"]
    assert [(r["commit"], r["file"], r["effective"]) for r in rows] == [
        ("c1", v0, "NEVER"), ("c1", v1, "UNIFORM_BATCH"), ("c3", v1, "ALWAYS")]


def test_timeline_declared_and_effective_levels_are_per_file(tmp_path: Path, capsys) -> None:
    """The declared level now and the effective level after a change belong to the change's
    own file: a V0 and a V1 class of one name are two builders, so the V0 change is never
    given the V1 reading of the same commit, and "declared now" names each file."""
    v0, v1 = "vllm/attention/backends/foo_attn.py", FILE

    def at(file: str, c: dict[str, Any]) -> dict[str, Any]:
        return {**c, "file": file}

    def lv(file: str, level: str) -> dict[str, Any]:
        return {"class": "FooBuilder", "file": file, "declared": level, "effective": level,
                "dynamic": False}

    db = tmp_path / "kb.sqlite"
    with Store(db) as st:
        ingest(st, record(1, "add both", "2026-01-05T00:00:00Z",
                          changes=[at(v0, change("_cudagraph_support", None, "NEVER", "added")),
                                   at(v1, change("_cudagraph_support", None, "ALWAYS",
                                                 "added"))],
                          levels=[lv(v0, "NEVER"), lv(v1, "ALWAYS")]), PROFILE)
        ingest(st, record(2, "raise v0", "2026-02-05T00:00:00Z",
                          changes=[at(v0, change("_cudagraph_support", "NEVER",
                                                 "UNIFORM_SINGLE_TOKEN_DECODE", "raised"))],
                          levels=[lv(v0, "UNIFORM_SINGLE_TOKEN_DECODE"), lv(v1, "ALWAYS")]),
               PROFILE)
        tl = class_timeline(st, PROFILE, "FooBuilder")
    assert [(c["pr"], c["file"], c["effective_after"]) for c in tl["changes"]] == [
        (1, v0, "NEVER"), (1, v1, "ALWAYS"), (2, v0, "UNIFORM_SINGLE_TOKEN_DECODE")]
    assert tl["declared_now_by_file"] == {v0: "UNIFORM_SINGLE_TOKEN_DECODE", v1: "ALWAYS"}
    assert tl["declared_now"] is None  # two builders, two levels: no one level of the class
    assert main(["--db", str(db), "timeline", "FooBuilder"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert f"UNIFORM_SINGLE_TOKEN_DECODE in {v0}" in first and f"ALWAYS in {v1}" in first


def test_the_symbol_timeline_of_a_builder_is_its_file_and_class(tmp_path: Path) -> None:
    """A change of a V0 class never "modifies the declaration of" (nor fixes) a change of the
    V1 class of the same name; a class moved to another file keeps its timeline (the change
    after the move points past it to the PR that set the value)."""
    v0, moved_to = "vllm/attention/backends/foo_attn.py", "vllm/v1/attention/backends/foo2.py"

    def at(file: str, c: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return {**c, "file": file, **kw}

    recs = [
        record(1, "[Perf] raise v1", "2026-01-05T00:00:00Z",
               changes=[change("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
                               "UNIFORM_BATCH", "raised")]),
        record(2, "[Bugfix] lower v0", "2026-01-20T00:00:00Z",
               changes=[at(v0, change("_cudagraph_support", "UNIFORM_BATCH",
                                      "UNIFORM_SINGLE_TOKEN_DECODE", "lowered"))]),
        record(3, "move the v1 class", "2026-02-01T00:00:00Z",
               changes=[at(moved_to, change("_cudagraph_support", "UNIFORM_BATCH",
                                            "UNIFORM_BATCH", "moved"), before_file=FILE)]),
        record(4, "[Perf] raise the moved class", "2026-02-10T00:00:00Z",
               changes=[at(moved_to, change("_cudagraph_support", "UNIFORM_BATCH", "ALWAYS",
                                            "raised"))]),
    ]
    with Store(tmp_path / "kb.sqlite") as st:
        for r in recs:
            ingest(st, r, PROFILE)
        events = declaration_events(st, PROFILE)
    edges = {(r.source, r.target, r.type) for r in
             [*timeline_relations(events), *regression_candidates(events, PROFILE)]}
    assert ("pr:2", "pr:1", "modifies-declaration-of") not in edges
    assert not [e for e in edges if e[0] == "pr:2"], edges
    assert ("pr:3", "pr:1", "modifies-declaration-of") in edges
    assert ("pr:4", "pr:1", "modifies-declaration-of") in edges  # past the move


def test_a_blamed_raise_of_the_v1_class_is_no_culprit_of_a_v0_lowering(tmp_path: Path) -> None:
    """Blamed declaration lines give a regression candidate only when the blamed PR raised
    the same builder (its file and class) the fix lowers: a PR that raised the V1 class and
    only renamed the V0 one's attribute is lineage of the V0 fix, not its culprit."""
    v0 = "vllm/attention/backends/foo_attn.py"
    raised_v1 = {**change("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
                          "raised")}
    renamed_v0 = {**change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_BATCH", "renamed",
                           before_attr="cudagraph_support"), "file": v0}
    lowered_v0 = {**change("_cudagraph_support", "UNIFORM_BATCH",
                           "UNIFORM_SINGLE_TOKEN_DECODE", "lowered"), "file": v0}
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, record(81, "raise v1, rename v0", "2026-01-05T00:00:00Z",
                          changes=[raised_v1, renamed_v0]), PROFILE)
        ingest(st, record(82, "[Bugfix] lower v0", "2026-01-20T00:00:00Z",
                          changes=[lowered_v0],
                          lineage=[{"file": v0, "commit": sha(81), "lines": 1, "decl": True,
                                    "kind": "semantic"}]), PROFILE)
        rels, _ = lineage_relations(st, PROFILE)
    assert {(r.source, r.target, r.type) for r in rels} == {("pr:82", "pr:81", "follow-up-of")}
