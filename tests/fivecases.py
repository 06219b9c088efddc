"""A generated repository with five kinds of real declaration changes (our own synthetic
files, in the shape the profile reads), for the git-collected golden reports and the
excerpt-from-blobs tests:

- #402 a bool flag becomes a level (``full_cudagraph_supported = True`` ->
  ``attn_cudagraph_support = UNIFORM_SINGLE_TOKEN_DECODE``);
- #403 a rename only (``attn_cudagraph_support`` -> ``_cudagraph_support`` everywhere);
- #404 a raise with the reorder call that lets the decode threshold grow (MTP);
- #406 a lowering fix (a bugfix title) of the raise #405 made without that call: blame on
  the parent and the timeline tie it to #405 (the git collector keeps no commit body);
- #407 a run-time override (``get_cudagraph_support`` returns a conditional level).

``five_cases(root)`` returns the repository builder and the sha of each PR's commit;
``five_cases_kb(root)`` also collects it into a knowledge base.
"""

from __future__ import annotations

from pathlib import Path

from githistory import ENUM
from gitrepo import GitRepoBuilder

from prkb.collect.git import collect_git
from prkb.profile import load_profile
from prkb.store import Store

UTILS = "vllm/v1/attention/backends/utils.py"
FOO = "vllm/v1/attention/backends/foo_attn.py"
BAR = "vllm/v1/attention/backends/bar_attn.py"
BAZ = "vllm/v1/attention/backends/mla/baz_mla.py"
QUX = "vllm/v1/attention/backends/qux_attn.py"
TEST_BAR = "tests/v1/attention/test_bar_capture.py"
CASES = (402, 403, 404, 406, 407)


def _utils(attr: str) -> str:
    return ENUM + f"""
class AttentionMetadataBuilder:
    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.NEVER
    reorder_batch_threshold: int = 1

    def __init__(self, vllm_config=None):
        self.vllm_config = vllm_config

    def _init_reorder_batch_threshold(self, threshold, supports_spec_as_decode=False):
        self.reorder_batch_threshold = threshold
"""


def _foo(decl: str) -> str:
    return f"""from typing import ClassVar

from vllm.v1.attention.backends.utils import AttentionCGSupport, AttentionMetadataBuilder


class FooMetadataBuilder(AttentionMetadataBuilder):
    \"\"\"Metadata for the foo kernels (a synthetic backend).\"\"\"

    {decl}

    def build(self, common):
        return common
"""


def _bar(attr: str, level: str, spec: bool) -> str:
    call = ("self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)" if spec
            else "self._init_reorder_batch_threshold(1)")
    return f"""from typing import ClassVar

from vllm.v1.attention.backends.utils import AttentionCGSupport, AttentionMetadataBuilder


class BarMetadataBuilder(AttentionMetadataBuilder):
    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{level}

    def __init__(self, vllm_config=None):
        super().__init__(vllm_config)
        {call}

    def build(self, common):
        return common
"""


def _baz(level: str) -> str:
    return f"""from typing import ClassVar

from vllm.v1.attention.backends.utils import AttentionCGSupport, AttentionMetadataBuilder


class BazMLAMetadataBuilder(AttentionMetadataBuilder):
    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.{level}

    def build(self, common):
        return common
"""


QUX_SRC = """from typing import ClassVar

from vllm.v1.attention.backends.utils import AttentionCGSupport, AttentionMetadataBuilder


class QuxMetadataBuilder(AttentionMetadataBuilder):
    _cudagraph_support: ClassVar[AttentionCGSupport] = (
        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE
    )

    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        if vllm_config.use_paged_decode:
            return AttentionCGSupport.UNIFORM_BATCH
        return AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE
"""


def five_cases(root: Path) -> tuple[GitRepoBuilder, dict[int, str]]:
    r = GitRepoBuilder.init(root)
    s: dict[int, str] = {}
    s[401] = r.commit(
        {UTILS: _utils("attn_cudagraph_support"),
         FOO: _foo("full_cudagraph_supported: ClassVar[bool] = True"),
         BAR: _bar("attn_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", spec=False)},
        "[Core] Attention metadata builders for foo and bar (#401)",
    )
    s[402] = r.commit(
        {FOO: _foo("attn_cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
                   "        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n    )")},
        "[Core] Foo: replace the full-graph flag with a support level (#402)",
        body="The bool flag said only yes or no; the level says which batches can be captured.",
    )
    s[403] = r.commit(
        {UTILS: _utils("_cudagraph_support"),
         FOO: _foo("_cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
                   "        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n    )"),
         BAR: _bar("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE", spec=False)},
        "[Refactor] Rename attn_cudagraph_support to _cudagraph_support (#403)",
    )
    s[404] = r.commit(
        {BAR: _bar("_cudagraph_support", "UNIFORM_BATCH", spec=True),
         TEST_BAR: "def test_bar_captures_uniform_batches():\n    assert True\n"},
        "[Perf][Spec Decode] Bar: capture uniform batches with MTP (#404)",
        body="With MTP on, decode batches have a uniform query length above 1; the builder "
             "now reorders them as decodes, so full graphs capture them.",
    )
    s[405] = r.commit(
        {BAZ: _baz("UNIFORM_BATCH")},
        "[Perf][MLA] Baz: full graphs for uniform batches (#405)",
    )
    s[406] = r.commit(
        {BAZ: _baz("UNIFORM_SINGLE_TOKEN_DECODE")},
        "[Bugfix] Baz: back to single-token decode (#406)",
        body="The capture crash with speculative decoding was introduced by #405: the builder "
             "keeps a decode threshold of 1, so uniform batches of 2 tokens are not decodes.",
    )
    s[407] = r.commit(
        {QUX: QUX_SRC},
        "[Feature] Qux decides its level at run time (#407)",
    )
    return r, s


def five_cases_kb(root: Path) -> tuple[Store, GitRepoBuilder, dict[int, str]]:
    """The five cases collected with ``collect git`` into ``root/kb.sqlite`` (repository
    ``example/attn``): the knowledge base knows the clone, so reports read its blobs."""
    repo, shas = five_cases(root / "src")
    store = Store(root / "kb.sqlite")
    collect_git(store, str(repo.path), load_profile(), repo="example/attn", quiet=True,
                warn=lambda _msg: None)
    return store, repo, shas
