"""Where a value is set is the profile's to say (#33): ``symbol.set_in = ["class", "init"]``
and ``symbol.setters``. A history built in ``tmp_path`` sets the bundled int profile's value in
a class body, in ``__init__`` (``=``, ``+=``) and by the helper call, and every commit's change
of the value in force is read: collected (a commit that only changes the helper's argument
too), stored as a state change, said in the report, and shown by ``prkb matrix``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepoBuilder

from prkb.cli import main
from prkb.collect.git import collect_git
from prkb.gitrepo import GitRepo
from prkb.profile import load_profile
from prkb.publish.matrix import matrix_at
from prkb.render.report import render_report
from prkb.store import Store

BASE = "vllm/v1/attention/backend.py"
A = "vllm/v1/attention/backends/a_attn.py"
B = "vllm/v1/attention/backends/b_attn.py"

BASE_SRC = """\
class AttentionMetadataBuilder:
    reorder_batch_threshold: int | None = None

    def _init_reorder_batch_threshold(self, threshold=1, spec=False):
        self.reorder_batch_threshold = threshold
"""


def _a(step: str) -> str:
    return f"""\
from vllm.v1.attention.backend import AttentionMetadataBuilder


class AMetadataBuilder(AttentionMetadataBuilder):
    def __init__(self, k):
        self.reorder_batch_threshold = 1
        self.reorder_batch_threshold += {step}
"""


def _b(body: str) -> str:
    return f"""\
from vllm.v1.attention.backend import AttentionMetadataBuilder


class BMetadataBuilder(AttentionMetadataBuilder):
{body}


class CMetadataBuilder(BMetadataBuilder):
    pass
"""


B_CONST = "    reorder_batch_threshold: int = 4"
B_CALL = ("    def __init__(self, spec):\n"
          "        super().__init__()\n"
          "        self._init_reorder_batch_threshold({n}, spec)")


def _history(root: Path) -> GitRepoBuilder:
    r = GitRepoBuilder.init(root)
    r.commit({BASE: BASE_SRC, A: _a("min(k, 1)"), B: _b(B_CONST)}, "Builders (#1)",
             date="2026-03-02T09:00:00+00:00")
    r.commit({A: _a("k")}, "A: add every speculative token (#2)",
             date="2026-03-03T09:00:00+00:00")
    r.commit({B: _b(B_CALL.format(n=2))}, "B: set the threshold with the helper (#3)",
             date="2026-03-04T09:00:00+00:00")
    r.commit({B: _b(B_CALL.format(n=8))}, "B: a larger threshold (#4)",
             date="2026-03-05T09:00:00+00:00")
    return r


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, GitRepoBuilder]:
    tmp = tmp_path_factory.mktemp("setters")
    repo = _history(tmp / "src")
    store = Store(tmp / "kb.sqlite")
    collect_git(store, str(repo.path), load_profile("vllm-decode-threshold"), quiet=True,
                warn=lambda m: None)
    return store, repo


def _state(store: Store, n: int) -> dict[tuple[str, str], dict[str, Any]]:
    facts = store.pr_facts(str(n))
    assert facts is not None, n
    return {(c["class"], c["value"]): c for c in facts["state_changes"] or []}


def test_an_augmented_assignment_in_init_is_a_change_of_the_value(kb: tuple[Store, Any]) -> None:
    """``+= min(k, 1)`` to ``+= k``: no class-body declaration changed, the value did."""
    store, _ = kb
    got = _state(store, 2)[("AMetadataBuilder", "reorder_batch_threshold")]
    assert (got["before"], got["after"]) == ("1 + min(k, 1)", "1 + k")
    assert got["before_source"] == got["after_source"] == "init"
    md = render_report(store, "2", lang="en", fmt="md",
                       profile=load_profile("vllm-decode-threshold"))
    assert ("`AMetadataBuilder` in `vllm/v1/attention/backends/a_attn.py`, "
            "`reorder_batch_threshold`: `1 + min(k, 1)` (set in its `__init__`) → `1 + k` "
            "(set in its `__init__`)") in md


def test_a_class_constant_replaced_by_the_helper_call(kb: tuple[Store, Any]) -> None:
    """The helper's first argument is the value, the call is named beside it; a subclass
    that only inherits gets it from its base's ``__init__``."""
    store, _ = kb
    got = _state(store, 3)
    b = got[("BMetadataBuilder", "reorder_batch_threshold")]
    assert (b["before"], b["before_source"]) == ("4", "declared")
    assert (b["after"], b["after_source"]) == ("2", "init")
    assert b["after_via"] == "_init_reorder_batch_threshold(2, spec)"
    c = got[("CMetadataBuilder", "reorder_batch_threshold")]
    assert (c["before"], c["before_source"]) == ("4", "inherited:BMetadataBuilder")
    assert (c["after"], c["after_source"]) == ("2", "inherited:BMetadataBuilder")
    assert c["after_via"] == "_init_reorder_batch_threshold(2, spec)"
    for lang, said in (("en", "set by the `__init__` of `BMetadataBuilder` in "
                               "`vllm/v1/attention/backends/b_attn.py`, with "
                               "`_init_reorder_batch_threshold(2, spec)`"),
                       ("zh", "由 `vllm/v1/attention/backends/b_attn.py` 中 `BMetadataBuilder` "
                              "的 `__init__` 设置，通过 `_init_reorder_batch_threshold(2, spec)`")):
        text = render_report(store, "3", lang=lang, fmt="md",
                             profile=load_profile("vllm-decode-threshold"))
        assert said in text, lang


def test_a_commit_that_only_changes_the_helper_argument_is_collected(
        kb: tuple[Store, Any]) -> None:
    store, _ = kb
    got = _state(store, 4)[("BMetadataBuilder", "reorder_batch_threshold")]
    assert (got["before"], got["after"]) == ("2", "8")


def test_the_matrix_of_a_profile_without_a_rule_module(kb: tuple[Store, Any],
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """Each builder's value in force and where it comes from; no column the profile has no
    use for (no dynamic-support method, no spec-decode rule)."""
    _, repo = kb
    profile = load_profile("vllm-decode-threshold")
    with GitRepo(repo.path) as g:
        head = g.resolve("HEAD")
    rev, rows = matrix_at(repo.path, "HEAD", profile)
    assert rev == head
    got = {r["class"]: (r["values"]["reorder_batch_threshold"]["value"], r["comments"])
           for r in rows}
    assert got == {
        "AMetadataBuilder": ("1 + k", "set in its __init__"),
        "BMetadataBuilder": ("8", "set in its __init__, with "
                                  "_init_reorder_batch_threshold(8, spec)"),
        "CMetadataBuilder": ("8", "set by the __init__ of BMetadataBuilder, with "
                                  "_init_reorder_batch_threshold(8, spec)"),
    }
    assert main(["--profile", "vllm-decode-threshold", "matrix", str(repo.path)]) == 0
    table = capsys.readouterr().out
    head_row = table.splitlines()[1]
    assert "Spec decode" not in head_row and "Dynamic" not in head_row
    assert "| `8` |" in table
    assert main(["--profile", "vllm-decode-threshold", "matrix", str(repo.path),
                 "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 3


def test_a_local_set_in_a_branch_before_the_helper_call(tmp_path: Path) -> None:
    """``t = None; if c: t = 1; self._init_reorder_batch_threshold(t)``: both values said."""
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({BASE: BASE_SRC, A: (
        "from vllm.v1.attention.backend import AttentionMetadataBuilder\n\n\n"
        "class AMetadataBuilder(AttentionMetadataBuilder):\n"
        "    def __init__(self, c):\n"
        "        t = None\n"
        "        if c:\n"
        "            t = 1\n"
        "        self._init_reorder_batch_threshold(t, False)\n")}, "A (#1)")
    _, rows = matrix_at(r.path, "HEAD", load_profile("vllm-decode-threshold"))
    (row,) = rows
    assert row["values"]["reorder_batch_threshold"]["value"] == (
        "1 (when its condition holds; else None)")
