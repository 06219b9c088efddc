"""Golden files: PRs rendered in each language and format.

- pr-101, pr-102: small synthetic GitHub records;
- pr-47144, pr-45149: the bundled data (data/snapshots, relations built as ``prkb demo``
  does);
- pr-42885, pr-25104, pr-22721, pr-36519, pr-34541: real vLLM history in the bundled data,
  collected with ``collect git`` from the public fork (a new declaration the audit flags, a
  lowering, a bool spelling made a level, a run-time override, a raise with the reorder call);
- pr-402, pr-403, pr-404, pr-406, pr-407: collected with ``collect git`` from the generated
  repository of tests/fivecases.py (a bool flag made a level, a rename, a raise with the
  reorder call, a lowering fix, a run-time override), code read from its blobs.

Regenerate after an intended change with ``PRKB_UPDATE_GOLDEN=1 python3 -m pytest
tests/test_report_golden.py`` and review the diff of tests/golden/report/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fivecases import CASES as GIT_CASES
from fivecases import five_cases_kb

from prkb.collect.snapshot import import_jsonl
from prkb.graph import build_relations
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.render.report import render_report
from prkb.store import Store
from tests.report_helpers import add, decl_patch, record
from tests.zhstyle import CATEGORIES, measure, proper_names

GOLDEN = Path(__file__).parent / "golden" / "report"


def _kb(tmp_path: Path) -> Store:
    store = Store(tmp_path / "kb.sqlite")
    # a lowering with a test, a review thread, an open question and a mention
    add(store, record(
        101,
        title="[Bugfix][XPU] Lower XPU builder to single-token decode",
        body=(
            "## Purpose\n\nThe XPU builder crashes at capture with MTP; follow-up to #100.\n\n"
            "<!-- hidden note -->\n## Test Plan\n\n```\npytest tests/v1/test_xpu.py -k capture\n```"
        ),
        files=[
            {"filename": "vllm/v1/attention/backends/xpu_attn.py", "status": "modified",
             "additions": 1, "deletions": 1,
             "patch": decl_patch("XPUMetadataBuilder", "UNIFORM_BATCH",
                                 "UNIFORM_SINGLE_TOKEN_DECODE")},
            {"filename": "tests/v1/test_xpu.py", "status": "modified", "additions": 12,
             "deletions": 0, "patch": "@@ -1,1 +1,2 @@\n import pytest\n+def test_capture(): ..."},
        ],
        reviews=[
            {"user": {"login": "rev-a"}, "state": "APPROVED", "body": "LGTM, the test covers it.",
             "submitted_at": "2026-03-01T10:00:00Z"},
            {"user": {"login": "rev-b"}, "state": "COMMENTED",
             "body": "Does this slow down decode throughput?",
             "submitted_at": "2026-03-01T11:00:00Z"},
        ],
    ))
    # a raise without the matching reorder call; no body, no discussion
    add(store, record(
        102,
        title="[Perf] Raise FlashInfer builder to ALWAYS",
        user=None,
        merged_at=None,
        state="open",
        files=[
            {"filename": "vllm/v1/attention/backends/flashinfer.py", "status": "modified",
             "additions": 1, "deletions": 1,
             "patch": decl_patch("FlashInferMetadataBuilder", "UNIFORM_BATCH", "ALWAYS")},
        ],
    ))
    return store


BUNDLED = (47144, 45149)
REAL_GIT = (42885, 25104, 22721, 36519, 34541, 43043)  # in the bundled data too
CASES = [(n, lang, fmt) for n in (101, 102, *BUNDLED, *REAL_GIT, *GIT_CASES)
         for lang in ("zh", "en") for fmt in ("md", "txt", "html")]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    store = _kb(tmp_path_factory.mktemp("golden"))
    yield store
    store.close()


@pytest.fixture(scope="module")
def bundled_kb(tmp_path_factory: pytest.TempPathFactory):
    profile = load_profile()
    store = Store(tmp_path_factory.mktemp("golden-bundled") / "kb.sqlite")
    for snap in sorted((data_dir() / "snapshots").glob("*.jsonl")):
        assert not import_jsonl(store, snap, profile).errors
    build_relations(store, profile)
    yield store
    store.close()


@pytest.fixture(scope="module")
def git_kb(tmp_path_factory: pytest.TempPathFactory):
    store, _repo, _shas = five_cases_kb(tmp_path_factory.mktemp("golden-git"))
    yield store
    store.close()


@pytest.mark.parametrize(("number", "lang", "fmt"), CASES)
def test_golden(request, number, lang, fmt):
    which = ("bundled_kb" if number in (*BUNDLED, *REAL_GIT)
             else "git_kb" if number in GIT_CASES else "kb")
    got = render_report(request.getfixturevalue(which), number, lang=lang, fmt=fmt)
    path = GOLDEN / f"pr-{number}.{lang}.{fmt}"
    if os.environ.get("PRKB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with PRKB_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


def test_golden_facts(kb):
    """The golden files say what the synthetic facts imply (not only 'same as before')."""
    en = render_report(kb, 101, lang="en", fmt="md")
    assert "files under `tests/` changed: `tests/v1/test_xpu.py`" in en
    assert "A correctness fix that changes tests in the same PR: merge it." in en
    # two topics: rev-b's question nobody answered, and rev-a's approval quoted
    assert "Conversation opened by @rev-b (1 comment)." in en  # ngettext: one, not "1 comments"
    assert "unanswered: nobody else replied." in en
    assert "approved; no reviewer's last verdict requests changes." in en
    assert "> LGTM, the test covers it." in en and "> Does this slow down decode" in en
    assert "hidden note" not in en
    assert "#100" in en and "unclassified mentions" in en
    other = render_report(kb, 102, lang="en", fmt="md")
    assert "The knowledge base holds no description for this PR." in other
    assert "Unknown: the knowledge base holds no review, comment or line comment" in other
    assert "`FlashInferMetadataBuilder` (declared `ALWAYS`): unknown, not checked" in other
    assert "the consistency audit has not checked this PR" in other
    assert "State: open" in other


def test_every_zh_golden_keeps_the_zh_style():
    """The zh style measure (tests/zhstyle.py) over every Chinese golden report: 0."""
    names = proper_names(load_profile())
    paths = sorted(GOLDEN.glob("pr-*.zh.md")) + sorted(GOLDEN.glob("pr-*.zh.txt"))
    assert len(paths) == 2 * len({n for n, _, _ in CASES})
    for path in paths:
        found = measure(path.read_text(encoding="utf-8"), names)
        assert {c: [s.text for s in found[c]] for c in CATEGORIES} == {
            c: [] for c in CATEGORIES}, path.name


def test_golden_facts_of_the_bundled_and_git_cases(bundled_kb, git_kb):
    """What the bundled and git-collected goldens must say, from their facts."""
    zh = render_report(bundled_kb, 47144, lang="zh", fmt="md")
    assert "- 本 PR 修复了 #42885 引入的问题" in zh
    assert ("  - #47144 把 `TritonMLAMetadataBuilder` 由 `UNIFORM_BATCH` 降为 "
            "`UNIFORM_SINGLE_TOKEN_DECODE`。\n"
            "  - #42885 在此 51 天之前把它声明为 `UNIFORM_BATCH`。") in zh
    assert "  - #47310 未合并即关闭；#42885 引入的问题已由 #47144 修复并合并。" in zh
    en = render_report(bundled_kb, 45149, lang="en", fmt="md")
    assert "  - #35719 had last set it, from `NEVER` to `UNIFORM_SINGLE_TOKEN_DECODE`." in en
    # a bool flag made a level: both spellings and values said
    assert ("`FooMetadataBuilder`: `full_cudagraph_supported` = `True` became "
            "`attn_cudagraph_support` = `UNIFORM_SINGLE_TOKEN_DECODE`") in render_report(
                git_kb, 402, lang="en", fmt="md")
    # the raise: the class from the commit's file, the reorder call marked and explained
    raise_ = render_report(git_kb, 404, lang="en", fmt="md")
    assert "11 +         self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)" \
        in raise_
    assert "so its decode threshold grows with the number of speculative tokens" in raise_
    # the lowering fix: blame ties it to the raise
    fix = render_report(git_kb, 406, lang="en", fmt="md")
    assert "This PR fixes a regression from #405 (inferred)" in fix
    assert "The blamed lines declare `BazMLAMetadataBuilder`: #405 raised or added its level " \
           "and #406 lowers it." in fix
    # the run-time override: the method's body shown, the level said to be decided at run time
    dyn = render_report(git_kb, 407, lang="en", fmt="md")
    assert "12 +     def get_cudagraph_support(cls, vllm_config, kv_cache_spec):" in dyn
    assert "`QuxMetadataBuilder` overrides `get_cudagraph_support`" in dyn


def _code_lines(report: str, file: str) -> list[str]:
    """The numbered lines of the key code block under ``### `file` ``."""
    part = report.split(f"### `{file}`", 1)[1].split("```", 2)[1]
    return [ln for ln in part.splitlines() if ln[:1].isdigit()]


def test_golden_facts_of_real_history(bundled_kb):
    """Facts of the real-history goldens, read from the fork's commits by hand (git show of
    each squash commit), not from what prkb prints: merge time, author, counts, the lines of
    the class after the change and their numbers in the file."""
    def en(number: int) -> str:  # Babel puts a narrow no-break space before "PM"
        return render_report(bundled_kb, number, lang="en", fmt="md").replace("\u202f", " ")

    r42885 = en(42885)
    assert "- Merged at: May 18, 2026, 9:29:10 PM UTC" in r42885  # 14:29:10 -07:00
    assert "- Author: haosdent" in r42885
    assert "+10/-0" in r42885
    assert _code_lines(r42885, "vllm/v1/attention/backends/mla/triton_mla.py") == [
        "32 + class TritonMLAMetadataBuilder(MLACommonMetadataBuilder[MLACommonMetadata]):",
        "33 +     _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport."
        "UNIFORM_BATCH",
    ]
    assert "`cg-uniform-without-spec-decode` on `TritonMLAMetadataBuilder`" in r42885
    assert "#47144 fixes a regression from this PR" in r42885
    r25104 = en(25104)
    assert "- Merged at: Sep 18, 2025, 5:46:47 PM UTC" in r25104  # 12:46:47 -05:00
    assert "`cudagraph_support` lowered from `ALWAYS` to `UNIFORM_SINGLE_TOKEN_DECODE`" in r25104
    assert "+1/-1" in r25104
    # line 234 (the class statement's second line) is not in the snapshot: a gap
    assert _code_lines(r25104, "vllm/v1/attention/backends/rocm_aiter_fa.py") == [
        "233   class AiterFlashAttentionMetadataBuilder(",
        "235 +     cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE",
    ]
    r22721 = en(22721)
    assert "+4/-3" in r22721
    assert "`full_cudagraph_supported` = `True` became `cudagraph_support` = `ALWAYS`" in r22721
    assert _code_lines(r22721, "vllm/v1/attention/backends/rocm_aiter_fa.py")[-1] == (
        "235 +     cudagraph_support = AttentionCGSupport.ALWAYS")
    r36519 = en(36519)
    assert "+15/-3" in r36519 and "- Author: Matthew Bonanni" in r36519
    assert [ln.split()[0] for ln in _code_lines(r36519, "vllm/v1/attention/backends/mla/"
                                                "indexer.py")] == ["204", "208", "218", "219"]
    assert "`NEVER if not is_deep_gemm_supported(); else UNIFORM_BATCH`" in r36519
    r34541 = en(34541)
    assert "raised from `UNIFORM_SINGLE_TOKEN_DECODE` to `UNIFORM_BATCH`" in r34541
    assert "+50/-2" in r34541 and "- Author: jennyyyyzhen" in r34541
    assert [ln.split()[0] for ln in _code_lines(r34541, "vllm/v1/attention/backends/"
                                                "rocm_aiter_fa.py")] == ["396", "399"]
    # the commit calls _init_reorder_batch_threshold(1, supports_spec_as_decode=True): the
    # audit at the commit reads a threshold that grows (the snapshot keeps only the
    # declaration's lines, so the key code says the patch alone does not show it)
    assert ("the consistency audit at this PR's commit reads that the threshold of "
            "`AiterFlashAttentionMetadataBuilder` grows under speculative decoding") in r34541
    # the test of FlashAttentionMetadataBuilder's conditional value gained
    # "or current_platform.is_xpu()" (line 297 of flash_attn.py): UNIFORM_BATCH -> ALWAYS there
    r43043 = en(43043)
    assert "- Merged at: May 19, 2026, 3:09:07 PM UTC" in r43043  # 23:09:07 +08:00
    assert "- Author: Xinyu Chen" in r43043 and "+1/-1" in r43043
    # the changed line does not name the symbol, so the snapshot keeps no line of this patch:
    # the key code is rebuilt from the record (marked so, with no annotation the code lacks)
    rebuilt = r43043.split("### `vllm/v1/attention/backends/flash_attn.py`", 1)[1]
    assert "Rebuilt from the recorded declaration change" in rebuilt.split("```", 1)[0]
    assert ("+    _cudagraph_support = AttentionCGSupport.ALWAYS if get_flash_attn_version() == 3"
            " or current_platform.is_xpu() else AttentionCGSupport.UNIFORM_BATCH") in rebuilt
    assert ("where `current_platform.is_xpu()` holds and `get_flash_attn_version() == 3` does "
            "not, `FlashAttentionMetadataBuilder` now declares `ALWAYS` instead of "
            "`UNIFORM_BATCH`") in r43043
    assert "Effect unknown" not in r43043
