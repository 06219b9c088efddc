"""What reports say must be true: times with an unknown zone, the audit as the one judge of
speculative-decoding readiness, paraphrased records labelled as such, portable code, big PRs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from prkb.profile import load_profile
from prkb.publish import digest as dg
from prkb.records import normalize_record
from prkb.render.markdown import to_html
from prkb.render.report import render_report, report_context
from prkb.site.report_page import report_html
from prkb.store import Store
from tests.report_helpers import add, record

PROFILE = load_profile()


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible(html: str) -> str:
    """The words a reader sees, without whitespace (the two renderers lay them out apart)."""
    p = _Text()
    p.feed(html)
    p.close()
    return re.sub(r"\s+", "", "".join(p.parts))


def same_on_site(store: Store, ref: int, lang: str) -> str:
    """The site's report of ``ref`` says what the Markdown report says; returns the latter."""
    md = render_report(store, ref, lang=lang, fmt="md", profile=PROFILE)
    assert visible(report_html(store, {"ref": str(ref)}, lang, PROFILE)) == visible(to_html(md))
    return md


def line_of(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.lstrip("-• ").startswith(start))


# --- times whose zone is unknown ----------------------------------------------------------


def test_normalize_keeps_naive_times_naive_and_days_as_days() -> None:
    rec = normalize_record(record(1, source="curated", merged_at="2026-07-09T10:09:00",
                                  created_at="2026-06-30", updated_at="2026-07-09 10:09",
                                  closed_at="2026-07-09T10:09:00+08:00"))
    assert rec["merged_at"] == "2026-07-09T10:09:00"  # not made UTC: its zone is unknown
    assert rec["created_at"] == "2026-06-30"  # a day stays a day, not midnight UTC
    assert rec["updated_at"] == "2026-07-09T10:09:00"
    assert rec["closed_at"] == "2026-07-09T02:09:00Z"  # an aware time is stored in UTC


def test_a_time_with_an_unknown_zone_is_never_printed_as_utc(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    add(store, record(60001, source="curated", merged_at="2026-07-09T10:09:00",
                      created_at="2026-06-30"))
    add(store, record(60002, merged_at="2026-07-09T10:09:00Z"))
    add(store, record(60003, source="curated", merged_at="2026-07-09"))
    en = same_on_site(store, 60001, "en")
    zh = same_on_site(store, 60001, "zh")
    assert line_of(en, "Merged at") == (
        "- Merged at: Jul 9, 2026, 10:09:00\u202fAM (time zone unknown)"
    )
    assert line_of(zh, "合并时间") == "- 合并时间：2026年7月9日 10:09:00（时区未知）"
    assert "UTC" not in en and "UTC" not in zh
    # an aware time keeps printing in UTC, a bare day as a day
    assert line_of(same_on_site(store, 60002, "en"), "Merged at").endswith("10:09:00\u202fAM UTC")
    assert line_of(same_on_site(store, 60003, "en"), "Merged at") == "- Merged at: July 9, 2026"
    # the digest lists the PR on the day as written, and says no time of day at all
    week = dg.gather(store, dg.period_for(since="2026-07-06", until="2026-07-12"), PROFILE)
    assert {(it.number, it.when) for it in week.merged} >= {(60001, "2026-07-09")}
    store.close()


def test_dates_of_the_catalogs() -> None:
    from prkb.render.i18n import format_datetime_for

    assert format_datetime_for("2026-07-09T10:09:00", "en").endswith("(time zone unknown)")
    assert format_datetime_for("2026-07-09T10:09:00", "zh").endswith("（时区未知）")
    assert "time zone" not in format_datetime_for("2026-07-09T10:09:00Z", "en")


# --- speculative-decoding readiness: the audit's judgement, never a second heuristic ------

BUILDER = "vllm/v1/attention/backends/synth_attn.py"
RULE = str(PROFILE.audit["rule"])
WARN_EN = "cannot grow under speculative decoding"
WARN_ZH = "无法增大"


def raise_patch(extra: str) -> str:
    """A raise to UNIFORM_BATCH, plus one more added line in ``__init__``."""
    return (
        "@@ -10,2 +10,2 @@ class SynthMetadataBuilder(AttentionMetadataBuilder):\n"
        "-    _cudagraph_support: ClassVar[AttentionCGSupport] = "
        "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH\n"
        "@@ -30,2 +30,3 @@ class SynthMetadataBuilder(AttentionMetadataBuilder):\n"
        "         self.reorder_batch_threshold = 1\n"
        f"+        {extra}\n"
    )


def raise_record(number: int, extra: str, *, sha: str | None, readings: list[Any] | None,
                 findings: list[Any] | None = None, source: str = "git") -> dict[str, Any]:
    ext: dict[str, Any] = {"repo": PROFILE.repo}
    if readings is not None:
        ext["builder_levels"] = readings
    if findings is not None:
        ext["findings"] = findings
    return record(
        number, source=source, merge_commit_sha=sha, prkb=ext,
        title="[Perf] Raise the synthetic builder",
        files=[{"filename": BUILDER, "status": "modified", "additions": 2, "deletions": 1,
                "patch": raise_patch(extra)}],
    )


def reading(spec_ready: bool | None, cls: str = "SynthMetadataBuilder") -> dict[str, Any]:
    return {"class": cls, "file": BUILDER, "declared": "UNIFORM_BATCH",
            "effective": "UNIFORM_BATCH", "dynamic": False, "spec_ready": spec_ready}


FINDING = {"rule": RULE, "file": BUILDER, "class": "SynthMetadataBuilder",
           "message_en": "SynthMetadataBuilder claims UNIFORM_BATCH (declared here)",
           "message_zh": "SynthMetadataBuilder 声明支持 UNIFORM_BATCH"}
GROWS = "self.reorder_batch_threshold += self.num_speculative_tokens"


@pytest.fixture(scope="module")
def spec_kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = Store(tmp_path_factory.mktemp("spec") / "kb.sqlite")
    # the threshold grows by += (no related call in the patch): the audit read it ready
    add(store, raise_record(61001, GROWS, sha="a" * 40, readings=[reading(True)]))
    # the same patch, and the audit flagged the class in this commit
    add(store, raise_record(61002, GROWS, sha="b" * 40, readings=[reading(False)],
                            findings=[FINDING]))
    # the same patch, no audit reading at all (a GitHub record)
    add(store, raise_record(61003, GROWS, sha=None, readings=None, source="github"))
    # the patch adds the reorder call with the flag true, yet the audit reads not ready
    # (flagged before this commit, so no new finding): the audit wins
    add(store, raise_record(
        61004, "self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)",
        sha="c" * 40, readings=[reading(False)]))
    # a reading with no value: the builder reorders nothing, the rule does not apply
    add(store, raise_record(61005, GROWS, sha="d" * 40, readings=[reading(None)]))
    # readings at the commit, but none for the raised class
    add(store, raise_record(61006, GROWS, sha="e" * 40, readings=[reading(True, "OtherBuilder")]))
    # a curated record with a stored finding and no reading
    add(store, raise_record(61007, GROWS, sha=None, readings=None, findings=[FINDING],
                            source="curated"))
    yield store
    store.close()


def test_a_ready_reading_carries_no_warning(spec_kb: Store) -> None:
    en, zh = same_on_site(spec_kb, 61001, "en"), same_on_site(spec_kb, 61001, "zh")
    assert WARN_EN not in en and WARN_ZH not in zh
    assert "not checked" not in en and "未检查" not in zh
    assert "the decode threshold of `SynthMetadataBuilder` grows under speculative decoding" in en
    assert "可以增大" in zh
    ctx = report_context(spec_kb, 61001, "en")
    assert ctx["summary"].reading == "ready" and ctx["summary"].action == "raised-consistent"


@pytest.mark.parametrize("number", [61002, 61007])
def test_a_stored_finding_carries_the_warning(spec_kb: Store, number: int) -> None:
    en, zh = same_on_site(spec_kb, number, "en"), same_on_site(spec_kb, number, "zh")
    assert WARN_EN in line_of(en, "Consistency audit: the decode threshold")
    assert WARN_ZH in zh
    ctx = report_context(spec_kb, number, "en")
    assert ctx["summary"].reading == "not-ready"
    assert ctx["key_code"].readings[0]["source"] == "finding"
    assert ctx["summary"].action == "resolve-findings"


def test_no_audit_reading_says_not_checked(spec_kb: Store) -> None:
    en, zh = same_on_site(spec_kb, 61003, "en"), same_on_site(spec_kb, 61003, "zh")
    assert "`SynthMetadataBuilder` (declared `UNIFORM_BATCH`): unknown, not checked" in en
    assert "未知，未检查" in zh
    assert WARN_EN not in en and WARN_ZH not in zh and "grows under" not in en
    assert report_context(spec_kb, 61003, "en")["summary"].action == "raised-unchecked"
    # readings of other classes at the commit do not vouch for this one
    assert report_context(spec_kb, 61006, "en")["summary"].reading == "unchecked"


def test_the_audit_wins_over_the_lines_of_the_patch(spec_kb: Store) -> None:
    en = same_on_site(spec_kb, 61004, "en")
    assert WARN_EN in en
    # the call is still shown, as what the patch adds
    assert "a line naming `_init_reorder_batch_threshold` was added" in en
    ctx = report_context(spec_kb, 61004, "en")
    assert ctx["key_code"].readings[0]["source"] == "reading"
    assert ctx["summary"].action == "raised-check"


def test_a_builder_without_a_threshold_is_outside_the_rule(spec_kb: Store) -> None:
    en = same_on_site(spec_kb, 61005, "en")
    assert "does not reorder batches by a decode threshold" in en
    assert WARN_EN not in en and "not checked" not in en
    assert report_context(spec_kb, 61005, "en")["summary"].action == "raised-add-test"


# --- where the text comes from ------------------------------------------------------------

BODY = "## Purpose\n\nThe builder crashed at capture; this lowers it.\n\n## Test Plan\n\n" \
       "```\npytest tests/v1/test_synth.py\n```"


def test_paraphrased_records_are_labelled_and_quoted_ones_stay_quoted(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    add(store, record(62001, source="curated", body=BODY, files=[
        {"filename": BUILDER, "status": "modified", "additions": 1, "deletions": 1}],
        comments=[{"user": {"login": "rev"}, "body": "Does it need a test?"}]))
    add(store, record(62002, source="github", body=BODY))
    add(store, record(62003, source="git", body="This reverts commit " + "f" * 40 + "."))
    cur_en, cur_zh = same_on_site(store, 62001, "en"), same_on_site(store, 62001, "zh")
    assert "Paraphrased from public information" in cur_en and "整理自公开信息" in cur_zh
    assert "quoted" not in cur_en.replace("not quoted", "")
    assert "From the PR description" not in cur_en and "摘自 PR 描述" not in cur_zh
    assert "The comments shown below are paraphrased from public information" in cur_en
    assert "Test commands in the record paraphrased from public information" in cur_en
    assert "Features named in the title or the paraphrased text" in cur_en
    gh_en, gh_zh = same_on_site(store, 62002, "en"), same_on_site(store, 62002, "zh")
    assert "From the PR description (author: someone)" in gh_en and "摘自 PR 描述" in gh_zh
    assert "Paraphrased" not in gh_en and "整理自公开信息" not in gh_zh
    git_en = same_on_site(store, 62003, "en")
    assert "From the commit message (author: someone)" in git_en
    assert "PR description" not in git_en
    store.close()


def test_no_title_is_said_to_be_unknown(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    add(store, record(62004, source="curated", title=None, user=None))
    en, zh = same_on_site(store, 62004, "en"), same_on_site(store, 62004, "zh")
    assert "- Title: unknown" in en and "- 标题：未知" in zh
    assert "- Author: unknown" in en
    store.close()


# --- portable code is not a platform restriction ------------------------------------------


def test_portable_code_is_not_platform_specific(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    patch = (
        "@@ -10,2 +10,2 @@ class TritonSynthMetadataBuilder(AttentionMetadataBuilder):\n"
        "-    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH\n"
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = "
        "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    )
    add(store, record(63001, title="[Bugfix][ROCm] Lower the Triton builder", files=[
        {"filename": "vllm/v1/attention/backends/mla/triton_synth.py", "status": "modified",
         "additions": 1, "deletions": 1, "patch": patch}]))
    add(store, record(63002, title="[Bugfix] Lower the ROCm builder", files=[
        {"filename": "vllm/v1/attention/backends/rocm_synth.py", "status": "modified",
         "additions": 1, "deletions": 1, "patch": patch}]))
    ctx = report_context(store, 63001, "en")
    assert "platform-specific" not in {t["code"] for t in ctx["risks"].tags}
    en, zh = same_on_site(store, 63001, "en"), same_on_site(store, 63001, "zh")
    assert line_of(en, "Platforms") == (
        "- Platforms: none specific; the changed code is portable (Triton), which is not tied "
        "to one platform; named only in the title: AMD ROCm"
    )
    assert "不限于某一平台" in zh and "仅特定平台" not in zh
    # code under a platform's own path still is specific to it
    ctx = report_context(store, 63002, "en")
    assert "platform-specific" in {t["code"] for t in ctx["risks"].tags}
    assert line_of(same_on_site(store, 63002, "en"), "Platforms") == "- Platforms: AMD ROCm"
    store.close()


def test_shared_code_beside_a_platforms_file_is_not_platform_specific(tmp_path: Path) -> None:
    """A PR that changes one platform's backend and a layer every platform runs is not
    "specific to a platform": the tag is given only when every changed source file is a
    platform's (#33230 on the fork added an XPU backend and changed the shared sparse
    attention indexer, and read as specific to Intel XPU)."""
    store = Store(tmp_path / "kb.sqlite")
    patch = (
        "@@ -10,2 +10,2 @@ class RocmSynthMetadataBuilder(AttentionMetadataBuilder):\n"
        "-    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH\n"
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = "
        "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    )
    backend = {"filename": "vllm/v1/attention/backends/rocm_synth.py", "status": "modified",
               "additions": 1, "deletions": 1, "patch": patch}
    shared = {"filename": "vllm/model_executor/layers/sparse_attn_indexer.py",
              "status": "modified", "additions": 3, "deletions": 0,
              "patch": "@@ -1,1 +1,4 @@\n x = 1\n+y = 2\n"}
    rocm_own = {"filename": "vllm/platforms/rocm.py", "status": "modified",
                "additions": 1, "deletions": 1, "patch": "@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"}
    add(store, record(63003, title="[ROCm] Lower the ROCm builder", files=[backend, shared]))
    add(store, record(63004, title="[ROCm] Lower the ROCm builder", files=[backend, rocm_own]))
    ctx = report_context(store, 63003, "en")
    assert "platform-specific" not in {t["code"] for t in ctx["risks"].tags}
    assert line_of(same_on_site(store, 63003, "en"), "Platforms") == "- Platforms: AMD ROCm"
    # a platform's backend and that platform's own module: specific to it
    ctx = report_context(store, 63004, "en")
    assert "platform-specific" in {t["code"] for t in ctx["risks"].tags}
    store.close()


# --- a PR of hundreds of files gets a report of normal length ----------------------------


def big_record(number: int, n_files: int) -> dict[str, Any]:
    """A repository-wide change: one declaration change, a core path, re-wrapped declaration
    lines in some backends, tests (some naming the changed class) and many unrelated files."""
    files = [{"filename": BUILDER, "status": "modified", "additions": 2, "deletions": 1,
              "patch": raise_patch("pass")}]
    files.append({"filename": "vllm/v1/attention/backend.py", "status": "modified",
                  "additions": 3, "deletions": 3, "patch": "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"})
    for i in range(4):  # reformatted declarations: they name the family, their ASTs are equal
        files.append({
            "filename": f"vllm/v1/attention/backends/fmt_{i}.py", "status": "modified",
            "additions": 3, "deletions": 1,
            "patch": f"@@ -5,1 +5,3 @@ class Fmt{i}Builder(AttentionMetadataBuilder):\n"
                     "-    _cudagraph_support: ClassVar[AttentionCGSupport] = "
                     "AttentionCGSupport.ALWAYS\n"
                     "+    _cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
                     "+        AttentionCGSupport.ALWAYS\n+    )\n"})
    for i in range(3):
        files.append({"filename": f"tests/v1/test_synth_{i}.py", "status": "modified",
                      "additions": 1, "deletions": 1,
                      "patch": "@@ -1,1 +1,1 @@\n-from x import SynthMetadataBuilder\n"
                               "+from y import SynthMetadataBuilder\n"})
    i = 0
    while len(files) < n_files:
        folder = "tests/misc" if i % 5 == 0 else "vllm/misc"
        files.append({"filename": f"{folder}/mod_{i}.py", "status": "modified",
                      "additions": 2, "deletions": 1,
                      "patch": "@@ -1,1 +1,2 @@\n-a = (1,)\n+a = (\n+    1,)\n"})
        i += 1
    return record(number, title="[Misc] Reformat everything", files=files)


def test_a_big_pr_gets_a_report_of_normal_length(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.sqlite")
    add(store, big_record(64001, 600))
    add(store, big_record(64002, 12))  # a normal PR lists every file
    rec = big_record(64001, 600)
    key = 1 + 1 + 4 + 3  # declaration, core path, family lines, tests naming the class
    others = rec["files"][key:]
    lines = sum(f["additions"] + f["deletions"] for f in others)
    for lang, want in (
        ("en", f"and {len(others)} other files ({lines} lines changed)"),
        ("zh", f"以及其他 {len(others)} 个文件（共改动 {lines} 行）"),
    ):
        for fmt in ("md", "txt"):
            text = render_report(store, 64001, lang=lang, fmt=fmt)
            assert len(text.splitlines()) < 150, (lang, fmt, len(text.splitlines()))
            assert text.count(want) == 2, (lang, fmt)  # breakdown and key files
        same_on_site(store, 64001, lang)
    en = render_report(store, 64001, lang="en", fmt="md")
    key_files = en.split("## Key files", 1)[1].split("## Key code", 1)[0]
    for f in rec["files"][:key]:
        assert f"`{f['filename']}`" in key_files
    assert "vllm/misc/mod_1.py" not in en
    # the tests line names at most 15 test files and counts the rest
    n_tests = sum(1 for f in rec["files"] if f["filename"].startswith("tests/"))
    tests_line = next(ln for ln in en.splitlines() if "**Tests**" in ln)
    # 15 files and the folder the sentence names
    assert tests_line.endswith(f", and {n_tests - 15} more") and tests_line.count("`tests/") == 16
    assert "`tests/v1/test_synth_0.py`" in tests_line  # those naming the class come first
    small = render_report(store, 64002, lang="en", fmt="md")
    assert "other files (" not in small and "vllm/misc/mod_1.py" in small
    store.close()
