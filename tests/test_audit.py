"""The consistency audit on small real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from auditfixtures import base_tree, plain_builder, triton_mla
from gitrepo import GitRepoBuilder

from prkb.analyze.audit import AuditCache, audit_revision, builder_levels_rows, value_levels
from prkb.cli import main
from prkb.gitrepo import GitRepo
from prkb.profile import load_profile

RULE = "cg-uniform-without-spec-decode"
TRITON = "vllm/attn/backends/triton_mla.py"


@pytest.fixture()
def profile():
    return load_profile()


def _audit(path: Path, rev: str, profile, warns: list[str] | None = None, cache=None):
    with GitRepo(path) as repo:
        return audit_revision(
            repo, rev, profile, warn=(warns.append if warns is not None else None), cache=cache
        )


def _flagged(result) -> list[str]:
    return sorted(f.class_name for f in result.findings if f.rule == RULE)


@pytest.fixture()
def mla_repo(tmp_path: Path):
    """parent: MLA builder without a level; commit: UNIFORM_BATCH (the #42885 pattern); then
    two alternative fixes on top."""
    r = GitRepoBuilder.init(tmp_path / "src")
    parent = r.commit(base_tree(), "base (#1)")
    bad = r.commit({TRITON: triton_mla("UNIFORM_BATCH")}, "enable full graphs (#2)")
    lowered = r.commit({TRITON: triton_mla("UNIFORM_SINGLE_TOKEN_DECODE")}, "lower (#3)")
    uniform = r.commit({TRITON: triton_mla("UNIFORM_BATCH", "UNIFORM")}, "uniform (#4)")
    varlen = r.commit({TRITON: triton_mla("UNIFORM_BATCH", "VARLEN")}, "varlen (#5)")
    return r, {"parent": parent, "bad": bad, "lowered": lowered, "uniform": uniform,
               "varlen": varlen}


def test_mla_uniform_batch_without_query_len_is_flagged_only_at_the_commit(mla_repo, profile):
    r, shas = mla_repo
    before = _audit(r.path, shas["parent"], profile)
    after = _audit(r.path, shas["bad"], profile)
    assert _flagged(before) == []
    assert _flagged(after) == ["TritonMLAMetadataBuilder"]
    b = after.builder("TritonMLAMetadataBuilder")
    assert b is not None
    assert "mla" in b.groups and b.meets_rule is False
    assert b.effective == "UNIFORM_BATCH" and b.declared == "UNIFORM_BATCH"
    assert b.backend_name == "TRITON_MLA"
    assert "MLACommonMetadataBuilder" in b.rule_reason
    f = after.findings[0]
    assert f.file == TRITON and f.commit == shas["bad"]
    assert "UNIFORM_BATCH" in f.message_en and "UNIFORM_BATCH" in f.message_zh
    # at the parent the builder inherits the default level from the root, across two modules
    pb = before.builder("TritonMLAMetadataBuilder")
    assert pb is not None and pb.effective == "NEVER" and pb.declared is None
    assert pb.declared_in == "AttentionMetadataBuilder"


def test_both_fixes_clear_the_finding(mla_repo, profile):
    r, shas = mla_repo
    for key in ("lowered", "uniform", "varlen"):
        res = _audit(r.path, shas[key], profile)
        assert _flagged(res) == [], key
    uniform = _audit(r.path, shas["uniform"], profile).builder("TritonMLAMetadataBuilder")
    assert uniform is not None and uniform.meets_rule is True
    lowered = _audit(r.path, shas["lowered"], profile).builder("TritonMLAMetadataBuilder")
    assert lowered is not None and lowered.meets_rule is False  # not ready, but not claiming


@pytest.mark.parametrize(
    ("call", "ready", "flagged"),
    [
        ("_init_reorder_batch_threshold(1, supports_spec_as_decode=False)", False, True),
        ("_init_reorder_batch_threshold(1, False)", False, True),
        ("_init_reorder_batch_threshold(1)", False, True),
        ("_init_reorder_batch_threshold(1, supports_spec_as_decode=True)", True, False),
        ("_init_reorder_batch_threshold(1, self.use_spec)", True, False),
        ("_init_reorder_batch_threshold(1, supports_spec_as_decode=self.use_spec)", True, False),
        (None, None, False),
    ],
)
def test_non_mla_reorder_call_decides(tmp_path, profile, call, ready, flagged):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/quant.py"] = plain_builder("QuantMetadataBuilder", "UNIFORM_BATCH",
                                                        call)
    sha = r.commit(tree, "add")
    res = _audit(r.path, sha, profile)
    b = res.builder("QuantMetadataBuilder")
    assert b is not None and "mla" not in b.groups
    assert b.meets_rule is ready
    assert ("QuantMetadataBuilder" in _flagged(res)) is flagged
    if call is None:
        assert "does not apply" in b.rule_reason


def test_inherited_call_and_level_through_relative_and_aliased_imports(tmp_path, profile):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/mamba_base.py"] = plain_builder(
        "BaseMambaMetadataBuilder", "UNIFORM_BATCH",
        "_init_reorder_batch_threshold(1, supports_spec_as_decode=False)",
    )
    tree["vllm/attn/backends/mamba2.py"] = (
        "from .mamba_base import BaseMambaMetadataBuilder as Base\n\n\n"
        "class Mamba2MetadataBuilder(Base):\n    pass\n"
    )
    tree["vllm/models/short.py"] = (
        "import vllm.attn.backends.mamba_base\n\n\n"
        "class ShortMetadataBuilder(vllm.attn.backends.mamba_base.BaseMambaMetadataBuilder):\n"
        "    _cudagraph_support = 1\n"
    )
    sha = r.commit(tree, "mamba")
    res = _audit(r.path, sha, profile)
    m2 = res.builder("Mamba2MetadataBuilder")
    assert m2 is not None
    assert m2.declared is None and m2.effective == "UNIFORM_BATCH"
    assert m2.declared_in == "BaseMambaMetadataBuilder"
    assert m2.ancestors[0] == "BaseMambaMetadataBuilder"
    assert m2.meets_rule is False
    short = res.builder("ShortMetadataBuilder")
    assert short is not None and short.declared == "1" and short.levels == []
    assert _flagged(res) == ["BaseMambaMetadataBuilder", "Mamba2MetadataBuilder"]


def test_dynamic_and_conditional_builders(tmp_path, profile):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/fi.py"] = plain_builder(
        "FlashInferMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE", None,
        extra="@classmethod\ndef get_cudagraph_support(cls, config, spec):\n"
              "    return CGSupport.UNIFORM_BATCH if config.trt else cls._cudagraph_support",
    )
    tree["vllm/attn/backends/fa.py"] = (
        "from ..backend import AttentionMetadataBuilder, CGSupport\n"
        "from .version import fa_version\n\n\n"
        "class FlashAttentionMetadataBuilder(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = (\n"
        "        CGSupport.ALWAYS if fa_version() == 3 else CGSupport.UNIFORM_BATCH\n"
        "    )\n\n"
        "    def __init__(self, c):\n"
        "        self._init_reorder_batch_threshold(1, supports_spec_as_decode=False)\n\n\n"
        "class FlashAttentionSubMetadataBuilder(FlashAttentionMetadataBuilder):\n"
        "    pass\n"
    )
    sha = r.commit(tree, "dyn")
    res = _audit(r.path, sha, profile)
    fi = res.builder("FlashInferMetadataBuilder")
    assert fi is not None and fi.dynamic and "get_cudagraph_support" in (fi.dynamic_reason or "")
    assert fi.condition is None
    fa = res.builder("FlashAttentionMetadataBuilder")
    assert fa is not None and fa.dynamic
    assert fa.condition == "fa_version() == 3"
    assert fa.levels == ["ALWAYS", "UNIFORM_BATCH"]
    sub = res.builder("FlashAttentionSubMetadataBuilder")
    assert sub is not None and sub.dynamic and sub.condition == "fa_version() == 3"
    # a conditional claim of uniform batches with a pinned threshold is still flagged
    assert "FlashAttentionMetadataBuilder" in _flagged(res)
    msg = next(f for f in res.findings if f.class_name == "FlashAttentionMetadataBuilder")
    assert "fa_version() == 3" in msg.message_en


def test_value_levels(profile):
    assert value_levels("NEVER", profile) == (["NEVER"], None)
    assert value_levels("E.PURE_DECODE_ONLY if x else E.NEVER", profile) == (
        ["UNIFORM_SINGLE_TOKEN_DECODE", "NEVER"], "x")
    assert value_levels("<unset> if a else E.ALWAYS", profile) == (["ALWAYS"], "a")
    assert value_levels("some_call()", profile) == ([], None)


def test_missing_blob_is_warned_and_skipped(tmp_path, profile):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree[TRITON] = triton_mla("UNIFORM_BATCH")
    tree["vllm/attn/backends/quant.py"] = plain_builder("QuantMetadataBuilder", "ALWAYS",
                                                        "_init_reorder_batch_threshold(1)")
    sha = r.commit(tree, "add")
    r.delete_object(r.blob_sha(sha, TRITON))
    warns: list[str] = []
    res = _audit(r.path, sha, profile, warns)
    assert len(warns) == 1 and TRITON in warns[0] and "missing" in warns[0]
    assert res.builder("TritonMLAMetadataBuilder") is None
    assert _flagged(res) == ["QuantMetadataBuilder"]


def test_invalid_python_is_warned_and_skipped(tmp_path, profile):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    tree["vllm/attn/backends/broken.py"] = "class BrokenMetadataBuilder(:\n"
    sha = r.commit(tree, "broken")
    warns: list[str] = []
    res = _audit(r.path, sha, profile, warns)
    assert any("broken.py" in w for w in warns)
    assert res.builder("MLACommonMetadataBuilder") is not None


def test_bare_clone_gives_the_same_answer(mla_repo, profile, tmp_path):
    r, shas = mla_repo
    bare = r.bare_clone(tmp_path / "bare.git")
    a = _audit(r.path, shas["bad"], profile).to_json()
    b = _audit(bare, shas["bad"], profile).to_json()
    assert a == b and a["findings"]


def test_cache_parses_only_changed_blobs(mla_repo, profile):
    r, shas = mla_repo
    cache = AuditCache()
    _audit(r.path, shas["parent"], profile, cache=cache)
    first = cache.parsed
    assert first >= 3  # backend, mla_common, triton_mla (unrelated files are prefiltered)
    res = _audit(r.path, shas["bad"], profile, cache=cache)
    assert cache.parsed == first + 1
    assert _flagged(res) == ["TritonMLAMetadataBuilder"]
    again = _audit(r.path, shas["parent"], profile, cache=cache)
    assert cache.parsed == first + 1 and _flagged(again) == []


def test_builder_levels_rows_shape(mla_repo, profile):
    r, shas = mla_repo
    rows = builder_levels_rows(_audit(r.path, shas["bad"], profile))
    row = next(x for x in rows if x["class"] == "TritonMLAMetadataBuilder")
    assert row == {"class": "TritonMLAMetadataBuilder", "file": TRITON,
                   "declared": "UNIFORM_BATCH", "effective": "UNIFORM_BATCH",
                   "dynamic": False, "levels": ["UNIFORM_BATCH"], "level_text": None,
                   "meets_rule": False}


def test_cli_audit_exit_codes_and_json(mla_repo, capsys):
    r, shas = mla_repo
    assert main(["audit", str(r.path), "--rev", shas["parent"]]) == 0
    capsys.readouterr()
    assert main(["audit", str(r.path), "--rev", shas["bad"], "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["class"] for f in data["findings"]] == ["TritonMLAMetadataBuilder"]
    assert main(["audit", str(r.path), "--rev", "no-such-rev"]) == 2


def test_a_rule_reads_the_value_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule module gets the state model's values in force with each class's chain: a rule
    about the decode threshold (an int set in ``__init__``, the value a class attribute
    leaves or the base's) reads the value the instance holds, without working it out again
    from the classes' facts, and the audit keeps its reading."""
    import ast
    import dataclasses
    import types

    from prkb.analyze import audit as audit_mod
    from prkb.analyze.audit import compute_builders, module_facts

    seen: dict[str, object] = {}

    def rule_reading(chain, profile, values):  # type: ignore[no-untyped-def]
        got = values[profile.display]
        seen[chain[0].name] = got.get("value")
        value = str(got.get("value") or "")
        return (int(value) > 1 if value.isdigit() else None, f"threshold {value or 'unknown'}")

    from prkb.analyze import rules as rules_mod

    fake = types.SimpleNamespace(rule_reading=rule_reading)  # a rule without inputs
    for mod in (audit_mod, rules_mod):
        monkeypatch.setattr(mod, "load_rule", lambda name: fake if name == "fake" else None)
    profile = dataclasses.replace(load_profile("vllm-decode-threshold"), rules="fake")
    text = (
        "class AttentionMetadataBuilder:\n"
        "    reorder_batch_threshold: int = 1\n"
        "class Pinned(AttentionMetadataBuilder):\n"
        "    pass\n"
        "class Grows(AttentionMetadataBuilder):\n"
        "    reorder_batch_threshold: int = 1\n"
        "    def __init__(self, spec):\n"
        "        self.reorder_batch_threshold = 4\n"
    )
    path = "vllm/v1/attention/backends/utils.py"
    facts = module_facts(text, path, profile, ast.parse(text))
    got = {b.class_name: b for b in compute_builders({path: facts}, profile)}
    assert seen == {"Pinned": "1", "Grows": "4"}
    assert (got["Grows"].meets_rule, got["Grows"].rule_reason) == (True, "threshold 4")
    assert (got["Pinned"].meets_rule, got["Pinned"].rule_reason_zh) == (False, "threshold 1")


def test_the_rule_inputs_the_audit_tracks_are_the_rule_modules() -> None:
    """The threshold, its split and the query length are tracked because the CUDA-graph rule
    module says so (its ``INPUTS``): the same profile without a rule module tracks only its
    own value, and the git collector watches no rule input."""
    import ast
    import dataclasses

    from prkb.analyze.audit import compute_builders, module_facts
    from prkb.collect.git import rule_input_names, rule_input_regex

    text = (
        "class AttentionMetadataBuilder:\n"
        "    _cudagraph_support = AttentionCGSupport.NEVER\n"
        "    reorder_batch_threshold: int = 1\n"
        "class Pinned(AttentionMetadataBuilder):\n"
        "    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n"
        "    def __init__(self, spec):\n"
        "        self._init_reorder_batch_threshold(1, spec)\n"
    )
    path = "vllm/v1/attention/backends/utils.py"
    cg = load_profile()
    bare = dataclasses.replace(cg, rules="")
    for profile, values in ((cg, {"_cudagraph_support", "reorder_batch_threshold"}),
                            (bare, {"_cudagraph_support"})):
        facts = module_facts(text, path, profile, ast.parse(text))
        (b,) = compute_builders({path: facts}, profile)
        assert set(b.values) == values
    assert rule_input_names(cg)[:3] == ["reorder_batch_threshold",
                                        "_init_reorder_batch_threshold", "query_len_support"]
    assert rule_input_names(bare) == [] and rule_input_regex(bare) is None
