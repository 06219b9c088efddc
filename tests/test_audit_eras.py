"""The audit reads the decode threshold with the mechanism of the audited revision, and the
levels an overriding support method can return (our own small sources in real git repos)."""

from __future__ import annotations

import ast
import keyword
import re
from pathlib import Path

import pytest
from auditfixtures import BACKEND
from gitrepo import GitRepoBuilder

from prkb.analyze.audit import AuditResult, audit_revision, builder_levels_rows
from prkb.gitrepo import GitRepo
from prkb.profile import load_profile

P = load_profile()
RULE = "cg-uniform-without-spec-decode"
HEAD = "from vllm.attn.backend import AttentionMetadataBuilder, CGSupport\n"


def _tree(files: dict[str, str]) -> dict[str, str | None]:
    return {
        "vllm/__init__.py": "",
        "vllm/attn/__init__.py": "",
        "vllm/attn/backend.py": BACKEND,
        "vllm/attn/backends/__init__.py": "",
        **files,
    }


def _audit(tmp_path: Path, files: dict[str, str]) -> AuditResult:
    r = GitRepoBuilder.init(tmp_path / "src")
    sha = r.commit(_tree(files), "tree")
    with GitRepo(r.path) as repo:
        res = audit_revision(repo, sha, P)
    _zh_reasons_say_no_english(res, files)
    return res


_WORD = re.compile(r"(?<![A-Za-z0-9_])_*[A-Za-z][A-Za-z0-9_]*")
# Chinese characters and full-width punctuation: what separates the code a zh reason quotes
_CJK_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")
# the terms the zh texts keep in Latin letters (as the finding's message does), and literals
_ZH_TERMS = {"decode", "None", "True", "False", "MTP", "EAGLE", "CUDA", "Graph", "query", "token"}


def _is_code(run: str) -> bool:
    try:
        ast.parse(run.strip(" ,:"))
    except SyntaxError:
        return False
    return True


def _stray_english(zh: str, code: set[str]) -> list[str]:
    """The runs of a zh text (between Chinese characters) that hold a Latin word that is
    neither a name of the audited code nor a term; a Python keyword counts as code only in a
    run that parses as Python (``1 if cfg.dcp > 1 else 2``), not in a phrase (``from X``)."""
    stray = []
    for run in _CJK_RUN.split(zh):
        words = set(_WORD.findall(run)) - _ZH_TERMS
        if words - code - set(keyword.kwlist) or (words & set(keyword.kwlist)
                                                    and not _is_code(run)):
            stray.append(run)
    return stray


def _zh_reasons_say_no_english(res: AuditResult, files: dict[str, str]) -> None:
    """Every builder's reason in Chinese, and every finding's message, has no Latin word but
    the names of the audited code, the code it quotes and a few terms: the words around what
    it quotes are Chinese. Checked on every audit of this module."""
    code = set(_WORD.findall(BACKEND + "".join(files.values())))
    for b in res.builders:
        assert b.rule_reason_zh, b.class_name
        assert not _stray_english(b.rule_reason_zh, code), (b.class_name, b.rule_reason_zh)
    for f in res.findings:
        if f.rule == RULE:
            assert not _stray_english(f.message_zh, code), (f.class_name, f.message_zh)


def test_the_zh_check_sees_english() -> None:
    """The check of every audit here is not blind: the English reasons it replaced are seen."""
    code = {"MLACommonMetadataBuilder", "reorder_batch_threshold", "OneMetadataBuilder",
            "_init_reorder_batch_threshold", "supports_spec_as_decode"}
    for old in ("MLACommonMetadataBuilder sets reorder_batch_threshold = 1 (class attribute): "
                "the decode threshold stays 1",
                "OneMetadataBuilder calls _init_reorder_batch_threshold(supports_spec_as_decode "
                "not passed (default False))",
                "reorder_batch_threshold = 1（from MLACommonMetadataBuilder）"):
        assert _stray_english(f"其阈值无法增大（{old}）", code)
    assert not _stray_english("OneMetadataBuilder 在 __init__ 中执行 self.reorder_batch_threshold"
                              " = 1 if cfg.dcp > 1 else 2", code | {"__init__", "self", "cfg",
                                                                     "dcp"})


def _flagged(res: AuditResult) -> list[str]:
    return sorted(f.class_name for f in res.findings if f.rule == RULE)


def _builder(name: str, level: str = "UNIFORM_BATCH", body: str = "", base: str = "") -> str:
    """A builder module: ``body`` is indented into the class (class attributes, methods)."""
    parent = base or "AttentionMetadataBuilder"
    lines = [HEAD, "", f"class {name}({parent}):"]
    if level:
        lines.append(f"    _cudagraph_support = CGSupport.{level}")
    lines += ["    " + ln if ln else "" for ln in body.splitlines()]
    if not level and not body:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


def _one(tmp_path: Path, body: str, level: str = "UNIFORM_BATCH"):
    res = _audit(tmp_path, {"vllm/attn/backends/b.py": _builder("OneMetadataBuilder", level, body)})
    b = res.builder("OneMetadataBuilder")
    assert b is not None
    return res, b


# --- era 1: a class attribute holds the threshold ------------------------------------------


def test_class_attribute_one_pins_the_threshold(tmp_path):
    res, b = _one(tmp_path, "reorder_batch_threshold: ClassVar[int] = 1")
    assert b.meets_rule is False
    assert "reorder_batch_threshold = 1 (class attribute)" in b.rule_reason
    assert _flagged(res) == ["OneMetadataBuilder"]


def test_class_attribute_above_one_lets_it_grow(tmp_path):
    res, b = _one(tmp_path, "reorder_batch_threshold: ClassVar[int] = 512")
    assert b.meets_rule is True and "512" in b.rule_reason
    assert _flagged(res) == []


def test_a_spelling_the_base_no_longer_declares_is_not_read(tmp_path):
    """After a rename, a builder still on the old spelling declares a value nothing reads: the
    base (which declares the new spelling) decides, and the old declaration is listed as
    unread (the Cutlass MLA builder between vLLM #20059 and #23200)."""
    body = "cudagraph_support = CGSupport.UNIFORM_BATCH\nreorder_batch_threshold: ClassVar[int] = 1"
    res, b = _one(tmp_path, body, level="")
    assert b.effective == "NEVER" and b.declared_in == "AttentionMetadataBuilder"
    assert b.unread == ["OneMetadataBuilder.cudagraph_support"]
    assert _flagged(res) == []  # NEVER is in force: nothing to flag
    # on the spelling the base declares, the same value is read and flagged
    res, b = _one(tmp_path / "live", body.replace("cudagraph_support =", "_cudagraph_support ="),
                  level="")
    assert b.effective == "UNIFORM_BATCH" and b.unread == []
    assert _flagged(res) == ["OneMetadataBuilder"]


def test_own_decode_split_that_grows_is_ready(tmp_path):
    """A builder that pins the reorder threshold at 1 but splits decodes from prefills by a
    threshold of its own that adds the speculative tokens (the DeepSeek V4 sliding-window
    builder's shape) takes uniform speculative batches as decodes: not flagged."""
    own = (
        "reorder_batch_threshold: ClassVar[int] = 1\n\n"
        "def __init__(self, config):\n"
        "    self.num_speculative_tokens = config.num_speculative_tokens\n"
        "    self.decode_threshold = self.reorder_batch_threshold + self.num_speculative_tokens\n"
    )
    res, b = _one(tmp_path, own)
    assert b.meets_rule is True
    assert "splits decodes by its own decode_threshold" in b.rule_reason
    assert _flagged(res) == []
    # the same split pinned at the reorder threshold grows nothing: flagged
    pinned = own.replace(" + self.num_speculative_tokens", "")
    res, b = _one(tmp_path / "pinned", pinned)
    assert b.meets_rule is False
    assert _flagged(res) == ["OneMetadataBuilder"]


def test_class_attribute_none_means_no_reordering(tmp_path):
    res, b = _one(tmp_path, "reorder_batch_threshold = None")
    assert b.meets_rule is None and "does not apply" in b.rule_reason
    assert _flagged(res) == []


def test_no_threshold_anywhere_is_not_applicable(tmp_path):
    res, b = _one(tmp_path, "other = 3")
    assert b.meets_rule is None and "does not apply" in b.rule_reason
    assert _flagged(res) == []


def test_single_token_level_with_a_pinned_threshold_is_not_flagged(tmp_path):
    res, b = _one(tmp_path, "reorder_batch_threshold = 1", level="UNIFORM_SINGLE_TOKEN_DECODE")
    assert b.meets_rule is False and _flagged(res) == []


# --- era 2: __init__ assigns the threshold --------------------------------------------------


@pytest.mark.parametrize(
    ("body", "ready"),
    [
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    self.num_spec_tokens = cfg.n\n"
         "    self.reorder_batch_threshold = 1 + self.num_spec_tokens", True),
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold += self.num_speculative_tokens", True),
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold = cfg.speculative_config.k + 1", True),
        # __init__ runs after the class attribute is read: its assignment wins
        ("reorder_batch_threshold = 512\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold = 1", False),
        # arithmetic on the value before it is computed
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold += 1", True),
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold *= 1", False),
        # a setting that may not run leaves the value before it possible
        ("reorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
         "    if cfg.spec:\n        self.reorder_batch_threshold = 1 + cfg.num_spec", True),
        ("reorder_batch_threshold = 512\n\ndef __init__(self, cfg):\n"
         "    self.reorder_batch_threshold = 1 if cfg.dcp > 1 else self.reorder_batch_threshold",
         True),
        ("def __init__(self, cfg):\n    self.__class__.reorder_batch_threshold = 1", False),
    ],
)
def test_init_assignment_decides(tmp_path, body, ready):
    res, b = _one(tmp_path, body)
    assert b.meets_rule is ready, b.rule_reason
    assert "__init__" in b.rule_reason
    assert _flagged(res) == ([] if ready else ["OneMetadataBuilder"])


def test_unknown_expression_counts_as_ready_and_says_so(tmp_path):
    res, b = _one(tmp_path, "def __init__(self, cfg):\n"
                            "    self.reorder_batch_threshold = cfg.tree.shape[0]")
    assert b.meets_rule is True
    assert "unknown expression" in b.rule_reason and "cfg.tree.shape[0]" in b.rule_reason
    assert _flagged(res) == []


def test_parent_init_assignment_beats_a_subclass_class_attribute(tmp_path):
    base = _builder("BaseXMetadataBuilder", "", "def __init__(self, cfg):\n"
                                                "    self.reorder_batch_threshold = 1")
    sub = (
        "from .base_x import BaseXMetadataBuilder\n\n\n"
        "class SubXMetadataBuilder(BaseXMetadataBuilder):\n"
        "    _cudagraph_support = 2\n"
        "    reorder_batch_threshold = 64\n"
    )
    own = (
        "from .base_x import BaseXMetadataBuilder\n\n\n"
        "class OwnInitMetadataBuilder(BaseXMetadataBuilder):\n"
        "    reorder_batch_threshold = 64\n\n"
        "    def __init__(self, cfg):\n"
        "        self.cfg = cfg  # the parent's __init__ does not run\n"
    )
    res = _audit(tmp_path, {"vllm/attn/backends/base_x.py": base,
                            "vllm/attn/backends/sub_x.py": sub,
                            "vllm/attn/backends/own.py": own})
    sub_b, own_b = res.builder("SubXMetadataBuilder"), res.builder("OwnInitMetadataBuilder")
    assert sub_b is not None and own_b is not None
    assert sub_b.meets_rule is False and "BaseXMetadataBuilder" in sub_b.rule_reason
    assert own_b.meets_rule is True and "64" in own_b.rule_reason


# --- era 3: the reorder call -------------------------------------------------------------


@pytest.mark.parametrize(
    ("init", "ready"),
    [
        ("self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)", True),
        ("self._init_reorder_batch_threshold(1, supports_spec_as_decode=False)", False),
        ("self._init_reorder_batch_threshold(1, cfg.use_spec)", True),
        # the first argument is the starting value: above 1 it is ready whatever the flag
        ("self._init_reorder_batch_threshold(128, False)", True),
        ("self._init_reorder_batch_threshold(None, True)", None),
        # a flag read through a local name bound to a class-body literal
        ("flag = self.uses_spec\n    self._init_reorder_batch_threshold(1, flag)", False),
        # a local starting value that is 1 or None
        ("start = None\n    if cfg.cpu:\n        start = 1\n"
         "    self._init_reorder_batch_threshold(start, False)", False),
    ],
)
def test_reorder_call_decides(tmp_path, init, ready):
    body = f"uses_spec = False\n\ndef __init__(self, cfg):\n    {init}"
    res, b = _one(tmp_path, body)
    assert b.meets_rule is ready, b.rule_reason
    assert ("OneMetadataBuilder" in _flagged(res)) is (ready is False)


def test_flag_from_a_class_literal_follows_the_subclass(tmp_path):
    base = _builder(
        "FlagBaseMetadataBuilder", "NEVER",
        "uses_spec = False\nreorder_batch_threshold = 1\n\ndef __init__(self, cfg):\n"
        "    flag = self.uses_spec\n"
        "    self._init_reorder_batch_threshold(self.reorder_batch_threshold, flag)",
    )
    subs = (
        "from .flag_base import FlagBaseMetadataBuilder\n\n\n"
        "class OnMetadataBuilder(FlagBaseMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n    uses_spec = True\n\n\n"
        "class OffMetadataBuilder(FlagBaseMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n\n\n"
        "class WideMetadataBuilder(FlagBaseMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n    reorder_batch_threshold = 512\n"
    )
    res = _audit(tmp_path, {"vllm/attn/backends/flag_base.py": base,
                            "vllm/attn/backends/subs.py": subs})
    ready = {n: res.builder(n).meets_rule for n in
             ("OnMetadataBuilder", "OffMetadataBuilder", "WideMetadataBuilder")}
    assert ready == {"OnMetadataBuilder": True, "OffMetadataBuilder": False,
                     "WideMetadataBuilder": True}
    assert _flagged(res) == ["OffMetadataBuilder"]


# --- MLA builders: query_len_support only where the code of the revision has it ------------

MLA_OLD = (  # an MLA base with a threshold class attribute and no query-length attribute
    HEAD + "\n\nclass MLACommonMetadataBuilder(AttentionMetadataBuilder):\n"
    "    reorder_batch_threshold: ClassVar[int] = 1\n"
)
MLA_OLDEST = (  # an MLA base from before any threshold
    HEAD + "\n\nclass MLACommonMetadataBuilder(AttentionMetadataBuilder):\n    pass\n"
)
MLA_NEW = (  # an MLA base with the query-length attribute, setting the threshold from it
    HEAD + "import enum\n\n\nclass QueryLenSupport(enum.Enum):\n"
    "    SINGLE_ONLY = 1\n    UNIFORM = 2\n\n\n"
    "class MLACommonMetadataBuilder(AttentionMetadataBuilder):\n"
    "    query_len_support = QueryLenSupport.SINGLE_ONLY\n"
    "    reorder_batch_threshold: int = 1\n\n"
    "    def __init__(self, cfg):\n"
    "        grows = self.query_len_support != QueryLenSupport.SINGLE_ONLY\n"
    "        self._init_reorder_batch_threshold(self.reorder_batch_threshold, grows)\n"
)
MLA_SUBS = (
    "from ..mla_common import MLACommonMetadataBuilder, CGSupport\n\n\n"
    "class PlainMLAMetadataBuilder(MLACommonMetadataBuilder):\n"
    "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n\n\n"
    "class WideMLAMetadataBuilder(MLACommonMetadataBuilder):\n"
    "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n"
    "    reorder_batch_threshold = 512\n"
)


def _mla(tmp_path: Path, base: str, subs: str = MLA_SUBS) -> AuditResult:
    return _audit(tmp_path, {"vllm/attn/mla_common.py": base,
                             "vllm/attn/backends/mla_subs.py": subs})


def test_mla_base_without_query_len_uses_the_threshold_attribute(tmp_path):
    res = _mla(tmp_path, MLA_OLD)
    plain, wide = res.builder("PlainMLAMetadataBuilder"), res.builder("WideMLAMetadataBuilder")
    assert plain is not None and wide is not None and "mla" in plain.groups
    assert plain.meets_rule is False
    assert "reorder_batch_threshold = 1" in plain.rule_reason
    assert "MLACommonMetadataBuilder" in plain.rule_reason
    assert "query_len_support" not in plain.rule_reason  # no such attribute in this era
    assert wide.meets_rule is True and "512" in wide.rule_reason
    assert _flagged(res) == ["PlainMLAMetadataBuilder"]


def test_mla_base_without_any_mechanism_is_not_applicable(tmp_path):
    res = _mla(tmp_path, MLA_OLDEST, MLA_SUBS.split("\n\n\nclass Wide")[0] + "\n")
    plain = res.builder("PlainMLAMetadataBuilder")
    assert plain is not None and plain.meets_rule is None and _flagged(res) == []


def test_mla_base_with_query_len_keeps_the_query_len_rule(tmp_path):
    subs = MLA_SUBS + (
        "\n\nclass UniformMLAMetadataBuilder(MLACommonMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n"
        "    query_len_support = 2\n\n\n"
        "class OwnCallMLAMetadataBuilder(MLACommonMetadataBuilder):\n"
        "    _cudagraph_support = CGSupport.UNIFORM_BATCH\n\n"
        "    def __init__(self, cfg):\n"
        "        super().__init__(cfg)\n"
        "        self.reorder_batch_threshold = 1 + self.num_spec_tokens\n"
    )
    res = _mla(tmp_path, MLA_NEW, subs)
    plain = res.builder("PlainMLAMetadataBuilder")
    assert plain is not None and plain.meets_rule is False
    assert "query_len_support = SINGLE_ONLY" in plain.rule_reason
    assert res.builder("UniformMLAMetadataBuilder").meets_rule is True
    assert res.builder("OwnCallMLAMetadataBuilder").meets_rule is True
    # SINGLE_ONLY makes the base assert a threshold of 1: a wider class attribute does not help
    assert _flagged(res) == ["PlainMLAMetadataBuilder", "WideMLAMetadataBuilder"]


def test_one_builder_through_the_eras(tmp_path):
    """The same MLA builder claims UNIFORM_BATCH in every era; whether it is flagged follows
    the mechanism the code has at each revision."""
    r = GitRepoBuilder.init(tmp_path / "src")
    sub = MLA_SUBS.split("\n\n\nclass Wide")[0] + "\n"
    eras = {
        "oldest": r.commit(_tree({"vllm/attn/mla_common.py": MLA_OLDEST,
                                  "vllm/attn/backends/mla_subs.py": sub}), "no threshold"),
        "attr": r.commit({"vllm/attn/mla_common.py": MLA_OLD}, "class attribute"),
        "grown": r.commit({"vllm/attn/backends/mla_subs.py": sub.replace(
            "UNIFORM_BATCH\n", "UNIFORM_BATCH\n\n    def __init__(self, cfg):\n"
            "        super().__init__(cfg)\n"
            "        self.reorder_batch_threshold += self.num_speculative_tokens\n")},
            "grow it in __init__"),
        "query_len": r.commit({"vllm/attn/mla_common.py": MLA_NEW,
                               "vllm/attn/backends/mla_subs.py": sub}, "query length"),
    }
    with GitRepo(r.path) as repo:
        got = {k: audit_revision(repo, sha, P) for k, sha in eras.items()}
    ready = {k: v.builder("PlainMLAMetadataBuilder").meets_rule for k, v in got.items()}
    assert ready == {"oldest": None, "attr": False, "grown": True, "query_len": False}
    assert {k: _flagged(v) for k, v in got.items()} == {
        "oldest": [], "attr": ["PlainMLAMetadataBuilder"], "grown": [],
        "query_len": ["PlainMLAMetadataBuilder"],
    }


# --- dynamic support: the levels an override can return ------------------------------------

PINNED = "reorder_batch_threshold = 1\n\n"


def _support(tmp_path: Path, method: str, level: str = "UNIFORM_SINGLE_TOKEN_DECODE",
             extra: str = PINNED):
    body = extra + "@classmethod\ndef get_cudagraph_support(cls, cfg, spec):\n" + "\n".join(
        "    " + ln for ln in method.splitlines()
    )
    return _one(tmp_path, body, level)


def test_single_return_replaces_the_declared_level(tmp_path):
    res, b = _support(tmp_path, "return CGSupport.NEVER", level="UNIFORM_BATCH")
    assert b.levels == ["NEVER"] and b.alternatives == [("NEVER", None)]
    assert b.decided_by == "OneMetadataBuilder" and b.dynamic
    assert _flagged(res) == []  # the declared UNIFORM_BATCH is never reported


def test_if_else_returns_give_both_levels_with_their_conditions(tmp_path):
    res, b = _support(tmp_path, "if cfg.fast:\n    return CGSupport.UNIFORM_BATCH\n"
                                "else:\n    return CGSupport.UNIFORM_SINGLE_TOKEN_DECODE")
    assert b.levels == ["UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"]
    assert b.alternatives == [("UNIFORM_BATCH", "cfg.fast"),
                              ("UNIFORM_SINGLE_TOKEN_DECODE", "not cfg.fast")]
    assert b.dynamic_reason is not None
    assert "UNIFORM_BATCH if cfg.fast; else UNIFORM_SINGLE_TOKEN_DECODE" in b.dynamic_reason
    (f,) = res.findings
    assert "UNIFORM_BATCH (when cfg.fast)" in f.message_en
    assert "UNIFORM_SINGLE_TOKEN_DECODE" not in f.message_en
    assert "cfg.fast" in f.message_zh


def test_early_return_makes_the_rest_conditional_on_its_test_failing(tmp_path):
    res, b = _support(
        tmp_path,
        "if cfg.enc_dec and cfg.version == 2:\n    return CGSupport.NEVER\n"
        "return cls._cudagraph_support",
        level="UNIFORM_BATCH",
    )
    assert b.alternatives == [("NEVER", "cfg.enc_dec and cfg.version == 2"),
                              ("UNIFORM_BATCH", "not (cfg.enc_dec and cfg.version == 2)")]
    assert b.support == "NEVER if cfg.enc_dec and cfg.version == 2; else UNIFORM_BATCH"
    (f,) = res.findings
    assert "UNIFORM_BATCH (when not (cfg.enc_dec and cfg.version == 2))" in f.message_en


def test_nested_if_conditions_accumulate(tmp_path):
    res, b = _support(
        tmp_path,
        "if cfg.a:\n    if cfg.b:\n        return CGSupport.ALWAYS\n"
        "    return CGSupport.UNIFORM_BATCH\nreturn CGSupport.NEVER",
    )
    assert b.alternatives == [("ALWAYS", "cfg.a and cfg.b"),
                              ("UNIFORM_BATCH", "cfg.a and not cfg.b"),
                              ("NEVER", "not cfg.a")]
    assert b.support == ("ALWAYS if cfg.a and cfg.b; UNIFORM_BATCH if cfg.a and not cfg.b; "
                         "else NEVER")
    assert _flagged(res) == ["OneMetadataBuilder"]


def test_return_of_the_class_attribute_reads_the_builders_own_level(tmp_path):
    """``cls.<attr>`` in a method a parent defines reads the subclass's declaration."""
    base = _builder("DynBaseMetadataBuilder", "NEVER",
                    "@classmethod\ndef get_cudagraph_support(cls, cfg, spec):\n"
                    "    if cfg.off:\n        return CGSupport.NEVER\n"
                    "    return cls._cudagraph_support")
    sub = (
        "from .dyn_base import DynBaseMetadataBuilder, CGSupport\n\n\n"
        "class DynSubMetadataBuilder(DynBaseMetadataBuilder):\n"
        "    _cudagraph_support = (\n"
        "        CGSupport.ALWAYS if v3 else CGSupport.UNIFORM_BATCH\n    )\n"
        "    reorder_batch_threshold = 1\n"
    )
    res = _audit(tmp_path, {"vllm/attn/backends/dyn_base.py": base,
                            "vllm/attn/backends/dyn_sub.py": sub})
    b = res.builder("DynSubMetadataBuilder")
    assert b is not None and b.decided_by == "DynBaseMetadataBuilder"
    assert b.levels == ["NEVER", "ALWAYS", "UNIFORM_BATCH"]
    assert b.alternatives[1:] == [("ALWAYS", "not cfg.off and v3"),
                                  ("UNIFORM_BATCH", "not cfg.off and not v3")]
    assert "in DynBaseMetadataBuilder" in (b.dynamic_reason or "")
    (f,) = res.findings
    assert f.class_name == "DynSubMetadataBuilder"
    assert "get_cudagraph_support() of DynBaseMetadataBuilder" in f.message_en


def test_return_of_super_stands_for_the_parents_levels(tmp_path):
    base = _builder("SupBaseMetadataBuilder", "NEVER",
                    "@classmethod\ndef get_cudagraph_support(cls, cfg, spec):\n"
                    "    return CGSupport.UNIFORM_BATCH if cfg.trt else CGSupport.NEVER")
    sub = (
        "from .sup_base import SupBaseMetadataBuilder, CGSupport\n\n\n"
        "class SupSubMetadataBuilder(SupBaseMetadataBuilder):\n"
        "    @classmethod\n"
        "    def get_cudagraph_support(cls, cfg, spec):\n"
        "        if cfg.local:\n"
        "            return CGSupport.NEVER\n"
        "        return super().get_cudagraph_support(cfg, spec)\n"
    )
    res = _audit(tmp_path, {"vllm/attn/backends/sup_base.py": base,
                            "vllm/attn/backends/sup_sub.py": sub})
    b = res.builder("SupSubMetadataBuilder")
    assert b is not None and b.decided_by == "SupSubMetadataBuilder"
    assert b.alternatives == [("NEVER", "cfg.local"),
                              ("UNIFORM_BATCH", "not cfg.local and cfg.trt"),
                              ("NEVER", "not cfg.local and not cfg.trt")]
    assert b.levels == ["NEVER", "UNIFORM_BATCH"]
    assert b.support == "NEVER if cfg.local; else (UNIFORM_BATCH if cfg.trt; else NEVER)"
    # no threshold below the root: not applicable, whatever the levels
    assert b.meets_rule is None and _flagged(res) == []


def test_an_unread_return_is_named_not_guessed(tmp_path):
    res, b = _support(tmp_path, "level = pick(cfg)\nreturn level")
    assert b.levels == [] and b.dynamic
    assert "not read as levels: level" in (b.dynamic_reason or "")
    assert _flagged(res) == []


def test_builder_levels_rows_carry_the_set(tmp_path):
    res, _ = _support(tmp_path, "if cfg.fast:\n    return CGSupport.UNIFORM_BATCH\n"
                                "return CGSupport.UNIFORM_SINGLE_TOKEN_DECODE")
    (row,) = [r for r in builder_levels_rows(res) if r["class"] == "OneMetadataBuilder"]
    assert row["dynamic"] is True
    assert row["levels"] == ["UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"]
    assert row["level_text"] == (
        "UNIFORM_BATCH when cfg.fast; UNIFORM_SINGLE_TOKEN_DECODE when not cfg.fast"
    )


# --- the set, stored and shown: collect git -> KB -> timeline, matrix history, report, site ----

FI = "vllm/attn/backends/fi.py"


def _fi(method: str | None) -> str:
    body = "reorder_batch_threshold = 1\n"
    if method is not None:
        body += "\n@classmethod\ndef get_cudagraph_support(cls, cfg, spec):\n" + "\n".join(
            "    " + ln for ln in method.splitlines()
        )
    return _builder("FlashInferMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE", body)


@pytest.fixture()
def dyn_kb(tmp_path: Path):
    from prkb.collect.git import collect_git
    from prkb.store import Store

    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(_tree({FI: _fi(None)}), "[Attention] FlashInfer builder (#1)")
    r.commit({FI: _fi("if cfg.trt:\n    return CGSupport.UNIFORM_BATCH\n"
                      "return cls._cudagraph_support")}, "[Perf] decide at run time (#2)")
    # (a commit is mined when a changed line names the family, a watched method or a value
    # marker: here the last return; a change to a condition line alone is not found)
    r.commit({FI: _fi("if cfg.trt and cfg.heads <= 8:\n    return CGSupport.UNIFORM_BATCH\n"
                      "return super().get_cudagraph_support(cfg, spec)")},
             "[Bugfix] narrower (#3)")
    r.commit({FI: _fi(None)}, "[Revert] static again (#4)")
    db = tmp_path / "kb.sqlite"
    store = Store(db)
    warnings: list[str] = []
    collect_git(store, str(r.path), P, quiet=True, warn=warnings.append)
    assert warnings == []
    return store, db


WHEN = "UNIFORM_BATCH if cfg.trt; else cls._cudagraph_support"
WHEN3 = "UNIFORM_BATCH if cfg.trt and cfg.heads <= 8; else super().get_cudagraph_support(cfg, spec)"


def test_collected_override_changes_carry_the_returns(dyn_kb):

    store, _ = dyn_kb
    got = {
        ref: [(c["attr"], c["before"], c["after"], c["direction"])
              for c in store.pr_facts(ref)["symbol_changes"] if c["attr"] in P.methods]
        for ref in ("2", "3", "4")
    }
    assert got == {
        "2": [("get_cudagraph_support", None, WHEN, "dynamic-added")],
        "3": [("get_cudagraph_support", WHEN, WHEN3, "dynamic-changed")],
        "4": [("get_cudagraph_support", WHEN3, None, "dynamic-removed")],
    }
    (f,) = store.pr_facts("2")["findings"]
    assert f["class"] == "FlashInferMetadataBuilder"
    assert "UNIFORM_BATCH (when cfg.trt)" in f["message_en"]
    tags = {t["code"] for t in store.pr_facts("3")["risk_tags"]}
    assert "dynamic-support" in tags


def test_matrix_history_and_timeline_show_the_set(dyn_kb, capsys):
    from prkb.cli import main
    from prkb.publish.matrix import history_markdown, matrix_history

    store, db = dyn_kb
    [hist] = [b["levels"] for b in matrix_history(store)["builders"]
              if b["class"] == "FlashInferMetadataBuilder"]
    texts = [(lv["pr_ref"], lv["dynamic"], lv["level_set"], lv["level_text"]) for lv in hist]
    assert texts == [
        ("1", False, ["UNIFORM_SINGLE_TOKEN_DECODE"], None),
        ("2", True, ["UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"],
         "UNIFORM_BATCH when cfg.trt; UNIFORM_SINGLE_TOKEN_DECODE when not cfg.trt"),
        ("3", True, ["UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"],
         "UNIFORM_BATCH when cfg.trt and cfg.heads <= 8; "
         "UNIFORM_SINGLE_TOKEN_DECODE when not (cfg.trt and cfg.heads <= 8)"),
        ("4", False, ["UNIFORM_SINGLE_TOKEN_DECODE"], None),
    ]
    text = history_markdown(matrix_history(store), P)
    # what the override reports comes first; the attribute it shadows second
    assert ("| UNIFORM_BATCH when cfg.trt; UNIFORM_SINGLE_TOKEN_DECODE when not cfg.trt "
            "(dynamic; the attribute reads UNIFORM_SINGLE_TOKEN_DECODE) |") in text
    assert main(["--db", str(db), "timeline", "FlashInferMetadataBuilder"]) == 0
    out = capsys.readouterr().out
    assert f"-> {WHEN} (dynamic-added)" in out
    assert f"{WHEN} -> {WHEN3} (dynamic-changed)" in out
    assert "(dynamic: UNIFORM_BATCH when cfg.trt;" in out
    assert "overridden" not in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_shows_the_returns_of_the_override(dyn_kb, lang):
    from prkb.render.report import render_report

    store, _ = dyn_kb
    added = render_report(store, "2", lang=lang, fmt="md", profile=P)
    assert f"`{WHEN}`" in added and "overridden" not in added
    changed = render_report(store, "3", lang=lang, fmt="md", profile=P)
    assert f"`{WHEN}`" in changed and f"`{WHEN3}`" in changed
    label = "run-time decision changed" if lang == "en" else "运行时决策变更"
    assert label in changed
    removed = render_report(store, "4", lang=lang, fmt="md", profile=P)
    assert f"`{WHEN3}`" in removed


def test_site_builder_runs_carry_the_set(dyn_kb):
    from prkb.site.gather import gather
    from prkb.site.macros import make_helpers

    store, _ = dyn_kb
    data = gather(store, P)
    [runs] = [b["runs"] for b in data.builders.values()
              if b["class"] == "FlashInferMetadataBuilder"]
    assert [(r["dynamic"], r["level_text"]) for r in runs] == [
        (False, None),
        (True, "UNIFORM_BATCH when cfg.trt; UNIFORM_SINGLE_TOKEN_DECODE when not cfg.trt"),
        (True, "UNIFORM_BATCH when cfg.trt and cfg.heads <= 8; "
               "UNIFORM_SINGLE_TOKEN_DECODE when not (cfg.trt and cfg.heads <= 8)"),
        (False, None),
    ]
    helpers = make_helpers(lambda s, **kw: s, lambda s, _kind: s)
    # the badge is what the override can report (conditional), not the attribute it
    # shadows; its levels are said once
    assert [r["value"] for r in runs[1:3]] == [r["level_text"] for r in runs[1:3]]
    badge = str(helpers["level_badge"](runs[1]))
    assert 'class="badge lvl-cond"' in badge and ">UNIFORM_BATCH when cfg.trt;" in badge
    assert badge.count("UNIFORM_BATCH when cfg.trt;") == 2  # the text and the title
    assert '<span class="dyn" title="decided at run time">dynamic</span>' in badge
