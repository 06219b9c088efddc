"""Relations with the right type and direction: blame is lineage."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from prkb.analyze.lineage import lineage_relations
from prkb.kb import ingest
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()
FILE = "vllm/v1/attention/backends/foo_attn.py"


def sha(n: int) -> str:
    return hashlib.sha1(f"rel-{n}".encode()).hexdigest()


def change(cls: str, before: str | None, after: str | None, direction: str,
           attr: str = "_cudagraph_support") -> dict[str, Any]:
    return {"file": FILE, "class": cls, "attr": attr, "before": before, "after": after,
            "direction": direction, "before_attr": None}


def record(number: int, title: str, day: int, *, state: str = "merged", body: str = "",
           changes: list[dict[str, Any]] | None = None,
           lineage: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    date = f"2026-03-{day:02d}T00:00:00Z"
    prkb: dict[str, Any] = {"symbol_changes": changes or []}
    if lineage is not None:
        prkb["lineage"] = lineage
    return {
        "number": number, "title": title, "body": body, "state": state,
        "created_at": date,
        "merged_at": date if state == "merged" else None,
        "closed_at": date if state != "open" else None,
        "merge_commit_sha": sha(number) if state == "merged" else None,
        "files": [{"filename": FILE, "status": "modified"}],
        "source": "git" if lineage is not None else "github",
        "prkb": prkb,
    }


def blamed(n: int, **extra: Any) -> dict[str, Any]:
    return {"file": FILE, "commit": sha(n), "lines": 1, **extra}


def kb(tmp_path: Path, recs: list[dict[str, Any]]) -> Store:
    st = Store(tmp_path / "kb.sqlite")
    for rec in recs:
        ingest(st, rec, PROFILE)
    return st


# --- 1. a blamed line is evidence of lineage, not of a regression ------------------------------

LINEAGE = [
    record(10, "[Perf] Foo: uniform batch", 1,
           changes=[change("FooBuilder", None, "UNIFORM_BATCH", "added")]),
    record(11, "[Misc] Foo: rename the attribute", 2,
           changes=[change("FooBuilder", "UNIFORM_BATCH", "UNIFORM_BATCH", "renamed")]),
    # lowers the level #10 added, and the blamed line is the declaration #10 wrote
    record(20, "[Bugfix] Foo: lower the level", 20,
           changes=[change("FooBuilder", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(10, decl=True, kind="semantic")]),
    # a fix title and a blamed line that is not a declaration: only lineage
    record(30, "[Bugfix] fix a crash in Foo", 21, lineage=[blamed(10, decl=False)]),
    # lowers, but the collector did not say the line is a declaration (older records)
    record(40, "[Bugfix] Foo: lower again", 22,
           changes=[change("FooBuilder", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(10)]),
    # the blamed declaration belongs to #10's class, the lowered one is another class
    record(50, "[Bugfix] Bar: lower", 23,
           changes=[change("BarBuilder", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(10, decl=True)]),
    # the blamed declaration was last touched by a rename, which raised nothing
    record(60, "[Bugfix] Foo: lower after the rename", 24,
           changes=[change("FooBuilder", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE",
                           "lowered")],
           lineage=[blamed(11, decl=True, kind="semantic")]),
    # reformatted or renamed lines link nothing, whatever else the entry says
    record(70, "[Bugfix] Foo: tidy", 25,
           lineage=[blamed(10, decl=True, kind="format"), blamed(11, kind="rename")]),
    # the text names the culprit: blame on its lines may then say fixes
    record(80, "[Bugfix] Foo: crash", 26, lineage=[blamed(11)]),
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
    why = {(r.source, r.target): r.evidence for r in rels}
    assert "declare FooBuilder" in why[("pr:20", "pr:10")]
    assert "names it as the culprit" in why[("pr:80", "pr:11")]
    # follow-ups point from the later PR to the earlier one
    assert all(int(r.source[3:]) > int(r.target[3:]) for r in rels)
