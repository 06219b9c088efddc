"""docs-drift: a Markdown backend table against the code, on small real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from auditfixtures import base_tree, plain_builder, triton_mla
from gitrepo import GitRepoBuilder

from prkb.cli import main
from prkb.profile import load_profile
from prkb.publish.docsdrift import TableError, parse_table

DOC = "docs/design/cuda_graphs.md"

TABLE = """\
# CUDA graphs

Some text | with a pipe that is not a table.

| Attention Backend | Platform | cudagraph_support | Comments |
| :---------------- | :------- | :---------------- | :------- |
| FlashAttention v2 | CUDA | `UNIFORM_BATCH` | conditional \\| low |
| FlashAttention v3 | CUDA | `ALWAYS` | |
| Triton MLA | any | `UNIFORM_SINGLE_TOKEN_DECODE` | stale: code says UNIFORM_BATCH |
| Mamba | CUDA \\| ROCm | `UNIFORM_BATCH` | a base row; subclasses inherit |
| Ghost Backend | - | `ALWAYS` | no such builder |

Unlisted backends are all declared as `NEVER`.
"""


def _tree(doc: str) -> dict[str, str | None]:
    tree = base_tree()
    tree["vllm/attn/backends/triton_mla.py"] = triton_mla("UNIFORM_BATCH", "UNIFORM")
    tree["vllm/attn/backends/fa.py"] = (
        "from ..backend import AttentionMetadataBuilder, CGSupport\n\n\n"
        "class FlashAttentionMetadataBuilder(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = (\n"
        "        CGSupport.ALWAYS if version() == 3 else CGSupport.UNIFORM_BATCH\n"
        "    )\n"
    )
    tree["vllm/attn/backends/mamba.py"] = plain_builder(
        "MambaMetadataBuilder", "UNIFORM_BATCH",
        "_init_reorder_batch_threshold(1, supports_spec_as_decode=True)",
    ) + "\n\nclass Mamba2MetadataBuilder(MambaMetadataBuilder):\n    pass\n"
    tree["vllm/attn/backends/flex.py"] = plain_builder("FlexMetadataBuilder", "ALWAYS", None)
    tree["vllm/attn/backends/fi.py"] = plain_builder(
        "FlashInferMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE", None,
        extra="@classmethod\ndef get_cudagraph_support(cls, c, s):\n    return cls.x",
    )
    tree[DOC] = doc
    return tree


@pytest.fixture()
def repo(tmp_path: Path):
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree(TABLE), "docs")
    return r


def _run(args: list[str], capsys) -> tuple[int, str]:
    rc = main(args)
    return rc, capsys.readouterr().out


def test_table_parse_handles_extra_columns_and_escaped_pipes():
    table = parse_table(TABLE, load_profile())
    assert table.backend_col == "Attention Backend"
    assert table.level_col == "cudagraph_support"
    assert [r.name for r in table.rows][:2] == ["FlashAttention v2", "FlashAttention v3"]
    assert table.rows[0].cells["Comments"] == "conditional | low"
    assert table.rows[3].cells["Platform"] == "CUDA | ROCm"
    assert table.rows[2].levels == ["UNIFORM_SINGLE_TOKEN_DECODE"]
    assert table.unlisted_default is True
    assert table.rows[0].line == 7


def test_drift_report_on_a_small_repo(repo, capsys):
    rc, out = _run(["docs-drift", str(repo.path), "--json"], capsys)
    assert rc == 1
    data = json.loads(out)
    # a stale row (documented single-token, code uniform batch)
    assert [(s["row"], s["class"]) for s in data["stale"]] == [
        ("Triton MLA", "TritonMLAMetadataBuilder")]
    # an orphan row
    assert [o["row"] for o in data["orphans"]] == ["Ghost Backend"]
    # a missing builder: not NEVER, not listed; the inheriting subclass of a listed base is
    # covered; the NEVER default builder is not reported
    assert sorted(m["class"] for m in data["missing"]) == ["FlashInferMetadataBuilder",
                                                         "FlexMetadataBuilder"]
    # the conditional value: two rows (aliases) for one builder, each matching one branch
    assert data["matched"]["FlashAttention v2"] == ["FlashAttentionMetadataBuilder"]
    assert data["matched"]["FlashAttention v3"] == ["FlashAttentionMetadataBuilder"]
    assert data["matched"]["Mamba"] == ["MambaMetadataBuilder"]


def test_no_drift_exit_zero_and_dynamic_rows_not_counted(tmp_path, capsys):
    doc = """\
| Backend | cudagraph_support |
| --- | --- |
| FlashAttention v2 | `UNIFORM_BATCH` |
| Triton MLA | `UNIFORM_BATCH` |
| Mamba | `UNIFORM_BATCH` |
| Flex | `ALWAYS` |
| FlashInfer | `UNIFORM_BATCH` |

Unlisted backends are `NEVER`.
"""
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree(doc), "docs")
    rc, out = _run(["docs-drift", str(r.path), "--json"], capsys)
    data = json.loads(out)
    assert rc == 0, data
    assert data["stale"] == [] and data["missing"] == [] and data["orphans"] == []
    assert [d["class"] for d in data["dynamic"]] == ["FlashInferMetadataBuilder"]


def test_a_wrong_branch_of_a_conditional_is_stale(tmp_path, capsys):
    doc = TABLE.replace("| FlashAttention v3 | CUDA | `ALWAYS` |",
                        "| FlashAttention v3 | CUDA | `UNIFORM_SINGLE_TOKEN_DECODE` |")
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree(doc), "docs")
    rc, out = _run(["docs-drift", str(r.path), "--json"], capsys)
    stale = {s["row"]: s for s in json.loads(out)["stale"]}
    assert rc == 1
    assert "FlashAttention v3" in stale and "FlashAttention v2" not in stale
    assert "version() == 3" in stale["FlashAttention v3"]["code"]


def test_missing_table_or_file_exits_two(tmp_path, capsys):
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree("# no table here\n\n| a | b |\n| - | - |\n| 1 | 2 |\n"), "docs")
    assert main(["docs-drift", str(r.path)]) == 2
    assert "no Markdown table" in capsys.readouterr().err
    assert main(["docs-drift", str(r.path), "--doc", "nope.md"]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(TableError):
        parse_table("plain text", load_profile())


def test_without_the_unlisted_sentence_no_missing_builders(tmp_path, capsys):
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree(TABLE.replace("Unlisted backends are all declared as `NEVER`.", "")), "d")
    rc, out = _run(["docs-drift", str(r.path), "--json"], capsys)
    data = json.loads(out)
    assert data["missing"] == [] and data["unlisted_means_default"] is False
    assert rc == 1  # the stale and orphan rows remain


def test_the_level_column_is_the_profile_symbol_only() -> None:
    """The column is found by the profile's spellings, never by a domain word in the code: the
    CUDA-graph table has no column of the query-length profile (it took `cudagraph_support`)."""
    assert parse_table(TABLE, load_profile()).level_col == "cudagraph_support"
    with pytest.raises(TableError, match="query_len_support column"):
        parse_table(TABLE, load_profile("vllm-query-len"))
    own = TABLE.replace("| cudagraph_support |", "| query_len_support |")
    assert parse_table(own, load_profile("vllm-query-len")).level_col == "query_len_support"
