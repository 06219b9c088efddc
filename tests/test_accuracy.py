"""Accuracy suite: a generated history that reproduces, with our own small sources, each pattern
of vLLM's real history that prkb once got wrong (issue #13), and the facts a careful reader of
each diff would write down: per-class changes, relations (type and direction), audit findings
at the commit and its parent, and what the reports must and must not say.

Every expectation below was written from the step's diff, not from prkb's output. The figure
line ("hardening accuracy: N commits, M facts checked, 0 failures") counts what was compared.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder

from prkb.collect.git import collect_git
from prkb.profile import load_profile
from prkb.store import Store

PROFILE = load_profile()
FORK = "example-lab/fork"

UTILS = "vllm/v1/attention/backends/utils.py"
ALPHA = "vllm/v1/attention/backends/alpha_attn.py"
FLASH = "vllm/v1/attention/backends/flash_like.py"
FLASH2 = "vllm/v1/attention/backends/flash_like_attn.py"
MLA = "vllm/v1/attention/backends/mla/common.py"
CUT = "vllm/v1/attention/backends/mla/cutlass_like.py"
TRI = "vllm/v1/attention/backends/mla/triton_like.py"
RUNNER = "vllm/v1/worker/runner.py"
ROCM = "vllm/v1/attention/backends/rocm_like.py"

E = "AttentionCGSupport"


# --- sources (ours), written in the shapes the real history used -------------------------------

def utils(decl: str, imports_sorted: bool = False, dynamic: bool = False) -> str:
    imports = (
        "import enum\nfrom typing import ClassVar\n" if imports_sorted
        else "from typing import ClassVar\nimport enum\n"
    )
    dyn = (
        "\n    @classmethod\n    def get_cudagraph_support(cls, config, spec):\n"
        "        return cls._cudagraph_support\n" if dynamic else ""
    )
    return (
        f"{imports}\n\nclass {E}(enum.Enum):\n"
        "    ALWAYS = 3\n    UNIFORM_BATCH = 2\n    UNIFORM_SINGLE_TOKEN_DECODE = 1\n"
        "    PURE_DECODE_ONLY = 1\n    NEVER = 0\n\n\n"
        "class AttentionMetadataBuilder:\n"
        f"{decl}\n"
        "    reorder_batch_threshold = None\n\n"
        "    def _init_reorder_batch_threshold(self, threshold=1, supports_spec_as_decode=False):\n"
        "        self.reorder_batch_threshold = threshold\n"
        f"{dyn}"
    )


def builder(cls: str, base_mod: str, base: str, body: str, extra_imports: str = "") -> str:
    return (
        "from typing import ClassVar\n\n"
        f"from {base_mod} import {base}\n"
        f"from vllm.v1.attention.backends.utils import {E}\n"
        f"{extra_imports}\n\n"
        f"class {cls}({base}):\n{body}\n"
    )


UTILS_MOD = "vllm.v1.attention.backends.utils"
MLA_MOD = "vllm.v1.attention.backends.mla.common"

MLA_COMMON = (
    "import enum\nfrom typing import ClassVar\n\n"
    "from vllm.v1.attention.backends.utils import AttentionMetadataBuilder\n\n\n"
    "class QueryLenSupport(enum.Enum):\n"
    "    SINGLE_ONLY = 'single_only'\n    UNIFORM = 'uniform'\n\n\n"
    "class MLACommonMetadataBuilder(AttentionMetadataBuilder):\n"
    "    query_len_support: ClassVar[QueryLenSupport] = QueryLenSupport.SINGLE_ONLY\n\n"
    "    def __init__(self, config):\n"
    "        grows = self.query_len_support != QueryLenSupport.SINGLE_ONLY\n"
    "        self._init_reorder_batch_threshold(1, supports_spec_as_decode=grows)\n"
)

RUNNER_V1 = (
    "def min_support(builders, config):\n"
    "    return min(b.get_cudagraph_support(config, None) for b in builders)\n"
)
RUNNER_V2 = (
    "def min_support(builders, config):\n"
    "    levels = [b.get_cudagraph_support(config, None) for b in builders]\n"
    "    return min(levels, default=None)\n"
)


def alpha(body: str, cls: str = "AlphaMetadataBuilder") -> str:
    return builder(cls, UTILS_MOD, "AttentionMetadataBuilder", body)


def flash(cond_lines: list[str], attr: str = "cudagraph_support") -> str:
    cond = "\n".join(f"        {c}" for c in cond_lines)
    body = (
        f"    {attr}: ClassVar[{E}] = (\n"
        f"        {E}.ALWAYS\n{cond}\n        else {E}.UNIFORM_BATCH\n    )\n\n"
        "    def __init__(self, config):\n"
        "        self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)\n"
    )
    return builder(
        "FlashLikeMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder", body,
        "from vllm.platforms import flash_version, platform_is_xpu",
    )


def cutlass(decl: str) -> str:
    return builder(
        "CutlassLikeMetadataBuilder", MLA_MOD, "MLACommonMetadataBuilder",
        "    # full graphs for decode-only batches\n" + decl,
    )


def triton(level: str) -> str:
    return builder(
        "TritonLikeMLAMetadataBuilder", MLA_MOD, "MLACommonMetadataBuilder",
        f"    _cudagraph_support: ClassVar[{E}] = {E}.{level}\n",
    )


def rocm(branches: tuple[str, str]) -> str:
    return builder(
        "RocmLikeMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder",
        "    if is_rocm_gfx9():\n"
        f"        _cudagraph_support = {E}.{branches[0]}\n"
        "    else:\n"
        f"        _cudagraph_support = {E}.{branches[1]}\n",
        "from vllm.platforms import is_rocm_gfx9",
    )


ALPHA_DYN_V1 = (
    f"    _cudagraph_support: ClassVar[{E}] = {E}.UNIFORM_BATCH\n\n"
    "    def __init__(self, config):\n"
    "        self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)\n\n"
    "    @classmethod\n"
    "    def get_cudagraph_support(cls, config, spec):\n"
    "        if config.use_sliding_window:\n"
    f"            return {E}.NEVER\n"
    "        return cls._cudagraph_support\n"
)
ALPHA_DYN_V2 = ALPHA_DYN_V1.replace("config.use_sliding_window", "config.window_size > 0")
ALPHA_DYN_V3 = ALPHA_DYN_V2.replace("if config.window_size > 0:", "if (config.window_size > 0):")


# --- the history: one step a commit, with what a reader of its diff writes down -----------------

Change = tuple[str | None, ...]
# (file, class, attr, before_attr, before, after, direction[, before_file of a move])


@dataclass
class Step:
    pr: int | None
    subject: str
    files: dict[str, str | None]
    changes: list[Change] = field(default_factory=list)
    body: str = ""
    new_findings: list[str] = field(default_factory=list)  # classes flagged now, not at parent
    kept: bool = True  # a record exists (the commit names the family or changes a declaration)
    formatting: bool = False  # no semantic change: no change, no relation from or to it


def history() -> list[Step]:
    s: list[Step] = []
    add = s.append
    ml_annot = (
        f"    attn_cudagraph_support: ClassVar[\n        {E}] = {E}.PURE_DECODE_ONLY\n"
    )
    add(Step(101, "[Core] metadata builders and the runner", {
        UTILS: utils("    full_cudagraph_supported: ClassVar[bool] = False"),
        MLA: MLA_COMMON, RUNNER: RUNNER_V1, "README.md": "x\n"},
        [(UTILS, "AttentionMetadataBuilder", "full_cudagraph_supported", None, None, "False",
          "added")]))
    add(Step(102, "[Feature] Alpha: full CUDA graph", {
        ALPHA: alpha("    full_cudagraph_supported: ClassVar[bool] = True\n")},
        [(ALPHA, "AlphaMetadataBuilder", "full_cudagraph_supported", None, None, "True",
          "added")]))
    # class 1: an annotation that spans lines
    add(Step(103, "[Feature] Cutlass-like MLA: decode-only full graph", {
        CUT: cutlass(ml_annot)},
        [(CUT, "CutlassLikeMetadataBuilder", "attn_cudagraph_support", None, None,
          "UNIFORM_SINGLE_TOKEN_DECODE", "added")],
        # the base still declares full_cudagraph_supported: the new spelling is not read yet
        # (rule stale-symbol-spelling, until #104 moves the base to it)
        new_findings=["CutlassLikeMetadataBuilder"]))
    add(Step(104, "[Core] support levels instead of a flag", {
        UTILS: utils(f"    attn_cudagraph_support: ClassVar[{E}] = {E}.NEVER"),
        ALPHA: alpha(f"    attn_cudagraph_support: ClassVar[{E}] = {E}.ALWAYS\n")},
        [(UTILS, "AttentionMetadataBuilder", "attn_cudagraph_support",
          "full_cudagraph_supported", "False", "NEVER", "changed"),
         (ALPHA, "AlphaMetadataBuilder", "attn_cudagraph_support", "full_cudagraph_supported",
          "True", "ALWAYS", "changed")]))
    # class 1 again: a rename where only the first line of the declaration changes
    add(Step(105, "[Core] rename the support attribute", {
        UTILS: utils(f"    cudagraph_support: ClassVar[{E}] = {E}.NEVER"),
        ALPHA: alpha(f"    cudagraph_support: ClassVar[{E}] = {E}.ALWAYS\n"),
        CUT: cutlass(ml_annot.replace("attn_cudagraph_support", "cudagraph_support")
                     .replace("PURE_DECODE_ONLY", "UNIFORM_SINGLE_TOKEN_DECODE"))},
        [(UTILS, "AttentionMetadataBuilder", "cudagraph_support", "attn_cudagraph_support",
          "NEVER", "NEVER", "renamed"),
         (ALPHA, "AlphaMetadataBuilder", "cudagraph_support", "attn_cudagraph_support",
          "ALWAYS", "ALWAYS", "renamed"),
         (CUT, "CutlassLikeMetadataBuilder", "cudagraph_support", "attn_cudagraph_support",
          "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_SINGLE_TOKEN_DECODE", "renamed")]))
    # class 2: a repository-wide reformat (imports sorted, declarations re-wrapped)
    add(Step(106, "Run the formatter over the tree", {
        UTILS: utils(f"    cudagraph_support: ClassVar[{E}] = (\n        {E}.NEVER\n    )",
                     imports_sorted=True),
        CUT: cutlass(f"    cudagraph_support: ClassVar[{E}] = (\n"
                     f"        {E}.UNIFORM_SINGLE_TOKEN_DECODE\n    )\n")},
        formatting=True))
    add(Step(107, "Ignore the formatter commit in blame", {}, kept=False))  # file added below
    # class 8: a conditional value spread over lines
    add(Step(108, "[Perf] Flash-like: full graphs on FA3", {
        FLASH: flash(["if flash_version() == 3"])},
        [(FLASH, "FlashLikeMetadataBuilder", "cudagraph_support", None, None,
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH", "added")]))
    add(Step(109, "[XPU] Flash-like: full graphs on XPU", {
        FLASH: flash(["if flash_version() == 3", "or platform_is_xpu()"])},
        [(FLASH, "FlashLikeMetadataBuilder", "cudagraph_support", None,
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH",
          f"{E}.ALWAYS if flash_version() == 3 or platform_is_xpu() else {E}.UNIFORM_BATCH",
          "changed")]))
    # a value changed on a continuation line of a parenthesised declaration; audit: MLA with
    # the single-only query length cannot grow its threshold
    add(Step(110, "[Perf][MLA] Cutlass-like: uniform batch", {
        CUT: cutlass(f"    cudagraph_support: ClassVar[{E}] = (\n"
                     f"        {E}.UNIFORM_BATCH\n    )\n")},
        [(CUT, "CutlassLikeMetadataBuilder", "cudagraph_support", None,
          "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "raised")],
        new_findings=["CutlassLikeMetadataBuilder"]))
    add(Step(111, "[Bugfix] Cutlass-like: back to single-token decode", {
        CUT: cutlass(f"    cudagraph_support: ClassVar[{E}] = (\n"
                     f"        {E}.UNIFORM_SINGLE_TOKEN_DECODE\n    )\n")},
        [(CUT, "CutlassLikeMetadataBuilder", "cudagraph_support", None, "UNIFORM_BATCH",
          "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")],
        body="The uniform-batch level from #110 crashes at capture with MTP."))
    # a file moved: its declaration moves with it, value unchanged
    moved_value = f"{E}.ALWAYS if flash_version() == 3 or platform_is_xpu() else {E}.UNIFORM_BATCH"
    add(Step(112, "[Refactor] move the flash-like backend", {
        FLASH: None, FLASH2: flash(["if flash_version() == 3", "or platform_is_xpu()"])},
        [(FLASH2, "FlashLikeMetadataBuilder", "cudagraph_support", None, moved_value,
          moved_value, "moved", FLASH)]))
    # class 8 through the rename: a condition line that names nothing
    add(Step(113, "[Bugfix] Flash-like: no full graphs on XPU after all", {
        FLASH2: flash(["if flash_version() == 3"])},
        [(FLASH2, "FlashLikeMetadataBuilder", "cudagraph_support", None,
          f"{E}.ALWAYS if flash_version() == 3 or platform_is_xpu() else {E}.UNIFORM_BATCH",
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH", "changed")]))
    # class 6: dynamic support
    add(Step(114, "[Perf] Alpha: uniform batch unless sliding window", {
        ALPHA: alpha(ALPHA_DYN_V1.replace("_cudagraph_support: ", "cudagraph_support: ")
                     .replace("cls._cudagraph_support", "cls.cudagraph_support"))},
        [(ALPHA, "AlphaMetadataBuilder", "cudagraph_support", None, "ALWAYS", "UNIFORM_BATCH",
          "lowered"),
         (ALPHA, "AlphaMetadataBuilder", "get_cudagraph_support", None, None,
          "NEVER if config.use_sliding_window; else cls.cudagraph_support", "dynamic-added")]))
    add(Step(115, "[Core] the underscore spelling and a dynamic base", {
        UTILS: utils(f"    _cudagraph_support: ClassVar[{E}] = {E}.NEVER", imports_sorted=True,
                     dynamic=True),
        ALPHA: alpha(ALPHA_DYN_V1), CUT: cutlass(
            f"    _cudagraph_support: ClassVar[{E}] = (\n"
            f"        {E}.UNIFORM_SINGLE_TOKEN_DECODE\n    )\n"),
        FLASH2: flash(["if flash_version() == 3"], attr="_cudagraph_support")},
        [(UTILS, "AttentionMetadataBuilder", "_cudagraph_support", "cudagraph_support",
          "NEVER", "NEVER", "renamed"),
         (UTILS, "AttentionMetadataBuilder", "get_cudagraph_support", None, None,
          "cls._cudagraph_support", "dynamic-added"),
         (ALPHA, "AlphaMetadataBuilder", "_cudagraph_support", "cudagraph_support",
          "UNIFORM_BATCH", "UNIFORM_BATCH", "renamed"),
         (CUT, "CutlassLikeMetadataBuilder", "_cudagraph_support", "cudagraph_support",
          "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_SINGLE_TOKEN_DECODE", "renamed"),
         (FLASH2, "FlashLikeMetadataBuilder", "_cudagraph_support", "cudagraph_support",
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH",
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH", "renamed")]))
    add(Step(116, "[Perf][MLA] Triton-like MLA: full graphs for decode", {
        TRI: triton("UNIFORM_BATCH")},
        [(TRI, "TritonLikeMLAMetadataBuilder", "_cudagraph_support", None, None,
          "UNIFORM_BATCH", "added")],
        new_findings=["TritonLikeMLAMetadataBuilder"]))
    # class 6: the conditions of the override change, on a line that names nothing
    add(Step(117, "[Alpha] sliding window test of the override", {
        ALPHA: alpha(ALPHA_DYN_V2)},
        [(ALPHA, "AlphaMetadataBuilder", "get_cudagraph_support", None,
          "NEVER if config.use_sliding_window; else cls._cudagraph_support",
          "NEVER if config.window_size > 0; else cls._cudagraph_support", "dynamic-changed")]))
    add(Step(118, "[Bugfix][ROCm] Triton-like MLA: single-token decode only", {
        TRI: triton("UNIFORM_SINGLE_TOKEN_DECODE")},
        [(TRI, "TritonLikeMLAMetadataBuilder", "_cudagraph_support", None, "UNIFORM_BATCH",
          "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")],
        body="Fixes the capture crash introduced by #116 under speculative decoding."))
    # class 2: a formatting-only edit of the method (AST-equal), not listed anywhere
    add(Step(119, "Style: parenthesise a condition", {ALPHA: alpha(ALPHA_DYN_V3)},
             formatting=True))
    add(Step(120, 'Revert "[Bugfix][ROCm] Triton-like MLA: single-token decode only (#118)"',
             {TRI: triton("UNIFORM_BATCH")},
             [(TRI, "TritonLikeMLAMetadataBuilder", "_cudagraph_support", None,
               "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "raised")],
             new_findings=["TritonLikeMLAMetadataBuilder"]))
    # class 9: a big PR with one declaration change among hundreds of files
    big: dict[str, str | None] = {
        f"vllm/model_executor/models/m{i:03d}.py": f"VALUE_{i} = {i}\n" for i in range(240)}
    big[CUT] = cutlass(f"    _cudagraph_support: ClassVar[{E}] = (\n        {E}.NEVER\n    )\n")
    add(Step(121, "[Model] many models at once", big,
             [(CUT, "CutlassLikeMetadataBuilder", "_cudagraph_support", None,
               "UNIFORM_SINGLE_TOKEN_DECODE", "NEVER", "lowered")]))
    # a level line that only moved inside its class; a comment-only edit
    add(Step(122, "[Misc] tidy the Triton-like builder", {
        TRI: builder("TritonLikeMLAMetadataBuilder", MLA_MOD, "MLACommonMetadataBuilder",
                     "    supports_sinks = False\n"
                     f"    _cudagraph_support: ClassVar[{E}] = {E}.UNIFORM_BATCH\n")},
        formatting=True))
    add(Step(123, "[Bugfix] runner: no level when no builder", {RUNNER: RUNNER_V2}, []))
    # a conditional declaration in an if block of the class body
    add(Step(124, "[ROCm] Rocm-like backend", {ROCM: rocm(("UNIFORM_BATCH", "NEVER"))},
             [(ROCM, "RocmLikeMetadataBuilder", "_cudagraph_support", None, None,
               "UNIFORM_BATCH if is_rocm_gfx9() else NEVER", "added")]))
    add(Step(125, "[ROCm] Rocm-like: decode-only elsewhere", {
        ROCM: rocm(("UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"))},
        [(ROCM, "RocmLikeMetadataBuilder", "_cudagraph_support", None,
          "UNIFORM_BATCH if is_rocm_gfx9() else NEVER",
          "UNIFORM_BATCH if is_rocm_gfx9() else UNIFORM_SINGLE_TOKEN_DECODE", "changed")]))
    # a commit of the fork's own, without a PR number
    add(Step(None, "fork: Alpha back to always", {
        ALPHA: alpha(ALPHA_DYN_V3.replace(f"= {E}.UNIFORM_BATCH", f"= {E}.ALWAYS"))},
        [(ALPHA, "AlphaMetadataBuilder", "_cudagraph_support", None, "UNIFORM_BATCH", "ALWAYS",
          "raised")]))
    # a class renamed: its declaration leaves the old name and arrives under the new one
    add(Step(127, "[Refactor] Alpha builder's new name", {
        ALPHA: alpha(ALPHA_DYN_V3.replace(f"= {E}.UNIFORM_BATCH", f"= {E}.ALWAYS"),
                     cls="AlphaAttnMetadataBuilder")},
        [(ALPHA, "AlphaAttnMetadataBuilder", "_cudagraph_support", None, None, "ALWAYS", "added"),
         (ALPHA, "AlphaAttnMetadataBuilder", "get_cudagraph_support", None, None,
          "NEVER if config.window_size > 0; else cls._cudagraph_support", "dynamic-added"),
         (ALPHA, "AlphaMetadataBuilder", "_cudagraph_support", None, "ALWAYS", None, "removed"),
         (ALPHA, "AlphaMetadataBuilder", "get_cudagraph_support", None,
          "NEVER if config.window_size > 0; else cls._cudagraph_support", None,
          "dynamic-removed")]))
    add(Step(128, "[Docs] explain the levels", {
        "docs/levels.md": "`_cudagraph_support` says how much can be captured.\n"}, kept=False))
    add(Step(129, "[Misc] comment on the Rocm-like value", {
        ROCM: rocm(("UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE")).replace(
            "    if is_rocm_gfx9():\n",
            "    # gfx9 has the uniform-batch kernel\n    if is_rocm_gfx9():\n")},
        formatting=True, kept=False))
    add(Step(130, "[Perf] Flash-like: spelling of the FA3 check", {
        FLASH2: flash(["if flash_version() >= 3"], attr="_cudagraph_support")},
        [(FLASH2, "FlashLikeMetadataBuilder", "_cudagraph_support", None,
          f"{E}.ALWAYS if flash_version() == 3 else {E}.UNIFORM_BATCH",
          f"{E}.ALWAYS if flash_version() >= 3 else {E}.UNIFORM_BATCH", "changed")]))
    # a level's old name replaced by its new one, in a PR that does more: same level, renamed
    gamma = "vllm/v1/attention/backends/gamma_attn.py"
    add(Step(131, "[Feature] Gamma backend", {
        gamma: builder("GammaMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder",
                       f"    _cudagraph_support = {E}.PURE_DECODE_ONLY\n")},
        [(gamma, "GammaMetadataBuilder", "_cudagraph_support", None, None,
          "UNIFORM_SINGLE_TOKEN_DECODE", "added")]))
    add(Step(132, "[Core] level names and a runner clean-up", {
        gamma: builder("GammaMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder",
                       f"    _cudagraph_support = {E}.UNIFORM_SINGLE_TOKEN_DECODE\n"),
        RUNNER: RUNNER_V2 + "\n\nMAX_LEVEL = 3\n"},
        [(gamma, "GammaMetadataBuilder", "_cudagraph_support", None, "PURE_DECODE_ONLY",
          "UNIFORM_SINGLE_TOKEN_DECODE", "renamed")]))
    # a class moved into another file while the old file stays: moved, not removed + added
    gamma2 = "vllm/v1/attention/backends/gamma_v2.py"
    add(Step(133, "[Refactor] Gamma builder in its own module", {
        gamma: "GAMMA_BLOCK = 16\n",
        gamma2: builder("GammaMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder",
                        f"    _cudagraph_support = {E}.UNIFORM_SINGLE_TOKEN_DECODE\n")},
        [(gamma2, "GammaMetadataBuilder", "_cudagraph_support", None,
          "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_SINGLE_TOKEN_DECODE", "moved", gamma)]))
    # class 6: the same returns, decided by a condition now computed another way
    def alpha_local(expr: str) -> str:
        return alpha(
            f"    _cudagraph_support: ClassVar[{E}] = {E}.ALWAYS\n\n"
            "    def __init__(self, config):\n"
            "        self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)\n\n"
            "    @classmethod\n"
            "    def get_cudagraph_support(cls, config, spec):\n"
            '        """Full graphs unless a sliding window is in use."""\n'
            f"        sliding = {expr}\n"
            "        if sliding:\n"
            f"            return {E}.NEVER\n"
            "        return cls._cudagraph_support\n",
            cls="AlphaAttnMetadataBuilder")
    alpha_dyn = "NEVER if sliding; else cls._cudagraph_support"
    add(Step(134, "[Alpha] name the sliding-window test", {
        ALPHA: alpha_local("config.window_size > 0")},
        [(ALPHA, "AlphaAttnMetadataBuilder", "get_cudagraph_support", None,
          "NEVER if config.window_size > 0; else cls._cudagraph_support", alpha_dyn,
          "dynamic-changed")]))
    add(Step(135, "[Alpha] windows of one token are not sliding", {
        ALPHA: alpha_local("config.window_size > 1")},
        [(ALPHA, "AlphaAttnMetadataBuilder", "get_cudagraph_support", None, alpha_dyn,
          f"{alpha_dyn} (conditions now computed differently)", "dynamic-changed")]))
    # class 4: a raise whose threshold grows with the speculative tokens (an __init__ `+=`):
    # the audit reads it as consistent, so no report may warn that the threshold cannot grow
    delta = "vllm/v1/attention/backends/delta_attn.py"
    add(Step(136, "[Perf][Spec Decode] Delta: uniform batch for MTP", {
        delta: builder(
            "DeltaMetadataBuilder", UTILS_MOD, "AttentionMetadataBuilder",
            f"    _cudagraph_support: ClassVar[{E}] = {E}.UNIFORM_BATCH\n"
            "    reorder_batch_threshold: ClassVar[int] = 1\n\n"
            "    def __init__(self, config):\n"
            "        self.num_speculative_tokens = config.num_speculative_tokens\n"
            "        self.reorder_batch_threshold += self.num_speculative_tokens\n")},
        [(delta, "DeltaMetadataBuilder", "_cudagraph_support", None, None, "UNIFORM_BATCH",
          "added")]))
    return s


# steps whose commit is not a family hit but is still read by the scan (declaration files)
IGNORE_FILE = ".git-blame-ignore-revs"


@dataclass
class Built:
    path: Path
    shas: dict[int, str]  # step index -> sha
    steps: list[Step]


def build(root: Path) -> Built:
    repo = GitRepoBuilder.init(root)
    steps = history()
    shas: dict[int, str] = {}

    def sha_of(pr: int) -> str:
        return shas[next(j for j, x in enumerate(steps) if x.pr == pr)]

    for i, st in enumerate(steps):
        files = dict(st.files)
        if st.pr == 107:
            files[IGNORE_FILE] = f"# the formatter\n{sha_of(106)}\n"
        body = st.body
        if st.subject.startswith("Revert "):
            body = f"This reverts commit {sha_of(118)}."
        subject = st.subject if st.pr is None else f"{st.subject} (#{st.pr})"
        shas[i] = repo.commit(files, subject, body=body)
    return Built(repo.path, shas, steps)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path]:
    root = tmp_path_factory.mktemp("accuracy")
    built = build(root / "repo")
    db = root / "kb.sqlite"
    warnings: list[str] = []
    with Store(db) as st:
        collect_git(st, str(built.path), PROFILE, quiet=True, warn=warnings.append, fork=FORK)
    assert warnings == []
    return built, db


def _rows(db: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def _ref(st: Step, sha: str) -> str:
    return str(st.pr) if st.pr is not None else f"sha:{sha}"


def _key(st: Step, sha: str) -> str:
    return f"pr:{st.pr}" if st.pr is not None else f"commit:{sha}"


def test_every_per_class_change_is_right(collected: tuple[Built, Path], figures) -> None:
    built, db = collected
    wrong: list[str] = []
    checked = 0
    for i, st in enumerate(built.steps):
        sha = built.shas[i]
        pr = _rows(db, "SELECT id FROM prs WHERE ref=?", _ref(st, sha))
        expect_record = st.kept or bool(st.changes)
        if not pr:
            checked += 1
            if expect_record and not st.formatting:
                wrong.append(f"{st.pr}: no record")
            continue
        got = sorted(
            (r["file"], r["class_name"], r["attr"], r["before_attr"], r["before"], r["after"],
             r["direction"], r["before_file"])
            for r in _rows(db, "SELECT * FROM symbol_changes WHERE pr_id=?", pr[0]["id"])
        )
        want = sorted(c if len(c) == 8 else (*c, None) for c in st.changes)
        checked += max(1, len(want))
        if got != want:
            wrong.append(f"{st.pr}: got {got}, want {want}")
    figures.add("accuracy", "commits", len(built.steps))
    figures.add("accuracy", "facts checked", checked)
    assert not wrong, "\n".join(wrong)


def test_audit_findings_at_each_commit_and_its_parent(
    collected: tuple[Built, Path], figures
) -> None:
    built, db = collected
    wrong = []
    for i, st in enumerate(built.steps):
        sha = built.shas[i]
        got = sorted(
            r["class_name"]
            for r in _rows(db, "SELECT f.class_name FROM findings f JOIN prs p ON p.id=f.pr_id "
                               "WHERE p.ref=?", _ref(st, sha))
        )
        if got != sorted(st.new_findings):
            wrong.append(f"{st.pr}: new findings {got}, want {st.new_findings}")
    figures.add("accuracy", "facts checked", len(built.steps))
    assert not wrong, "\n".join(wrong)


def _relations(db: Path) -> dict[tuple[str, str], str]:
    return {(r["source"], r["target"]): r["type"]
            for r in _rows(db, "SELECT source, target, type FROM relations")}


def test_relations_have_the_right_type_and_direction(
    collected: tuple[Built, Path], figures
) -> None:
    built, db = collected
    rel = _relations(db)
    expected = {
        ("pr:111", "pr:110"): "fixes-regression-from",  # the text names it; the level drops
        ("pr:118", "pr:116"): "fixes-regression-from",
        ("pr:120", "pr:118"): "reverts",
        ("pr:105", "pr:104"): "modifies-declaration-of",
        # a rename sets nothing: the next change points past it to the PR that set the value
        ("pr:110", "pr:103"): "modifies-declaration-of",
        ("pr:121", "pr:111"): "modifies-declaration-of",
        ("pr:130", "pr:113"): "modifies-declaration-of",  # past #115's rename and #112's move
        # blame of a line no fix words or lowered level explain: lineage only, later -> earlier
        ("pr:123", "pr:101"): "follow-up-of",
        ("pr:109", "pr:108"): "modifies-declaration-of",
    }
    wrong = [f"{k}: got {rel.get(k)}, want {v}" for k, v in expected.items() if rel.get(k) != v]
    # #113 takes back the XPU condition #109 added (a bug fix): lineage or timeline, from the
    # later PR to the earlier one, whichever type wins
    if rel.get(("pr:113", "pr:109")) not in (
        "fixes-regression-from", "follow-up-of", "modifies-declaration-of"
    ):
        wrong.append(f"#113 -> #109: {rel.get(('pr:113', 'pr:109'))}")
    # formatting commits are no one's source or target
    fmt = {_key(st, built.shas[i]) for i, st in enumerate(built.steps) if st.formatting}
    wrong += [f"{k} -> {t}: involves a formatting commit" for k, t in rel.items()
              if fmt & set(k)]
    # blame passes the rename (#105) and the formatter (#106, listed for blame to ignore):
    # the line #110 changed was last set by #103
    if ("pr:110", "pr:106") in rel or rel.get(("pr:110", "pr:105")) not in (
        None, "modifies-declaration-of"
    ):
        wrong.append(f"#110's lineage stops at a rename or a reformat: {rel}")
    # no relation points from an earlier PR to a later one, except reverts/supersedes
    order = {_key(st, built.shas[i]): i for i, st in enumerate(built.steps)}
    for (src, dst), typ in rel.items():
        if src in order and dst in order and order[src] < order[dst]:
            wrong.append(f"{src} {typ} {dst}: points forward in time")
    figures.add("accuracy", "facts checked", len(expected) + len(rel))
    assert not wrong, "\n".join(wrong)


def test_fork_commit_links_to_the_fork(collected: tuple[Built, Path], figures) -> None:
    built, db = collected
    i = next(i for i, st in enumerate(built.steps) if st.pr is None)
    row = _rows(db, "SELECT url FROM prs WHERE ref=?", f"sha:{built.shas[i]}")
    assert row and row[0]["url"] == f"https://github.com/{FORK}/commit/{built.shas[i]}"
    pr = _rows(db, "SELECT url FROM prs WHERE ref='110'")
    assert pr[0]["url"] == f"https://github.com/{PROFILE.repo}/pull/110"
    figures.add("accuracy", "facts checked", 2)


def test_lineage_rows_say_what_blame_passed(collected: tuple[Built, Path], figures) -> None:
    built, db = collected
    raw = json.loads(_rows(db, "SELECT raw FROM prs WHERE ref='110'")[0]["raw"])
    rows = raw["prkb"]["lineage"]
    i103 = next(i for i, st in enumerate(built.steps) if st.pr == 103)
    passable = {built.shas[i] for i, st in enumerate(built.steps) if st.pr in (105, 106)}
    decl = [r for r in rows if r["decl"]]
    assert decl, rows
    assert {r["commit"] for r in decl} == {built.shas[i103]}
    assert all(r["kind"] == "semantic" for r in decl)
    assert all(set(r["passed"]) <= passable for r in decl)
    figures.add("accuracy", "facts checked", 3)


WARNING_EN = "cannot grow under speculative decoding"
WARNING_ZH = "无法增大"


def test_report_statements(collected: tuple[Built, Path], figures) -> None:
    """What the reports of the generated history must and must not say (both languages)."""
    from prkb.render.report import render_report

    built, db = collected
    checked = 0
    with Store(db) as st:
        def rep(ref: int | str, lang: str = "en") -> str:
            return render_report(st, ref, lang=lang, fmt="md", profile=PROFILE)

        # the audit's judgement, never a second heuristic: #110 is flagged, #136 grows its
        # threshold with `+= num_speculative_tokens`, so only #110 warns
        assert WARNING_EN in rep(110) and WARNING_ZH in rep(110, "zh")
        for pr in (136, 114, 124):
            assert WARNING_EN not in rep(pr), pr
            assert WARNING_ZH not in rep(pr, "zh"), pr
        assert "grows under speculative decoding" in rep(136)
        checked += 8
        # a relation inferred from blame is marked as inferred in both languages
        en, zh = rep(111), rep(111, "zh")
        assert "#110" in en and "(inferred)" in en
        assert "#110" in zh and "（推测）" in zh
        checked += 2
        # the formatter's record (if any) changes nothing and links to nothing
        fmt = next(i for i, s_ in enumerate(built.steps) if s_.pr == 106)
        row = st.conn.execute("SELECT ref FROM prs WHERE merge_commit_sha=?",
                              (built.shas[fmt],)).fetchone()
        if row is not None:
            text = rep(row[0])
            assert "level-raised" not in text and "#10" not in text.split("Related")[-1]
            checked += 1
        # a fork's own commit links to the fork
        fork_sha = next(built.shas[i] for i, s_ in enumerate(built.steps) if s_.pr is None)
        assert f"https://github.com/{FORK}/commit/{fork_sha}" in rep(fork_sha)
        checked += 1
        # a PR of hundreds of files reads at normal length and counts the rest
        big = rep(121)
        assert "and 240 other files (240 lines changed)" in big  # 241 files, one declares
        assert len(big.splitlines()) < 200
        checked += 2
        # a move and a level's new name are said as such
        assert "moved from `vllm/v1/attention/backends/gamma_attn.py`" in rep(133)
        assert "whose old name `PURE_DECODE_ONLY` is now spelled" in rep(132)
        checked += 2
    figures.add("accuracy", "facts checked", checked)
