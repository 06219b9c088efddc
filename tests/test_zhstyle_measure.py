"""The zh style measure itself (tests/zhstyle.py) on small hand-written snippets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prkb.profile import load_profile
from tests import zhstyle as z

NAMES = z.proper_names(load_profile())


def n(text: str) -> dict[str, int]:
    return z.counts(z.measure(text, NAMES))


def only(**want: int) -> dict[str, int]:
    return {c: want.get(c.replace("-", "_"), 0) for c in z.CATEGORIES}


GOOD = """\
# PR #10 报告

- 作者：Jane Roe
- 一句话：`DemoBuilder` 的 `_cudagraph_support` 由 `UNIFORM_BATCH` 降为 `NEVER`。
- 平台：AMD ROCm、Intel XPU；特性：MTP、EAGLE、DeepSeek。
- 本 PR 依赖 #11，修复了 #12 引入的问题，并被 #13 取代。
- 原文链接：<https://github.com/o/r/pull/10>，另见 [说明](https://example.org/a-b)。
- @some-login 的评论：“This keeps the level as it was.”

> Reviewer text stays in English inside a blockquote.

```python
class DemoBuilder(Base):
    _cudagraph_support = S.NEVER  # any English here is code
```

仅纯 decode 批次（每个请求的 query 长度均为 1）可捕获完整 CUDA Graph。
"""


def test_good_snippet_measures_zero() -> None:
    assert n(GOOD) == only()


def test_latin_words_outside_code_quotes_urls_and_names() -> None:
    found = z.measure("- 风险：这个 change 会 break 捕获（见 `code here`）。\n", NAMES)
    assert [s.text for s in found["latin"]] == ["change", "break"]
    assert n("- 评审者：music-dino，AndreasKaratzas\n- 说明：by music-dino\n") == only(latin=1)
    assert n("标题：Fix the MTP path\n") == only(latin=3)   # an unmarked title counts
    assert n("标题：“Fix the MTP path”\n") == only()
    assert n("见 https://example.org/path_with_words 。\n") == only()
    assert n("级别为 UNIFORM\\_BATCH。\n") == only()   # a Markdown escape keeps one word
    assert n("级别为 FOO\\_BAR。\n") == only(latin=1)


def test_half_width_punctuation_next_to_chinese() -> None:
    found = z.measure("- 仓库: `o/r`\n- 状态(已合并), 作者 x\n", NAMES)
    assert [(s.line, s.text) for s in found["punct"]] == [(1, ":"), (2, "("), (2, ")"),
                                                          (2, ",")]
    assert n("- 值：`a` (见下)\n") == only(punct=2)
    assert n("比较 `f(x)` 与 `g(y)`：一致。\n") == only()   # code keeps its brackets
    assert n("- **声明变更**: 位于某处\n") == only(punct=1)   # markup is skipped


def test_english_list_separator_where_the_comma_belongs_to_a_chinese_list() -> None:
    assert n("- 特性：MTP, EAGLE, DeepSeek\n") == only(list_sep=2)
    assert n("- 标记：`a`, `b`\n") == only(list_sep=1)
    assert n("- 特性：MTP、EAGLE、DeepSeek\n") == only()
    assert n("for MTP, EAGLE\n") == only(latin=1)   # no Chinese on the line: not a zh list


def test_raw_entities() -> None:
    assert n("- 变更：`UNIFORM_BATCH` -&gt; `NEVER`\n") == only(entity=1)
    assert n("- 变更：`A -&gt; B` 与 &#39;\n") == only(entity=2)


@pytest.mark.parametrize(
    "line",
    [
        "- 本 PR 后续工作 #20059",
        "- 本 PR 修改其设定的声明 #35719 (some title): 证据",
        "- 本 PR 替代方案 #47310。",
        "- #47144 修复其引入的问题本 PR",
        "- #47144 修复其引入的问题本 PR：证据",
    ],
)
def test_fragment_joins(line: str) -> None:
    assert z.counts(z.measure(line + "\n", NAMES))["fragment"] == 1


@pytest.mark.parametrize(
    "line",
    [
        "- 本 PR 是 #47310 的替代方案。",
        "- 本 PR 依赖 #47766",
        "- 本 PR 提及 #48015：证据",
        "- 本 PR 修复了 #42885 引入的问题",
        "- 本 PR 引入的问题由 #47144 修复",
        "- #20059 的后续工作是本 PR",
        "- 本 PR 在 #20059 之后",
        "- 推荐动作：一致性审计尚未检查该 PR：请确认。",
        "- 审计尚未检查本 PR",
        "- #45149 依赖本 PR：证据",
        "# PR #10 报告",
    ],
)
def test_whole_sentences_are_not_fragments(line: str) -> None:
    assert z.counts(z.measure(line + "\n", NAMES))["fragment"] == 0


def test_indented_text_code_and_fences_are_skipped() -> None:
    text = "说明：\n\n    class Foo(Bar):\n        x = 1, 2\n\n正文。\n"
    assert n(text) == only()
    assert n("~~~\nplain English, here\n~~~\n") == only()


def test_names_come_from_the_profile_and_glossary() -> None:
    for name in ("ROCm", "XPU", "Triton", "MTP", "EAGLE", "DeepSeek", "UNIFORM_BATCH",
                 "PURE_DECODE_ONLY", "query_len_support", "_init_reorder_batch_threshold",
                 "decode", "PR"):
        assert name in NAMES, name
    assert "speculative" not in NAMES and "lineage" not in NAMES


def test_script_mode_prints_counts_per_report(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("- 特性：MTP, EAGLE\n- 本 PR 后续工作 #1\n", encoding="utf-8")
    good = tmp_path / "good.md"
    good.write_text(GOOD, encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, str(root / "tests" / "zhstyle.py"), str(bad), str(good)],
        capture_output=True, text=True, check=True, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    ).stdout.splitlines()
    assert out[0].split() == ["report", *z.CATEGORIES]
    assert out[1].split() == [str(bad), "0", "0", "1", "0", "1"]
    assert out[2].split() == [str(good), "0", "0", "0", "0", "0"]
    assert out[3].split() == ["total", "0", "0", "1", "0", "1"]
