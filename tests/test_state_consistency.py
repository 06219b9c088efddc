"""Every report of the bundled real history says nothing its state change contradicts.

For each PR of the snapshot mined from the public fork (``data/snapshots``), the facts the
report template receives (``report_context``) are checked against the PR's stored state
change (the effective values at its first parent and at its commit, ``analyze/state.py``):

- the "Effective state" block lists exactly the stored state changes;
- an effect that says a builder's level went up (more batches captured, a correctness risk)
  or down (a correctness fix, fewer batches, left stale) has a state change of that builder
  going the same way, with the same two levels where it names them;
- an effect that says nothing changed (a rename or a move, the same effective value, the base
  default) has no state change of that builder's level;
- a "new builder" was no builder at the parent;
- every builder whose effective level changed between two plain levels has an entry in
  "Risks and impact".

A condition shift (a conditional value read where its test changed) names the levels of one
branch; a dynamic or conditional effective value has no single level to compare: those are
checked only for having an entry.
"""

from __future__ import annotations

from typing import Any

import pytest

from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.render.report import report_context

UP = ("more-batches-captured", "correctness-risk")
DOWN = ("correctness-fix", "fewer-batches-captured", "left-stale")
SAME = ("no-value-change", "same-effective", "same-as-default")


def _contradictions(ctx: dict[str, Any], stored: list[dict[str, Any]]) -> list[str]:
    profile = load_profile()
    symbol = profile.display
    out: list[str] = []
    shown = {(r["class"], r["file"], r["value"]) for r in ctx["implementation"].state["changes"]}
    if shown != {(c["class"], c["file"], c["value"]) for c in stored}:
        out.append("the Effective state block is not the stored state change")
    level = {(c["class"], c["file"]): c for c in stored if c["value"] == symbol}
    entries = {(b["class_name"], b["file"]) for b in ctx["risks"].builders}
    for b in ctx["risks"].builders:
        for e in b["effects"]:
            key = (e["builder"], e["file"])
            sc = level.get(key)
            where = f"{e['builder']} ({e['reason']})"
            if e["reason"] in SAME and sc is not None:
                out.append(f"{where}: says nothing changed, the state says "
                           f"{sc['before']} -> {sc['after']}")
            if e["reason"] == "new-builder" and (sc is None or sc["before_source"] is not None):
                out.append(f"{where}: not a new builder in the state")
            if e["reason"] not in UP + DOWN or e.get("when"):
                continue
            if sc is None:
                out.append(f"{where}: a level change the state does not have")
                continue
            rb, ra = profile.level_rank(sc["before"]), profile.level_rank(sc["after"])
            if rb is None or ra is None:
                continue  # a dynamic, conditional or bool value: no order to compare
            if (e["reason"] in UP) != (ra > rb) or ra == rb:
                out.append(f"{where}: the state goes {sc['before']} -> {sc['after']}")
            if e.get("basis") not in ("declared", "versus-default") and (
                    e["before"], e["after"]) != (sc["before"], sc["after"]):
                out.append(f"{where}: names {e['before']} -> {e['after']}, the state "
                           f"{sc['before']} -> {sc['after']}")
    for key, sc in level.items():
        plain = all(profile.level_rank(v) is not None for v in (sc["before"], sc["after"]))
        if plain and key not in entries:
            out.append(f"{key[0]}: {sc['before']} -> {sc['after']} has no entry in the risks")
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_report_of_the_bundled_history_contradicts_its_state_change(bundled, lang):
    checked = with_changes = 0
    found: dict[str, list[str]] = {}
    for pr in bundled.pr_listing():
        ref = str(pr["number"] if pr["number"] is not None else pr["ref"])
        stored = bundled.pr_facts(ref)["state_changes"]
        if stored is None:
            continue  # the curated records: no clone was read
        checked += 1
        with_changes += bool(stored)
        bad = _contradictions(report_context(bundled, ref, lang), stored)
        if bad:
            found[ref] = bad
    assert found == {}
    # not vacuous: the bundled history is read, and most of it changed some state
    git_history = (data_dir() / "snapshots" / "vllm-git-history.jsonl").read_text()
    assert checked == len(git_history.splitlines()) >= 55 and with_changes >= 40


def test_the_check_finds_a_contradiction(bundled):
    """The check itself: a report whose facts disagree with the state is caught."""
    ctx = report_context(bundled, "25104", "en")
    stored = bundled.pr_facts("25104")["state_changes"]
    assert _contradictions(ctx, stored) == []
    flipped = [{**c, "before": c["after"], "after": c["before"]} for c in stored]
    assert any("the state goes" in x for x in _contradictions(ctx, flipped))
    assert any("does not have" in x for x in _contradictions(ctx, []))


def test_a_commit_without_a_pr_is_named_as_a_commit_where_it_is_reachable(bundled):
    """The fork's own commit (no PR number) is "commit <sha> on <the fork>", committed, not
    merged, in the report's head, its page title, and both languages."""
    from prkb.render.report import render_report

    ref = "sha:12fb5c6c6ec3ddef8e9b479dae6e5a104238fc78"
    en = render_report(bundled, ref, lang="en", fmt="md")
    head = en.split("## Executive summary")[0]
    assert head.startswith("# Commit `12fb5c6c6ec3` on `local-inference-lab/vllm`: full report")
    assert "Committed at: May 19, 2026" in head and "Merged at" not in head
    assert ("Repository: `local-inference-lab/vllm`, whose history holds this commit (the "
            "tracked repository is `vllm-project/vllm`)") in head
    assert "without a pull request" in head and "State: merged" not in head
    zh = render_report(bundled, ref, lang="zh", fmt="md")
    assert zh.startswith("# `local-inference-lab/vllm` 上的提交 `12fb5c6c6ec3` 完整报告")
    html = render_report(bundled, ref, lang="en", fmt="html")
    assert "<title>commit 12fb5c6c6ec3 on local-inference-lab/vllm" in html
    # nowhere "this PR", "the same PR" or "merged" of it (the catalog's "commit" context)
    import re

    for text in (en, html):
        assert not re.search(r"\b(this|the same|the) PR\b|PR's|\bmerged\b", text), text
    assert "no file under `tests/` changed in this commit" in en
    for word in ("该 PR", "本 PR", "此 PR", "同一 PR"):
        assert word not in zh
    assert "该提交" in zh
    # another commit without a PR is named as one in its relations
    assert "commit `251eda09fe9f` modifies a declaration last set by this commit" in en
    # a PR's report keeps its own words
    assert "this PR" in render_report(bundled, "42885", lang="en", fmt="md")


def test_the_site_names_a_fork_commit_as_a_commit_on_the_fork(bundled, tmp_path):
    """The site's page of the fork's own commit: its state is no "merged", its relations say
    "this commit", and its GitHub link is the fork's commit page (the commit does not exist
    upstream)."""
    import html
    import re

    from prkb.site.build import build_site

    build_site(bundled, tmp_path / "site", load_profile(), langs=["en"], search=False)
    page = (tmp_path / "site" / "en" / "pr" / "c12fb5c6c6ec3.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    assert "State a commit without a pull request" in text
    assert not re.search(r"\bthis PR\b|\bmerged\b", text)
    assert "modifies a declaration last set by this commit" in text
    fork = "https://github.com/local-inference-lab/vllm/commit/12fb5c6c6ec3"
    assert f'href="{fork}' in page and "github.com/vllm-project/vllm/commit/12fb5c6c" not in page
    # one name for it everywhere: the site's lists and graph, the digest (`prkb list` and
    # `show` print the same models.record_label)
    label = "commit 12fb5c6c6ec3"
    for name in ("index.html", "graph.html"):
        listed = (tmp_path / "site" / "en" / name).read_text(encoding="utf-8")
        assert f">{label}<" in listed
        assert "12fb5c6c6e<" not in listed  # not the 10-character label of before
    from prkb.publish import digest as dg

    week = dg.gather(bundled, dg.period_for(since="2026-05-18", until="2026-05-24"))
    assert label in {i.label for i in week.merged}


def test_the_framework_change_names_where_the_code_reads_the_symbol(bundled):
    """#21367 on the fork renamed what the base declares and what the model runner reads, in
    one commit (read by hand: ``git show 23322431c8:vllm/v1/worker/gpu_model_runner.py``, line
    2623 reads ``attn_metadata_builder_i.attn_cudagraph_support``; at its parent the same line
    reads ``full_cudagraph_supported``). The report says so with the reading site, names the
    builder it left on the old spelling and the PR that puts it back."""
    from prkb.render.report import render_report

    facts = bundled.pr_facts("21367")
    assert facts["reads"] == {
        "before": {"full_cudagraph_supported": "vllm/v1/worker/gpu_model_runner.py:2623"},
        "after": {"attn_cudagraph_support": "vllm/v1/worker/gpu_model_runner.py:2623"},
    }
    en = render_report(bundled, "21367", lang="en", fmt="md")
    assert ("now declares `attn_cudagraph_support` instead of `full_cudagraph_supported`, and "
            "from this commit on the code reads `attn_cudagraph_support` "
            "(`vllm/v1/worker/gpu_model_runner.py:2623`).") in en
    assert "`AiterFlashAttentionMetadataBuilder`" in en.split("**Framework change**")[1]
    assert "#22721 puts `AiterFlashAttentionMetadataBuilder` back" in en
    zh = render_report(bundled, "21367", lang="zh", fmt="md")
    assert "从这次提交起代码也读取 `attn_cudagraph_support`" in zh
    # #18581 brought the mechanism: its runner reads full_cudagraph_supported (line 2127 of
    # gpu_model_runner.py at 3597b06a4f, read by hand), nothing read a spelling at its parent
    en = render_report(bundled, "18581", lang="en", fmt="md")
    assert ("**Framework change**: from this commit on the code reads `full_cudagraph_supported` "
            "(`vllm/v1/worker/gpu_model_runner.py:2127`); at the parent, no reading site read "
            "any spelling of it.") in en


def test_each_finding_names_the_commit_that_fixed_it(bundled):
    """Read by hand on the fork: #22721 (d983769c41db) declares attn_cudagraph_support on
    AiterFlashAttentionMetadataBuilder again; #26541 sets query_len_support = UNIFORM on
    FlashMLA; TurboQuantMetadataBuilder still declares UNIFORM_BATCH with
    _init_reorder_batch_threshold(1, supports_spec_as_decode=False) at the fork's tip."""
    from prkb.render.report import render_report

    fixed = {(f["class"], (f["fixed_by"] or {}).get("number"))
             for ref in ("20059", "21367", "38479") for f in bundled.pr_facts(ref)["findings"]}
    assert fixed == {("FlashMLAMetadataBuilder", 26541), ("CutlassMLAMetadataBuilder", 23200),
                     ("AiterFlashAttentionMetadataBuilder", 22721),
                     ("TurboQuantMetadataBuilder", None)}
    en = render_report(bundled, "21367", lang="en", fmt="md")
    assert ("Fixed by #22721 (August 20, 2025): the audit at its parent had this finding, at "
            "its commit not.") in en
    assert "No later commit in the knowledge base makes it no longer hold." in render_report(
        bundled, "38479", lang="en", fmt="md")


def test_feed_links_resolve_without_a_base_url(bundled, tmp_path):
    """Without --base-url, every link of the PR feed (``en/feed.xml``) and of the digest feed
    (``digest-en.xml``) resolves, from the feed's own place, to a page the site has (the PR
    feed's links used to resolve to ``en/en/pr/...``)."""
    import re
    from urllib.parse import urljoin

    from prkb.site.build import build_site

    out = tmp_path / "site"
    build_site(bundled, out, load_profile(), langs=["en"], search=False)
    for feed in ("en/feed.xml", "digest-en.xml"):
        text = (out / feed).read_text(encoding="utf-8")
        hrefs = re.findall(r'<link href="([^"]+)"', text)
        assert len(hrefs) > 3, feed
        for href in hrefs:
            target = urljoin(f"file:///{feed}", href).removeprefix("file:///")
            assert (out / target).is_file(), (feed, href, target)


def test_an_added_declaration_reads_not_declared_never_none(bundled, capsys):
    """``show`` and the stored risk reasons name the side where a class declared nothing
    "(not declared)", not Python's ``None``."""
    from prkb.cli import main

    assert main(["--db", str(bundled.path), "show", "42885"]) == 0
    out = capsys.readouterr().out
    assert "TritonMLAMetadataBuilder._cudagraph_support (not declared) -> UNIFORM_BATCH" in out
    assert "None" not in out
    tags = {t["code"]: t for t in bundled.pr_facts("42885")["risk_tags"]}
    assert "None" not in str(tags)
