"""A tiny source tree shaped like the audited project (our own code), for audit/matrix tests."""

from __future__ import annotations

BACKEND = '''\
import enum
from typing import ClassVar


class CGSupport(enum.Enum):
    ALWAYS = 3
    UNIFORM_BATCH = 2
    UNIFORM_SINGLE_TOKEN_DECODE = 1
    NEVER = 0


class AttentionMetadataBuilder:
    _cudagraph_support: ClassVar[CGSupport] = CGSupport.NEVER
    reorder_batch_threshold = None

    @classmethod
    def get_cudagraph_support(cls, config, spec):
        return cls._cudagraph_support

    def _init_reorder_batch_threshold(self, threshold=1, supports_spec_as_decode=False):
        self.reorder_batch_threshold = threshold
'''

MLA_COMMON = '''\
import enum
from typing import ClassVar

from vllm.attn.backend import AttentionMetadataBuilder as BaseBuilder, CGSupport


class QueryLenSupport(enum.Enum):
    SINGLE_ONLY = "single_only"
    UNIFORM = "uniform"
    VARLEN = "varlen"


class MLACommonMetadataBuilder(BaseBuilder):
    query_len_support: ClassVar[QueryLenSupport] = QueryLenSupport.SINGLE_ONLY

    def __init__(self, config):
        grows = self.query_len_support != QueryLenSupport.SINGLE_ONLY
        self._init_reorder_batch_threshold(1, grows)


class MLACommonBackend:
    @staticmethod
    def get_builder_cls():
        return MLACommonMetadataBuilder
'''


def triton_mla(level: str | None, query_len: str | None = None) -> str:
    """An MLA builder module that reaches its base through a module alias."""
    lines = [
        "from typing import ClassVar",
        "",
        "import vllm.layers.mla_common as mla",
        "from vllm.attn.backend import CGSupport",
        "from vllm.layers.mla_common import QueryLenSupport",
        "",
        "",
        "class TritonMLAMetadataBuilder(mla.MLACommonMetadataBuilder):",
    ]
    if level:
        lines.append(f"    _cudagraph_support: ClassVar[CGSupport] = CGSupport.{level}")
    if query_len:
        lines.append(f"    query_len_support = QueryLenSupport.{query_len}")
    if not level and not query_len:
        lines.append("    pass")
    lines += [
        "",
        "",
        "class TritonMLABackend(mla.MLACommonBackend):",
        "    @staticmethod",
        "    def get_name() -> str:",
        '        return "TRITON_MLA"',
        "",
        "    @staticmethod",
        "    def get_builder_cls():",
        "        return TritonMLAMetadataBuilder",
        "",
    ]
    return "\n".join(lines)


def plain_builder(name: str, level: str, call: str | None, extra: str = "") -> str:
    """A non-MLA builder; ``call`` is the text of the reorder call in ``__init__`` (or None)."""
    body = [
        "from ..backend import AttentionMetadataBuilder, CGSupport",
        "",
        "",
        f"class {name}(AttentionMetadataBuilder):",
        f"    _cudagraph_support = CGSupport.{level}",
    ]
    if extra:
        body += ["    " + ln for ln in extra.splitlines()]
    if call:
        body += [
            "",
            "    def __init__(self, config):",
            "        self.use_spec = config.spec is not None",
            f"        self.{call}",
        ]
    return "\n".join(body) + "\n"


def base_tree() -> dict[str, str | None]:
    return {
        "vllm/__init__.py": "",
        "vllm/attn/__init__.py": "",
        "vllm/attn/backend.py": BACKEND,
        "vllm/layers/__init__.py": "",
        "vllm/layers/mla_common.py": MLA_COMMON,
        "vllm/attn/backends/__init__.py": "",
        "vllm/attn/backends/triton_mla.py": triton_mla(None),
        "vllm/unrelated.py": "x = 1\n",
        "README.md": "hello\n",
    }
