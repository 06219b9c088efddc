"""A declaration removed with its class says so: the state model reads no class there at the
PR's commit, so nothing "falls back to the inherited value" (#29262 and #27954 on the fork,
with the decode-threshold profile; #42121 with the KV-update one). A removal that leaves no
value anywhere in the class's bases says that, and one that leaves an inherited value still
falls back to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kbrecords import FILE, change, record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.publish.digest import gather, render, week_key, week_period
from prkb.render.report import render_report, report_facts
from prkb.store import Store

PROFILE = load_profile("vllm-decode-threshold")
ATTR = "reorder_batch_threshold"
WHEN = "2026-03-04T00:00:00Z"


def _removal(number: int, after: str | None, after_source: str | None) -> dict[str, Any]:
    rec = record(number, f"Remove the builder of #{number}", WHEN,
                 changes=[change(ATTR, "1", None, "removed")], lineage=[])
    rec["prkb"]["state_changes"] = [{
        "file": FILE, "class": "FooBuilder", "value": ATTR, "before": "1", "after": after,
        "before_source": "declared", "after_source": after_source}]
    return rec


@pytest.fixture()
def kb(tmp_path: Path) -> Store:
    store = Store(tmp_path / "kb.sqlite")
    ingest(store, _removal(1, None, None), PROFILE)  # the class is gone
    ingest(store, _removal(2, None, "absent"), PROFILE)  # no base sets it
    ingest(store, _removal(3, "4", "inherited:BaseBuilder"), PROFILE)  # a base sets it
    return store


def test_each_removal_says_what_is_left(kb: Store) -> None:
    why = {n: report_facts(kb, str(n), PROFILE).changes[0]["why"] for n in (1, 2, 3)}
    assert why == {1: "class-removed", 2: "nothing-inherited", 3: "inherited"}
    en = {n: render_report(kb, n, lang="en", fmt="md", profile=PROFILE) for n in (1, 2, 3)}
    assert f"`{ATTR}` removed, it was `1` (the class itself was removed)" in en[1]
    assert "no longer exists at the PR's commit, so its value (`1`) applies to no class" in en[1]
    assert "(no class it derives from sets it either)" in en[2]
    assert "(falls back to the inherited value)" in en[3]
    assert all("falls back" not in en[n] for n in (1, 2))
    zh = render_report(kb, 1, lang="zh", fmt="md", profile=PROFILE)
    assert "（该类本身已被删除）" in zh and "回退到继承的值" not in zh


def test_only_a_removal_that_leaves_a_value_gets_the_falls_back_tag(kb: Store) -> None:
    tags = {n: {t["code"] for t in kb.pr_facts(str(n))["risk_tags"]} for n in (1, 2, 3)}
    # the tag's label says the value falls back to an inherited one: only where one is left
    assert "declaration-removed" not in tags[1] and "declaration-removed" not in tags[2]
    assert "declaration-removed" in tags[3]


def test_the_digest_says_it_as_the_report_does(kb: Store) -> None:
    from datetime import datetime

    dg = gather(kb, week_period(week_key(datetime.fromisoformat(WHEN.replace("Z", "+00:00")))),
                PROFILE)
    assert {lc.facts["why"] for lc in dg.level_changes} == {
        "class-removed", "nothing-inherited", "inherited"}
    text = render(dg, "en", "text")
    assert "(the class itself was removed)" in text


def test_a_class_the_audit_reads_as_no_builder_is_not_called_one(tmp_path: Path) -> None:
    """A class outside the builders' hierarchy that declares a field of the symbol's name (a
    benchmark's config dataclass, #26835 on the fork) is a "class", not a "builder", and the
    risks say it decides nothing; a builder removed by the PR is still one."""
    other = {"class": "OtherBuilder", "file": "pkg/other.py", "declared": "1",
             "effective": "1", "dynamic": False, "meets_rule": None}
    rec = record(4, "Add a benchmark", WHEN, lineage=[],
                 changes=[{**change(ATTR, None, "None", "added", cls="BenchmarkConfig"),
                           "file": "benchmarks/common.py"}], levels=[other])
    rec["files"] = [{"filename": "benchmarks/common.py", "status": "added"}]
    rec["prkb"]["state_changes"] = []
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, rec, PROFILE)
        ingest(st, _removal(1, None, None), PROFILE)
        en = render_report(st, 4, lang="en", fmt="md", profile=PROFILE)
        gone = render_report(st, 1, lang="en", fmt="md", profile=PROFILE)
    assert ("- Class `BenchmarkConfig` in `benchmarks/common.py`; no platform recognised from "
            "the file's path. It is no builder: at the PR's commit the audit does not find it "
            "below `AttentionMetadataBuilder`, so its value decides nothing the profile "
            "tracks.") in en
    assert "- Builder `FooBuilder`" in gone and "It is no builder" not in gone


def test_a_profile_without_levels_says_values_not_levels(kb: Store) -> None:
    """The digest of an int profile speaks of the value in force, not of levels (its
    "Effective level changes" heading was the CUDA-graph profile's word)."""
    from datetime import datetime

    dg = gather(kb, week_period(week_key(datetime.fromisoformat(WHEN.replace("Z", "+00:00")))),
                PROFILE)
    en, zh = render(dg, "en", "text"), render(dg, "zh", "text")
    assert "Effective value changes: " in en and "level" not in en.lower()
    assert "生效值变更：" in zh and "级别" not in zh
    cg = gather(kb, dg.period, load_profile("vllm-cudagraph"))
    assert "Effective level changes: " in render(cg, "en", "text")


def test_the_site_of_a_profile_without_levels_says_no_level(kb: Store, tmp_path: Path) -> None:
    """Every page of an int profile's site (timeline filters, class pages, matrix, digests)
    speaks of values: no "level" nor "级别" outside code."""
    import html
    import re

    from prkb.site.build import build_site

    out = tmp_path / "site"
    build_site(kb, out, PROFILE, search=False)
    found = {}
    for page in out.rglob("*.html"):
        text = re.sub(r"<(script|style|code|pre)[^>]*>.*?</\1>", " ",
                      page.read_text(encoding="utf-8"), flags=re.S)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
        hits = re.findall(r"\b[Ll]evels?\b|级别", text)
        if hits:
            found[str(page.relative_to(out))] = hits
    assert len(list(out.rglob("*.html"))) > 10 and found == {}
