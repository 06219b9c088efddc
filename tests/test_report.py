"""Reports of the curated seed PRs: every section in both languages, the reference facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from prkb import evidence
from prkb.cli import main
from prkb.profile import load_profile
from prkb.render.prfacts import read_pr
from prkb.render.report import render_report, render_reports, report_context
from tests.report_helpers import add, decl_patch, record, seeded_store

SECTIONS = {
    "zh": ["执行摘要", "功能与动机", "实现拆解", "关键文件", "关键源码片段", "评论区精华",
           "风险与影响", "关联脉络"],
    "en": ["Executive summary", "Motivation", "Implementation breakdown", "Key files",
           "Key code", "Review highlights", "Risks and impact", "Related PRs"],
}


@pytest.fixture()
def store(tmp_path: Path):
    s = seeded_store(tmp_path)
    yield s
    s.close()


@pytest.mark.parametrize("number", [47144, 45149])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("fmt", ["md", "txt"])
def test_every_section_in_order(store, number, lang, fmt):
    text = render_report(store, number, lang=lang, fmt=fmt)
    lines = text.splitlines()
    positions = []
    for heading in SECTIONS[lang]:
        want = f"## {heading}" if fmt == "md" else heading
        assert want in lines, f"{heading!r} missing from the {lang} {fmt} report"
        positions.append(lines.index(want))
    assert positions == sorted(positions)
    assert f"#{number}" in lines[0]


def test_47144_reference_facts(store):
    zh = render_report(store, 47144, lang="zh", fmt="md")
    en = render_report(store, 47144, lang="en", fmt="md")
    for text in (zh, en):
        assert "vllm/v1/attention/backends/mla/triton_mla.py" in text
        assert "`TritonMLAMetadataBuilder`" in text
        assert "`UNIFORM_BATCH`" in text and "`UNIFORM_SINGLE_TOKEN_DECODE`" in text
        assert "#42885" in text and "#48015" in text  # the related PRs the reference names
        assert "EagleDeepSeekMTPModel" in text  # the test command of the description
    assert "缺少测试覆盖" in zh and "missing test coverage" in en
    assert "核心路径变更" in zh and "core path change" in en
    # the stated core rule, explained because only one backend file changed
    assert "核心路径规则" in zh and "Core path rule" in en
    assert "降低为" in zh and "lowered from `UNIFORM_BATCH` to `UNIFORM_SINGLE_TOKEN_DECODE`" in en
    # recommendation for a correctness fix without a test
    assert "regression test" in en and "回归测试" in zh
    # level meanings from the profile
    assert "pure-decode batches" in en
    # author and merge day from the public PR thread and weekly lists (see the record's notes)
    assert "Author: music-dino" in en and "作者：music-dino" in zh
    assert "Merged at: July 9, 2026\n" in en  # a day: no time of day, no zone
    assert "from the public PR thread" in en
    # a curated record is a paraphrase and says so, in both languages
    assert "Paraphrased from public information" in en and "整理自公开信息" in zh
    assert "From the PR description" not in en and "摘自 PR 描述" not in zh


def test_45149_reference_facts(store):
    zh = render_report(store, 45149, lang="zh", fmt="txt")
    en = render_report(store, 45149, lang="en", fmt="txt")
    for text in (zh, en):
        assert "rocm_aiter_mla_sparse.py" in text
        assert "ROCMAiterMLASparseMetadataBuilder" in text
        assert "_init_reorder_batch_threshold(1, supports_spec_as_decode=True)" in text
        assert "#47766" in text
        # the related PR's title, from the KB (its real one, see #47766's notes)
        assert "Key sparse-MLA persistent metadata on per-request context lengths" in text
        assert "•" in text and "**" not in text and "```" not in text
        assert "tjtanaa" in text and "tvirolai-amd" in text
        assert "from the public PR thread" in text  # the curated note names its source
        assert "Enable UNIFORM_BATCH CG mode in rocm_aiter_mla_sparse" in text  # real title
    assert "raised from `UNIFORM_SINGLE_TOKEN_DECODE` to `UNIFORM_BATCH`" in en
    assert "提升为 `UNIFORM_BATCH`" in zh
    # a curated record holds no audit reading: readiness is unknown, not concluded from the
    # reorder call in the patch (which is still shown as a fact, above)
    assert ("`ROCMAiterMLASparseMetadataBuilder` (declared `UNIFORM_BATCH`): unknown, not checked"
            in en)
    assert "consistent way" not in en and "未检查" in zh
    assert "Merged at: July 9, 2026\n" in en


def test_context_facts(store):
    ctx = report_context(store, 45149, "en")
    assert ctx["summary"].reading == "unchecked"
    assert not read_pr(store, 45149, load_profile()).readings["checked"]
    assert ctx["summary"].action == "raised-unchecked"
    assert [c["name"] for c in ctx["implementation"].calls] == ["_init_reorder_batch_threshold"]
    assert ctx["risks"].core_rule["applies"] is True
    assert [m["number"] for m in ctx["related"].mentions] == [47766]
    ctx = report_context(store, 47144, "zh")
    assert ctx["summary"].action == "lowered-add-test"
    # one conversation topic: AndreasKaratzas asked, music-dino (the author) answered
    (topic,) = ctx["review"].topics
    assert topic["outcome"] == "answered" and topic["decisive"]["author"] == "music-dino"
    # features are named as words: "speculative decoding" is; MTP only inside the test id
    # EagleDeepSeekMTPModel, which names no feature as a word (analyze/scope.py)
    assert [f["name"] for f in ctx["risks"].features] == ["speculative decoding"]


def test_deterministic_across_fresh_kbs(tmp_path):
    outs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        s = seeded_store(tmp_path / name)
        outs.append(
            [render_reports(s, n, ("zh", "en"), fmt=f) for n in (47144, 45149)
             for f in ("md", "txt", "html")]
        )
        s.close()
    assert outs[0] == outs[1]


def test_relations_shown_with_type_title_evidence(store):
    store.conn.execute(
        "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
        "VALUES ('pr:47144', 'pr:42885', 'fixes-regression-from', ?, 0.9, 'text')",
        (evidence.make({"kind": "quote", "pr": "#47144", "where": "body",
                        "text": "added in #42885"},
                       {"kind": "undoes-level", "pr": "#47144", "class": "TritonMLABuilder",
                        "before": "UNIFORM_BATCH", "after": "UNIFORM_SINGLE_TOKEN_DECODE",
                        "back": False, "by": "#42885", "by_direction": "added",
                        "by_after": "UNIFORM_BATCH", "days": 51}),),
    )
    store.conn.execute(
        "INSERT INTO nodes(key, kind, number, title, repo) VALUES ('pr:42885', 'pr', 42885, "
        "'Add TritonMLA builder', 'vllm-project/vllm')"
    )
    store.conn.execute(
        "INSERT INTO relations(source, target, type, evidence, confidence, origin) "
        "VALUES ('pr:47310', 'pr:47144', 'alternative-to', 'closed in favor of #47144', 0.8, "
        "'curated')"
    )
    en = render_report(store, 47144, lang="en", fmt="md")
    zh = render_report(store, 47144, lang="zh", fmt="md")
    assert ("- This PR fixes a regression from #42885 (“Add TritonMLA builder”) (confidence "
            "0.90, from the PR texts):\n  - Description of #47144: “added in #42885”\n"
            "  - #47144 lowers `TritonMLABuilder` from `UNIFORM_BATCH` to "
            "`UNIFORM_SINGLE_TOKEN_DECODE`.\n  - #42885 had declared it as `UNIFORM_BATCH` 51 days "
            "earlier.\n") in en
    assert ("  - #47144 的描述：“added in #42885”\n  - #47144 把 `TritonMLABuilder` 由 "
            "`UNIFORM_BATCH` 降为 `UNIFORM_SINGLE_TOKEN_DECODE`。\n"
            "  - #42885 在此 51 天之前把它声明为 `UNIFORM_BATCH`。\n") in zh
    # evidence a knowledge base stored as text before evidence was data: shown as a quote
    assert "  - Evidence as an earlier prkb version stored it: “closed in favor of #47144”" in en
    assert "  - 早期版本的 prkb 存下的依据原文：“closed in favor of #47144”" in zh
    assert "confidence 0.90" in en
    # one sentence per type and direction (the label joined as "#47310 alternative to this
    # PR" / "本 PR 修复其引入的问题 #42885" read wrongly)
    assert "#47310 is an alternative to this PR" in en
    assert "本 PR 修复了 #42885 引入的问题" in zh and "#47310 是本 PR 的替代方案" in zh
    assert "unclassified" not in en


def test_git_only_record_says_not_collected(tmp_path):
    store = seeded_store(tmp_path)
    add(
        store,
        record(
            50001, source="git", body=None, user=None,
            files=[{"filename": "vllm/v1/attention/backends/flashinfer.py", "status": "modified",
                    "additions": 1, "deletions": 1,
                    "patch": decl_patch("FlashInferMetadataBuilder", "UNIFORM_BATCH", "ALWAYS")}],
        ),
    )
    en = render_report(store, 50001, lang="en", fmt="md")
    zh = render_report(store, 50001, lang="zh", fmt="md")
    assert "The description was not collected" in en
    assert "the discussion was not collected" in en
    assert "未收集到描述" in zh and "讨论没有被采集" in zh
    # collected without the audit: no reading, so the readiness is not checked
    assert "`FlashInferMetadataBuilder` (declared `ALWAYS`): unknown, not checked" in en
    assert "check that the builder's decode threshold can grow" in en
    store.close()


def test_cli_report(tmp_path, capsys):
    db = tmp_path / "kb.sqlite"
    seeded_store(tmp_path).close()
    assert main(["--db", str(db), "report", "47144"]) == 0
    out = capsys.readouterr().out
    assert out.index("## 执行摘要") < out.index("## Executive summary")  # zh then en
    target = tmp_path / "r.html"
    assert main(["--db", str(db), "report", "45149", "--lang", "en", "--format", "html",
                 "-o", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert not list(tmp_path.glob("*.tmp"))
    capsys.readouterr()
    assert main(["--db", str(db), "report", "123456"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "123456" in err[0]


def test_cli_report_output_respects_the_umask_and_fails_in_one_line(tmp_path, capsys):
    """``report -o`` writes with the user's umask (mkstemp's 0600 before), and a file that
    cannot be created is one error line naming it (a traceback before)."""
    import os
    import stat

    db = tmp_path / "kb.sqlite"
    seeded_store(tmp_path).close()
    target = tmp_path / "r.md"
    old = os.umask(0o022)
    try:
        assert main(["--db", str(db), "report", "47144", "--lang", "en", "-o", str(target)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    capsys.readouterr()
    # /proc takes no new files, not even from root: the write itself fails
    bad = Path("/proc") / f"prkb-report-{os.getpid()}.md"
    assert main(["--db", str(db), "report", "47144", "-o", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and err[0].startswith("prkb: error:")
    assert "Traceback" not in "\n".join(err)
