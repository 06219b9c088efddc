"""The audit's skimmed parse (prkb/analyze/skim.py) reads the same facts as a full parse.

Each source below is read twice, whole and skimmed; the class facts and imports must be
equal, and the skimmed text must keep every line number. ``bench/skim_check.py`` runs the
same comparison over every version of every scanned file of a real history.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from prkb.analyze.audit import module_facts, parse_skimmed, skim_words
from prkb.analyze.skim import skim
from prkb.analyze.symbols import SourceError
from prkb.profile import load_profile

PROFILE = load_profile(None)
WORDS, KEEP, GUARDED = skim_words(PROFILE)

BACKEND = textwrap.dedent('''
    """A backend."""
    from typing import ClassVar

    from vllm.v1.attention.backends.utils import (
        AttentionCGSupport,
        AttentionMetadataBuilder,
    )


    def helper(x: int) -> int:
        """Not read by the audit."""
        y = x + 1
        z = y * 2
        return z


    class FooBackend:
        @staticmethod
        def get_name() -> str:
            return "FOO"

        @staticmethod
        def get_builder_cls() -> type["FooMetadataBuilder"]:
            """The builder."""
            return FooMetadataBuilder

        def long_getter(self) -> int:
            return (
                1
                + 2
            )


    class FooMetadataBuilder(AttentionMetadataBuilder):
        _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH
        reorder_batch_threshold: int = 1

        def __init__(self, spec, layer_names, config, device):
            super().__init__(spec, layer_names, config, device)
            if self.num_spec > 3:
                raise ValueError("too many")
            self._init_reorder_batch_threshold(1 + self.num_spec, supports_spec_as_decode=True)
            self.x = 1

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            decodes, prefills = split_decodes_and_prefills(
                common_attn_metadata, decode_threshold=self.reorder_batch_threshold
            )
            out = []
            for i in range(decodes):
                out.append(i)
            return out

        def other(self):
            self._init_reorder_batch_threshold(4)
            a = 1
            b = 2
            return a + b

        @classmethod
        def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
            if vllm_config.x:
                return AttentionCGSupport.NEVER
            return cls._cudagraph_support

        async def run(
            self,
            a: int = ")",  # a bracket in a string
        ) -> None:
            """A docstring
            over lines."""
            await a
            await b
            await c


    class FooImpl:
        def __init__(self, num_heads):
            self.num_heads = num_heads
            self.scale = 1.0
            self.other = None
            self.more = []

        def forward(self, q, k, v):
            text = """
    def not_a_function():
        pass
    """
            for x in q:
                k = k + x
            return k

        def make(self):
            class Local(AttentionMetadataBuilder):
                _cudagraph_support = AttentionCGSupport.ALWAYS
            z = Local
            w = z
            return w
''')


def facts(source: str, tree: ast.Module) -> object:
    """What the audit reads of the module (its classes and imports)."""
    return module_facts(source, "vllm/x.py", PROFILE, tree)


def test_skim_keeps_lines_and_blanks_unread_bodies() -> None:
    lean = skim(BACKEND, WORDS, KEEP, GUARDED)
    assert lean is not BACKEND
    assert lean.count("\n") == BACKEND.count("\n")
    gone = [line.strip() for line in BACKEND.split("\n") if line.strip()
            and line not in lean.split("\n")]
    # unread bodies went: the helper, the loop of build, FooImpl's plain __init__
    assert "z = y * 2" in gone
    assert "out.append(i)" in gone
    assert "self.scale = 1.0" in gone
    # read ones stayed: the threshold __init__, the helper call, dynamic support, getters
    for kept in ('raise ValueError("too many")', "self._init_reorder_batch_threshold(4)",
                 "return AttentionCGSupport.NEVER", 'return "FOO"', "return FooMetadataBuilder",
                 "+ 2", "_cudagraph_support = AttentionCGSupport.ALWAYS"):
        assert kept not in gone, kept


def test_skimmed_facts_equal_full_facts() -> None:
    full = ast.parse(BACKEND)
    lean = parse_skimmed(BACKEND, "x.py", WORDS, KEEP, GUARDED)
    assert ast.dump(lean) != ast.dump(full)  # it did skim
    assert facts(BACKEND, lean) == facts(BACKEND, full)


@pytest.mark.parametrize("source", [
    # a string that crosses the body's left edge: the body ends early, so it is not skimmed
    'def f():\n    x = """\nleft\n"""\n    y = 1\n    z = 2\n    return x\n'
    "class A:\n    pass\n",
    # a bracket that goes left of the def: skimmed text does not parse, read whole
    "class A:\n    def f(self):\n        x = foo(\n    1)\n        y = 2\n        z = 3\n",
    # a trailing backslash on the body's last line, then more code
    "def f():\n    a = 1\n    b = 2\n    c = 3 + \\\n4\nclass B:\n    pass\n",
])
def test_doubtful_bodies_read_whole(source: str) -> None:
    tree = parse_skimmed(source, "x.py", WORDS, KEEP, GUARDED)
    assert ast.dump(tree) == ast.dump(ast.parse(source))


def test_tab_indented_source() -> None:
    source = ("class A(AttentionMetadataBuilder):\n\t_cudagraph_support = 1\n"
              "\tdef f(self):\n\t\ta = 1\n\t\tb = 2\n\t\treturn a\n\tx = 1\n")
    lean = skim(source, WORDS, KEEP, GUARDED)
    assert "b = 2" not in lean
    assert facts(source, ast.parse(lean)) == facts(source, ast.parse(source))


def test_invalid_source_reports_the_full_text_error() -> None:
    with pytest.raises(SourceError, match="line 2"):
        parse_skimmed("def f():\n  return (\n", "x.py", WORDS, KEEP, GUARDED)
