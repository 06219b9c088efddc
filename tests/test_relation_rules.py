"""Relations with the right type and direction: blame is lineage, a PR's own text names the
culprit, a closed PR fixes nothing, a newer PR supersedes an older closed one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbrecords import FILE, change, march, record, sha

from prkb import evidence
from prkb.graph import build_relations
from prkb.graph.lineage import lineage_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()
SNAPSHOTS = Path(__file__).resolve().parent.parent / "data" / "snapshots"


def blamed(n: int, **extra: Any) -> dict[str, Any]:
    return {"file": FILE, "commit": sha(n), "lines": 1, **extra}


def kb(tmp_path: Path, recs: list[dict[str, Any]]) -> Store:
    st = Store(tmp_path / "kb.sqlite")
    for rec in recs:
        ingest(st, rec, PROFILE)
    return st


def rows(st: Store) -> dict[tuple[str, str], tuple[str, str, float, str]]:
    return {
        (r["source"], r["target"]): (r["type"], r["origin"], r["confidence"], r["evidence"])
        for r in st.conn.execute("SELECT * FROM relations")
    }


# --- 1. a blamed line is evidence of lineage, not of a regression ------------------------------

LINEAGE = [
    record(10, "[Perf] Foo: uniform batch", march(1),
           changes=[change("_cudagraph_support", None, "UNIFORM_BATCH", "added")]),
    record(11, "[Misc] Foo: rename the attribute", march(2),
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_BATCH", "renamed")]),
    # lowers the level #10 added, and the blamed line is the declaration #10 wrote
    record(20, "[Bugfix] Foo: lower the level", march(20),
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(10, decl=True, kind="semantic")]),
    # a fix title and a blamed line that is not a declaration: only lineage
    record(30, "[Bugfix] fix a crash in Foo", march(21), lineage=[blamed(10, decl=False)]),
    # lowers, but the collector did not say the line is a declaration (older records)
    record(40, "[Bugfix] Foo: lower again", march(22),
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(10)]),
    # the blamed declaration belongs to #10's class, the lowered one is another class
    record(50, "[Bugfix] Bar: lower", march(23),
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered", cls="BarBuilder")],
           lineage=[blamed(10, decl=True)]),
    # the blamed declaration was last touched by a rename, which raised nothing
    record(60, "[Bugfix] Foo: lower after the rename", march(24),
           changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(11, decl=True, kind="semantic")]),
    # reformatted or renamed lines link nothing, whatever else the entry says
    record(70, "[Bugfix] Foo: tidy", march(25),
           lineage=[blamed(10, decl=True, kind="format"), blamed(11, kind="rename")]),
    # the text names the culprit: blame on its lines may then say fixes
    record(80, "[Bugfix] Foo: crash", march(26), lineage=[blamed(11)]),
]


def test_blame_gives_a_fix_only_for_a_lowered_declaration_the_blamed_pr_raised(
    tmp_path: Path,
) -> None:
    st = kb(tmp_path, LINEAGE)
    rels, unmapped = lineage_relations(st, PROFILE, culprits={"pr:80": {"pr:11"}})
    got = {(r.source, r.target): r.type for r in rels}
    assert unmapped == 0
    assert got == {
        ("pr:20", "pr:10"): "fixes-regression-from",
        ("pr:30", "pr:10"): "follow-up-of",
        ("pr:40", "pr:10"): "follow-up-of",
        ("pr:50", "pr:10"): "follow-up-of",
        ("pr:60", "pr:11"): "follow-up-of",
        ("pr:80", "pr:11"): "fixes-regression-from",
    }
    why = {(r.source, r.target): evidence.loads(r.evidence) for r in rels}
    assert why[("pr:20", "pr:10")][1] == {"kind": "blamed-declaration", "classes": ["FooBuilder"],
                                          "pr": "#20", "by": "#10"}
    assert why[("pr:80", "pr:11")][1] == {"kind": "culprit-named", "pr": "#80",
                                          "culprits": ["#11"]}
    # follow-ups point from the later PR to the earlier one
    assert all(int(r.source[3:]) > int(r.target[3:]) for r in rels)


# --- 2. the PR's own text outranks blame and the timeline ------------------------------------


def test_the_culprit_named_in_the_text_outranks_blame(tmp_path: Path) -> None:
    st = kb(tmp_path, [
        record(10, "[Perf] Foo: uniform batch", march(1),
               changes=[change("_cudagraph_support", None, "UNIFORM_BATCH", "added")]),
        record(12, "[Core] change the capture sizes", march(2)),
        record(20, "[Bugfix] Foo: lower the level", march(10),
               body="The capture crash was introduced by #12.",
               changes=[change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                               "lowered")],
               lineage=[blamed(10, decl=True)]),
    ])
    build_relations(st, PROFILE)
    got = rows(st)
    assert got[("pr:20", "pr:12")][:2] == ("fixes-regression-from", "text")
    # blame and the timeline alone would make #10 the culprit; the text says #12
    assert [k for k, v in got.items() if v[0] == "fixes-regression-from"] == [("pr:20", "pr:12")]
    assert got[("pr:20", "pr:10")][0] == "modifies-declaration-of"


def test_demoted_blame_keeps_its_evidence(tmp_path: Path) -> None:
    from prkb.graph import derive_relations

    st = kb(tmp_path, [
        record(12, "[Core] change the capture sizes", march(2)),
        record(14, "[Core] touch the runner", march(3)),
        record(20, "[Bugfix] runner crash", march(10), body="A regression from #12.",
               lineage=[blamed(14)]),
    ])
    rels, _ = derive_relations(st, PROFILE)
    got = {(r.source, r.target): r for r in rels}
    assert got[("pr:20", "pr:12")].type == "fixes-regression-from"
    lin = got[("pr:20", "pr:14")]
    assert (lin.type, lin.origin) == ("follow-up-of", "lineage")
    assert [it["kind"] for it in evidence.loads(lin.evidence)] == ["blame"]


# --- 4. a closed, unmerged PR is an attempt or an alternative ------------------------------------


def test_a_closed_pr_never_fixes(tmp_path: Path) -> None:
    st = kb(tmp_path, [
        record(10, "[Perf] Foo: uniform batch", march(1),
               changes=[change("_cudagraph_support", None, "UNIFORM_BATCH", "added")]),
        record(20, "[Bugfix] Foo: lower the level", march(5), body="Fixes a regression from #10."),
        record(25, "[Bugfix] Foo: declare the query lengths", march(6), state="closed",
               body="The capture crash was introduced by #10."),
        record(30, "[XPU] Bar: add support", march(7)),
        record(35, "[Bugfix] Bar: a crash", march(8), state="closed",
               body="The crash was introduced by #30."),
    ])
    build_relations(st, PROFILE)
    got = rows(st)
    assert got[("pr:20", "pr:10")][0] == "fixes-regression-from"
    # the closed one is an alternative to the merged fix of the same culprit
    assert ("pr:25", "pr:10") not in got
    assert got[("pr:20", "pr:25")][0] == "alternative-to"
    assert evidence.loads(got[("pr:20", "pr:25")][3])[-1] == {
        "kind": "closed-unmerged", "pr": "#25", "fix": "#20", "of": "#10"}
    # no merged fix known: an attempt, its evidence kept
    assert got[("pr:35", "pr:30")][0] == "attempts-fix-of"
    quote, closed = evidence.loads(got[("pr:35", "pr:30")][3])
    assert quote["kind"] == "quote" and "introduced by #30" in quote["text"]
    assert closed == {"kind": "closed-unmerged", "pr": "#35"}
    assert not [k for k, v in got.items() if v[0] == "fixes-regression-from" and k[0] in
                ("pr:25", "pr:35")]


# --- 5. supersedes: a newer PR replaces an older closed one ------------------------------------


def test_a_newer_pr_supersedes_an_older_closed_one(tmp_path: Path) -> None:
    foo = [change("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")]
    st = kb(tmp_path, [
        # same class, similar titles: the older one closed, the newer one merged
        record(40, "[Bugfix] Foo: lower the cudagraph level", march(1), state="closed",
               changes=foo),
        record(45, "[Bugfix] Foo: lower the cudagraph level for MTP", march(3), changes=foo),
        # "instead of #50" by a newer open PR, #50 closed
        record(50, "[Core] one way", march(4), state="closed"),
        record(55, "[Core] a smaller way", march(5), state="open",
               body="A smaller change instead of #50."),
        # "closed in favor of" an older PR: the two competed, neither replaced the other
        record(60, "[Core] first take", march(6)),
        record(65, "[Core] second take", march(7), state="closed", body="Closed in favor of #60."),
        # "closed in favor of" a newer PR: that one replaces it
        record(70, "[Core] old take", march(8), state="closed", body="Closed in favor of #75."),
        record(75, "[Core] new take", march(9)),
        # two open proposals: alternatives
        record(80, "[Core] proposal A", march(10), state="open", body="An alternative to #85."),
        record(85, "[Core] proposal B", march(11), state="open"),
    ])
    build_relations(st, PROFILE)
    got = rows(st)
    assert got[("pr:45", "pr:40")][:2] == ("supersedes", "code")
    assert ("pr:40", "pr:45") not in got
    assert got[("pr:55", "pr:50")][0] == "supersedes"
    assert got[("pr:60", "pr:65")][0] == "alternative-to"
    assert evidence.loads(got[("pr:60", "pr:65")][3])[-1] == {
        "kind": "older", "older": "#60", "newer": "#65"}
    assert got[("pr:75", "pr:70")][0] == "supersedes"
    assert got[("pr:80", "pr:85")][0] == "alternative-to"


def test_bundled_47310_is_an_alternative_to_47144_not_superseded(bundled: Store) -> None:
    """#47310 (closed) says it is "an alternative fix" of the crash #42885 introduced and was
    "closed in favor of #47144" (merged). #47144 was opened first (a lower number), so it did
    not replace #47310: the two competed and #47144 was chosen. True: alternative-to, and
    #47310 fixes nothing (closed unmerged) while #47144 fixes the regression from #42885."""
    got = rows(bundled)
    alt = got[("pr:47144", "pr:47310")]
    assert alt[0] == "alternative-to"
    items = evidence.loads(alt[3])
    assert "Closed in favor of #47144" in items[0]["text"]
    assert items[-1] == {"kind": "closed-unmerged", "pr": "#47310", "fix": "#47144",
                         "of": "#42885"}
    assert ("pr:47310", "pr:47144") not in got
    assert not [k for k, v in got.items() if v[0] == "supersedes"]
    assert got[("pr:47144", "pr:42885")][0] == "fixes-regression-from"
    assert ("pr:47310", "pr:42885") not in got
    # blame calls a PR a regression fix on the bundled history only where the blamed lines
    # declare a class's level that the earlier PR added or raised and the later PR lowers
    # (#25982 took the DeepSeek V3.2 indexer back from the UNIFORM_BATCH #25896 gave it)
    lineage_fixes = sorted(k for k, v in got.items()
                           if v[0] == "fixes-regression-from" and v[1] == "lineage")
    assert lineage_fixes == [("pr:25982", "pr:25896")]

    def directions(key: str, cls: str) -> set[str]:
        return {r[0] for r in bundled.conn.execute(
            "SELECT s.direction FROM symbol_changes s JOIN prs p ON p.id = s.pr_id"
            " WHERE p.number = ? AND s.class_name = ?", (int(key[3:]), cls))}

    assert "lowered" in directions("pr:25982", "DeepseekV32IndexerMetadataBuilder")
    assert directions("pr:25896", "DeepseekV32IndexerMetadataBuilder") & {"added", "raised"}
