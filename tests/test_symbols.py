"""Declarations read with ast, and from patches, for the vllm-cudagraph profile."""

from __future__ import annotations

import pytest

from prkb.analyze.diff import changes_from_patch, trim_patch
from prkb.analyze.symbols import SourceError, diff_declarations, parse_classes
from prkb.profile import load_profile

P = load_profile()


def test_family_matching_is_on_whole_identifiers():
    assert P.family_regex.search("x.attn_cudagraph_support").group(0) == "attn_cudagraph_support"
    assert P.family_regex.search("self._cudagraph_support = 1").group(0) == "_cudagraph_support"
    assert P.family_regex.search("cls.get_cudagraph_support()") is None
    assert P.family_regex.search("my_cudagraph_support_flag") is None
    assert P.watch_regex.search("def get_cudagraph_support(cls):")


def test_values_are_levels_or_expressions():
    src = """
class A(Base):
    attn_cudagraph_support = AttentionCGSupport.PURE_DECODE_ONLY
class B:
    full_cudagraph_supported: ClassVar[bool] = True
class C:
    _cudagraph_support = (AttentionCGSupport.ALWAYS if v3 else AttentionCGSupport.UNIFORM_BATCH)
class D:
    _cudagraph_support = AttentionCGSupport.NEVER
    _cudagraph_support |= extra
class E:
    a, _cudagraph_support = 1, AttentionCGSupport.UNIFORM_BATCH
class F:
    if flag:
        cudagraph_support = AttentionCGSupport.ALWAYS
    else:
        cudagraph_support = AttentionCGSupport.NEVER
def factory():
    class G:
        _cudagraph_support = AttentionCGSupport.ALWAYS
    return G
"""
    classes = parse_classes(src, P)
    assert classes["A"].values == {"attn_cudagraph_support": "UNIFORM_SINGLE_TOKEN_DECODE"}
    assert classes["B"].values == {"full_cudagraph_supported": "True"}
    assert classes["C"].values["_cudagraph_support"] == (
        "AttentionCGSupport.ALWAYS if v3 else AttentionCGSupport.UNIFORM_BATCH"
    )
    assert classes["D"].values["_cudagraph_support"] == "NEVER | extra"
    assert classes["E"].values["_cudagraph_support"] == "UNIFORM_BATCH"
    assert classes["F"].values["cudagraph_support"] == "ALWAYS if flag else NEVER"
    assert classes["factory.<locals>.G"].values["_cudagraph_support"] == "ALWAYS"
    assert classes["A"].bases == ["Base"]


def test_invalid_python_is_a_source_error():
    with pytest.raises(SourceError, match="not valid Python at line 1"):
        parse_classes("print 'python 2'\n", P)


def test_diff_directions_and_renames():
    before = parse_classes(
        "class A:\n    cudagraph_support = X.UNIFORM_BATCH\n"
        "class B:\n    _cudagraph_support = X.ALWAYS\n"
        "class C:\n    _cudagraph_support = X.NEVER\n",
        P,
    )
    after = parse_classes(
        "class A:\n    _cudagraph_support = X.UNIFORM_BATCH\n"
        "class B:\n    _cudagraph_support = X.UNIFORM_SINGLE_TOKEN_DECODE\n"
        "class C:\n    pass\n"
        "class D:\n    _cudagraph_support = X.NEVER\n"
        "    @classmethod\n    def get_cudagraph_support(cls):\n        return X.ALWAYS\n",
        P,
    )
    got = {(c.class_name, c.attr, c.direction) for c in diff_declarations("f.py", before, after, P)}
    assert got == {
        ("A", "_cudagraph_support", "renamed"),
        ("B", "_cudagraph_support", "lowered"),
        ("C", "_cudagraph_support", "removed"),
        ("D", "_cudagraph_support", "added"),
        ("D", "get_cudagraph_support", "dynamic-added"),
    }


def test_changes_from_patch_reads_multiline_values_and_class_context():
    patch = (
        "@@ -349,3 +349,1 @@ class ROCMAiterMLASparseMetadataBuilder(\n"
        "-    _cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
        "-        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        "-    )\n"
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH\n"
    )
    (c,) = changes_from_patch("x.py", patch, P)
    assert (c.class_name, c.before, c.after, c.direction) == (
        "ROCMAiterMLASparseMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
        "raised",
    )
    # an attribute that merely contains the text is not a declaration
    assert changes_from_patch(
        "y.py",
        "@@ -1,1 +1,1 @@ class A:\n-    attn_x = 1\n+    x.attn_cudagraph_support_extra = 2\n",
        P,
    ) == []


def test_trim_keeps_only_symbol_lines_and_their_class():
    patch = (
        "@@ -1,6 +1,6 @@ import os\n"
        " import sys\n"
        "-class Old(Base):\n"
        "+class New(Base):\n"
        "     other = 1\n"
        "-    _cudagraph_support = X.NEVER\n"
        "+    _cudagraph_support = X.ALWAYS\n"
        "+    secret_business_logic = compute()\n"
    )
    trimmed = trim_patch(patch, P)
    assert trimmed.splitlines() == [
        "@@ -1,6 +1,6 @@ import os",
        "+class New(Base):",
        "-    _cudagraph_support = X.NEVER",
        "+    _cudagraph_support = X.ALWAYS",
    ]
