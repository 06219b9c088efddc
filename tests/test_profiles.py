"""A second profile tracks another symbol with no code change."""

from __future__ import annotations

from gitrepo import GitRepoBuilder

from prkb.collect.git import collect_git
from prkb.kb import pr_facts
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = """
[profile]
name = "toy-fp8"
repo = "example/toy"
rules = ""
branch = "main"

[symbol]
family = ["fp8_supported", "quant_support"]
methods = ["get_quant_support"]
bool_spellings = ["fp8_supported"]
enum = "QuantSupport"

[levels]
order = ["NONE", "WEIGHTS", "FULL"]
default = "NONE"
[levels.aliases]
PARTIAL = "WEIGHTS"

[paths]
tests = ["tests/"]
core = ["toy/core.py"]

[[platforms]]
code = "tpu"
en = "TPU"
zh = "TPU"
path_patterns = ["tpu_"]
title_tags = ["TPU"]
"""


def test_second_profile_collects_per_class_facts(tmp_path):
    prof_path = tmp_path / "toy-fp8.toml"
    prof_path.write_text(PROFILE, encoding="utf-8")
    profile = load_profile(str(prof_path))
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(
        {"toy/tpu_kernels.py": "class TpuKernel:\n    fp8_supported = False\n"}, "[TPU] k (#1)"
    )
    r.commit(
        {"toy/tpu_kernels.py": "class TpuKernel:\n    quant_support = QuantSupport.PARTIAL\n"},
        "[TPU] switch to levels (#2)",
    )
    r.commit(
        {
            "toy/tpu_kernels.py": "class TpuKernel:\n    quant_support = QuantSupport.FULL\n",
            "tests/test_tpu.py": "def test_x():\n    pass\n",
        },
        "[TPU] full quantisation (#3)",
    )
    r.commit({"toy/other.py": "class Other:\n    _cudagraph_support = 3\n"}, "not ours (#4)")
    store = Store(tmp_path / "kb.sqlite")
    stats = collect_git(store, str(r.path), profile, quiet=True, warn=print)
    assert stats.hits == 3
    assert {x[0] for x in store.conn.execute("SELECT repo FROM prs")} == {"example/toy"}
    two = pr_facts(store, 2)["symbol_changes"]
    assert [
        (c["attr"], c["before_attr"], c["before"], c["after"], c["direction"]) for c in two
    ] == [("quant_support", "fp8_supported", "False", "WEIGHTS", "changed")]
    three = pr_facts(store, 3)
    assert [(c["before"], c["after"], c["direction"]) for c in three["symbol_changes"]] == [
        ("WEIGHTS", "FULL", "raised")
    ]
    assert three["tests_touched"] == ["tests/test_tpu.py"]
    assert three["platforms"] == ["tpu"]
    codes = [t["code"] for t in three["risk_tags"]]
    assert "level-raised" in codes and "missing-tests" not in codes
