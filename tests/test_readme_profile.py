"""README's "Write a profile, step by step" (#33): the profile it shows, taken from README
itself, is valid, and collects and reads a generated history as the walkthrough says: a flag
set in a class body and in ``__init__``, the classes below ``builder_bases`` as rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder

from prkb.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"
BASE = "vllm/v1/attention/backend.py"
FLASH = "vllm/v1/attention/backends/flash_attn.py"
MLA = "vllm/model_executor/layers/attention/mla_attention.py"
FLASHMLA = "vllm/v1/attention/backends/mla/flashmla.py"


def readme_profile() -> str:
    """The TOML block after README's ``<!-- walkthrough-profile -->`` marker, unindented."""
    text = README.read_text("utf-8")
    m = re.search(r"<!-- walkthrough-profile -->\s*```toml\n(.*?)```", text, re.S)
    assert m, "README lost its walkthrough profile"
    return "\n".join(line[3:] if line.startswith("   ") else line
                     for line in m.group(1).splitlines()) + "\n"


def _history(root: Path) -> GitRepoBuilder:
    r = GitRepoBuilder.init(root)
    r.commit({BASE: "class AttentionImplBase:\n    supports_quant_query_input: bool = False\n",
              FLASH: ("from vllm.v1.attention.backend import AttentionImplBase\n\n\n"
                      "class FlashAttentionImpl(AttentionImplBase):\n"
                      "    def __init__(self):\n"
                      "        self.supports_quant_query_input = True\n"),
              MLA: ("from vllm.v1.attention.backend import AttentionImplBase\n\n\n"
                    "class MLACommonImpl(AttentionImplBase):\n    pass\n"),
              FLASHMLA: ("from vllm.model_executor.layers.attention.mla_attention import "
                         "MLACommonImpl\n\n\nclass FlashMLAImpl(MLACommonImpl):\n    pass\n")},
             "[Attention] quantized queries for FlashAttention (#1)")
    r.commit({MLA: ("from vllm.v1.attention.backend import AttentionImplBase\n\n\n"
                    "class MLACommonImpl(AttentionImplBase):\n"
                    "    def __init__(self, fp8):\n"
                    "        self.supports_quant_query_input = fp8\n")},
             "[MLA] quantized queries when the KV cache is fp8 (#2)")
    return r


def test_the_walkthrough_profile_works_as_readme_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = tmp_path / "quant-query.toml"
    prof.write_text(readme_profile(), encoding="utf-8")
    repo = _history(tmp_path / "src")
    assert main(["profile", "check", str(prof), "--clone", str(repo.path)]) == 0
    out = capsys.readouterr().out
    assert "valid profile 'vllm-quant-query'" in out and "set in: class body, __init__" in out
    assert "2 commits found by the pickaxe" in out
    db = str(tmp_path / "qq.sqlite")
    assert main(["--db", db, "--profile", str(prof), "collect", "git", str(repo.path),
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "show", "2", "--json"]) == 0  # the profile is remembered
    facts = json.loads(capsys.readouterr().out)
    got = {(c["class"], c["before"], c["after"], c["after_source"])
           for c in facts["state_changes"]}
    # the subclass that inherits is read through its base's __init__ too
    assert got == {("MLACommonImpl", "False", "fp8", "init"),
                   ("FlashMLAImpl", "False", "fp8", "inherited:MLACommonImpl")}
    assert main(["--profile", str(prof), "matrix", str(repo.path), "--format", "json"]) == 0
    rows = {r["class"]: (r["values"]["supports_quant_query_input"]["value"], r["comments"])
            for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows == {"FlashAttentionImpl": ("True", "set in its __init__"),
                    "MLACommonImpl": ("fp8", "set in its __init__"),
                    "FlashMLAImpl": ("fp8", "set by the __init__ of MLACommonImpl")}
