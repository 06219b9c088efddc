"""A small real git repository that replays vLLM's history of CUDA-graph support declarations
(our own synthetic files): every attribute spelling, a rename, a conditional value, a run-time
override, the MLA common builder, TritonMLA's raise/lower/revert and a merge commit.

``build_history(root)`` returns the repository and the sha of each step by PR number;
``history_with_level_changes(root, n, first_pr)`` adds ``n`` commits that cycle TritonMLA's
level. The path constants and ``base``/``triton``/``MLA_SRC`` let a test write more commits
in the same shape.
"""

from __future__ import annotations

from pathlib import Path

from gitrepo import GitRepoBuilder, git

UTILS = "vllm/v1/attention/backends/utils.py"
FA = "vllm/v1/attention/backends/flash_attn.py"
FI = "vllm/v1/attention/backends/flashinfer.py"
MLA = "vllm/model_executor/layers/attention/mla_attention.py"
TRITON = "vllm/v1/attention/backends/mla/triton_mla.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"

ENUM = """
import enum
from typing import ClassVar


class AttentionCGSupport(enum.Enum):
    NEVER = 0
    PURE_DECODE_ONLY = 1
    UNIFORM_SINGLE_TOKEN_DECODE = 1
    UNIFORM_BATCH = 2
    ALWAYS = 3

"""


def base(attr: str, level: str = "NEVER") -> str:
    return ENUM + f"""
class AttentionMetadataBuilder:
    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{level}

    def _init_reorder_batch_threshold(self, threshold, supports_spec_as_decode=False):
        self.reorder_batch_threshold = threshold
"""


MLA_SRC = """
import enum
from typing import ClassVar

from vllm.v1.attention.backends.utils import AttentionMetadataBuilder


class QueryLenSupport(enum.Enum):
    SINGLE_ONLY = 1
    UNIFORM = 2
    VARLEN = 3


class MLACommonMetadataBuilder(AttentionMetadataBuilder):
    query_len_support: ClassVar[QueryLenSupport] = QueryLenSupport.SINGLE_ONLY

    def __init__(self):
        spec = self.query_len_support != QueryLenSupport.SINGLE_ONLY
        self._init_reorder_batch_threshold(1, supports_spec_decode=spec)
"""


def triton(level: str) -> str:
    return f"""
from typing import ClassVar

from vllm.model_executor.layers.attention.mla_attention import MLACommonMetadataBuilder as Base
from vllm.v1.attention.backends.utils import AttentionCGSupport


class TritonMLAMetadataBuilder(Base):
    _cudagraph_support: ClassVar[AttentionCGSupport] = (
        AttentionCGSupport.{level}
    )
"""


def build_history(root: Path) -> tuple[GitRepoBuilder, dict[str, str]]:
    r = GitRepoBuilder.init(root)
    s: dict[str, str] = {}
    s["101"] = r.commit(
        {
            UTILS: base("attn_cudagraph_support"),
            FA: (
                "from typing import ClassVar\n"
                "from vllm.v1.attention.backends.utils import AttentionMetadataBuilder\n\n\n"
                "class FlashAttentionMetadataBuilder(AttentionMetadataBuilder):\n"
                "    full_cudagraph_supported: ClassVar[bool] = True\n"
            ),
        },
        "[Core] Base metadata builder (#101)",
    )
    s["102"] = r.commit(
        {
            FI: (
                "from vllm.v1.attention.backends.utils import (\n"
                "    AttentionCGSupport, AttentionMetadataBuilder)\n\n\n"
                "class FlashInferMetadataBuilder(AttentionMetadataBuilder):\n"
                "    attn_cudagraph_support = AttentionCGSupport.PURE_DECODE_ONLY\n"
            )
        },
        "[Perf] Full cudagraph for FlashInfer decode (#102)",
    )
    s["readme"] = r.commit({"README.md": "hello\n"}, "docs: readme")
    s["runner"] = r.commit(
        {RUNNER: "def pick(builder):\n    return builder.attn_cudagraph_support_extra\n"},
        "[Core] runner reads a longer name (#110)",
    )
    s["103"] = r.commit(
        {
            UTILS: base("cudagraph_support"),
            FI: (
                "from vllm.v1.attention.backends.utils import (\n"
                "    AttentionCGSupport, AttentionMetadataBuilder)\n\n\n"
                "class FlashInferMetadataBuilder(AttentionMetadataBuilder):\n"
                "    cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
            ),
        },
        "[Refactor] Rename attn_cudagraph_support to cudagraph_support (#103)",
    )
    s["nopr"] = r.commit(
        {
            FA: (
                "from typing import ClassVar\n"
                "from vllm.v1.attention.backends.utils import (\n"
                "    AttentionCGSupport, AttentionMetadataBuilder)\n\n"
                "FA_VERSION = 3\n\n\n"
                "class FlashAttentionMetadataBuilder(AttentionMetadataBuilder):\n"
                "    cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
                "        AttentionCGSupport.ALWAYS if FA_VERSION == 3\n"
                "        else AttentionCGSupport.UNIFORM_BATCH\n"
                "    )\n"
            )
        },
        "Conditional FlashAttention support",
    )
    s["104"] = r.commit(
        {
            FI: (
                "from vllm.v1.attention.backends.utils import (\n"
                "    AttentionCGSupport, AttentionMetadataBuilder)\n\n\n"
                "class FlashInferMetadataBuilder(AttentionMetadataBuilder):\n"
                "    cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n\n"
                "    @classmethod\n"
                "    def get_cudagraph_support(cls, config):\n"
                "        return AttentionCGSupport.UNIFORM_BATCH\n"
            )
        },
        "[Feature] FlashInfer decides at run time (#104)",
    )
    s["105"] = r.commit(
        {UTILS: base("_cudagraph_support"), MLA: MLA_SRC},
        "[Refactor] Private _cudagraph_support and MLA common builder (#105)",
    )
    s["42885"] = r.commit(
        {TRITON: triton("UNIFORM_BATCH")},
        "[Perf][MLA] Enable FULL cudagraph capture for TRITON_MLA decode (#42885)",
    )
    s["47144"] = r.commit(
        {TRITON: triton("UNIFORM_SINGLE_TOKEN_DECODE")},
        "[Bugfix][ROCm] Change AttentionCGSupport in TritonMLA to "
        "UNIFORM_SINGLE_TOKEN_DECODE (#47144)",
    )
    s["47200"] = r.commit(
        {TRITON: triton("UNIFORM_BATCH")},
        'Revert "[Bugfix][ROCm] Change AttentionCGSupport in TritonMLA (#47144)" (#47200)',
        body=f"This reverts commit {s['47144']}.",
    )
    # a merge commit: the branch's work lands as one first-parent change
    git(r.path, "checkout", "-q", "-b", "feature")
    r.commit({TRITON: triton("UNIFORM_SINGLE_TOKEN_DECODE")}, "lower it again on a branch")
    git(r.path, "checkout", "-q", "main")
    r.commit({"docs/notes.md": "x\n"}, "docs on main meanwhile (#201)")
    git(
        r.path, "merge", "-q", "--no-ff", "feature", "-m",
        "Merge pull request #200 from someone/feature\n\n[Bugfix] TritonMLA single-token decode",
    )
    s["200"] = r.head()
    return r, s


def history_with_level_changes(root: Path, n: int, first_pr: int) -> GitRepoBuilder:
    """``build_history`` plus ``n`` commits that cycle TritonMLA's level (PRs from
    ``first_pr`` on): a longer run for the kill and concurrency tests."""
    repo, _ = build_history(root)
    levels = ["UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", "NEVER", "ALWAYS"]
    for i in range(n):
        repo.commit({TRITON: triton(levels[i % 4])},
                    f"[Perf] TritonMLA level {i} (#{first_pr + i})")
    return repo
