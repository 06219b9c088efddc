"""Declarations read with ast, and from patches, for the vllm-cudagraph profile."""

from __future__ import annotations

import pytest

from prkb.analyze.diff import changes_from_patch, read_patch, trim_patch
from prkb.analyze.excerpt import excerpt_from_patch
from prkb.analyze.symbols import SourceError, diff_declarations, parse_classes, support_text
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


def test_changes_from_patch_reads_a_value_changed_on_continuation_lines():
    head = "@@ -52,6 +52,6 @@ class ToyMetadataBuilder(AttentionMetadataBuilder):\n"
    # the declaration's first line is unchanged context; only its value's line changes
    (c,) = changes_from_patch("x.py", head + (
        "     _cudagraph_support = (\n"
        "-        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        "+        AttentionCGSupport.UNIFORM_BATCH\n"
        "     )\n"
        " \n"), P)
    assert (c.class_name, c.attr, c.before, c.after, c.direction) == (
        "ToyMetadataBuilder", "_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
        "UNIFORM_BATCH", "raised")
    # first and continuation lines both rewritten: each side reads past the other side's
    # lines (this read "( AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE", "changed")
    (c,) = changes_from_patch("x.py", head + (
        "-    _cudagraph_support = (\n"
        "-        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
        "+        AttentionCGSupport.UNIFORM_BATCH\n"
        "     )\n"), P)
    assert (c.before, c.after, c.direction) == (
        "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "raised")
    # a backslash continues the value as brackets do (an added one read "\\" before)
    (c,) = changes_from_patch("x.py", head + (
        "     _cudagraph_support: ClassVar[AttentionCGSupport] = \\\n"
        "-        AttentionCGSupport.UNIFORM_BATCH\n"
        "+        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        " \n"), P)
    assert (c.before, c.after, c.direction) == (
        "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")
    (c,) = changes_from_patch("x.py", head + (
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = \\\n"
        "+        AttentionCGSupport.UNIFORM_BATCH\n"
        " \n"), P)
    assert (c.before, c.after, c.direction) == (None, "UNIFORM_BATCH", "added")
    # a comment on the first line, brackets in it included, ends at its line
    (c,) = changes_from_patch("x.py", head + (
        "     _cudagraph_support = (  # see (the runner\n"
        "-        AttentionCGSupport.NEVER\n"
        "+        AttentionCGSupport.ALWAYS\n"
        "     )\n"), P)
    assert (c.before, c.after, c.direction) == ("NEVER", "ALWAYS", "raised")
    # unchanged value, a change after it: nothing
    assert changes_from_patch("x.py", head + (
        "     _cudagraph_support = (\n"
        "         AttentionCGSupport.UNIFORM_BATCH\n"
        "     )\n"
        "+    # a comment\n"), P) == []
    # the hunk ends before the value closes: the patch cannot tell the value, and the next
    # hunk's lines are not read as its continuation
    assert changes_from_patch("x.py", head + (
        "     _cudagraph_support = (\n"
        "         AttentionCGSupport.ALWAYS\n"
        "-        if flag_a\n"
        "+        if flag_b\n"
        "@@ -90,3 +90,3 @@ class ToyMetadataBuilder(AttentionMetadataBuilder):\n"
        "         else AttentionCGSupport.NEVER\n"
        "     )\n"
        "-    x = 1\n"
        "+    x = 2\n"), P) == []
    # a continuation line whose declaration starts above the hunk: nothing
    assert changes_from_patch("x.py", head + (
        "         if flag_a\n"
        "-        else AttentionCGSupport.NEVER\n"
        "+        else AttentionCGSupport.ALWAYS\n"
        "     )\n"), P) == []


def test_read_patch_says_when_only_whole_files_can_tell():
    head = "@@ -52,6 +52,6 @@ class ToyMetadataBuilder(AttentionMetadataBuilder):\n"
    explained = {
        "continuation read whole": (
            "     _cudagraph_support = (\n"
            "-        AttentionCGSupport.NEVER\n"
            "+        AttentionCGSupport.ALWAYS\n"
            "     )\n"),
        "one-line declaration": (
            "-    _cudagraph_support = AttentionCGSupport.NEVER\n"
            "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n"),
        "an added override with its body": (
            "+    @classmethod\n"
            "+    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):\n"
            "+        if vllm_config.flag:\n"
            "+            return AttentionCGSupport.NEVER\n"
            "+        return AttentionCGSupport.UNIFORM_BATCH\n"
            " \n"),
        "a comment": "+    # AttentionCGSupport.ALWAYS would need more\n",
        "no matched line": "+    x = 1\n",
    }
    unexplained = {
        "declaration above the hunk": (
            "         if flag\n"
            "-        else AttentionCGSupport.NEVER\n"
            "+        else AttentionCGSupport.ALWAYS\n"
            "     )\n"),
        "value cut off by the hunk's end": (
            "-    _cudagraph_support = (\n"
            "+    _cudagraph_support: ClassVar[AttentionCGSupport] = (\n"
            "         AttentionCGSupport.ALWAYS\n"
            "         if flag\n"),
        "an override's body": (
            "         if vllm_config.flag:\n"
            "-            return AttentionCGSupport.NEVER\n"
            "+            return AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
            "         return cls._cudagraph_support\n"),
        "a use of the levels": "+        if level >= AttentionCGSupport.UNIFORM_BATCH:\n",
    }
    got = {name: read_patch("x.py", head + body, P)[1] for name, body in
           {**explained, **unexplained}.items()}
    assert got == {**dict.fromkeys(explained, False), **dict.fromkeys(unexplained, True)}
    # a class the hunk does not name (defined in a function): nothing read, so unexplained
    nested = ("@@ -10,4 +10,4 @@ def make_backend(base):\n"
              "     class Builder(base):\n"
              "-        _cudagraph_support = AttentionCGSupport.NEVER\n"
              "+        _cudagraph_support = AttentionCGSupport.ALWAYS\n")
    assert read_patch("x.py", nested, P) == ([], True)


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
    # each run of kept lines under a header of its own, numbered as in the file: the class
    # line is new line 2; the declaration old line 4 and new line 4 (line 3 is not kept)
    assert trimmed.splitlines() == [
        "@@ -2,0 +2,1 @@ import os",
        "+class New(Base):",
        "@@ -4,1 +4,1 @@ class New(Base):",
        "-    _cudagraph_support = X.NEVER",
        "+    _cudagraph_support = X.ALWAYS",
    ]


def _numbered(patch: str) -> list[tuple[int, int, str]]:
    """(old number, new number, line) of each +/-/context line, read from the headers."""
    rows, old, new = [], 0, 0
    for raw in patch.split("\n"):
        if raw.startswith("@@"):
            o, n = raw.split()[1:3]
            old, new = int(o[1:].split(",")[0]), int(n[1:].split(",")[0])
            old += o.endswith(",0")  # an empty side names the line before the hunk
            new += n.endswith(",0")
            continue
        if raw[:1] in ("+", "-", " "):
            rows.append((old, new, raw))
            old += raw[:1] != "+"
            new += raw[:1] != "-"
    return rows


def test_trimmed_lines_keep_their_line_numbers():
    # the shape of vLLM #25104 (rocm_aiter_fa.py): a class statement over two lines, its
    # declaration under it; the key code numbers the lines it shows from the trimmed patch
    patch = (
        "@@ -232,7 +232,7 @@ class AiterFlashAttentionMetadata:\n"
        " \n"
        " class AiterFlashAttentionMetadataBuilder(\n"
        "         AttentionMetadataBuilder[AiterFlashAttentionMetadata]):\n"
        "-    cudagraph_support = AttentionCGSupport.ALWAYS\n"
        "+    cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
        " \n"
        "     def __init__(self, kv_cache_spec: AttentionSpec, layer_names: list[str],\n"
        "@@ -300,4 +300,6 @@ class AiterFlashAttentionMetadataBuilder(\n"
        "     x = 1\n"
        "+    y = 2\n"
        "+    _cudagraph_support = AttentionCGSupport.NEVER\n"
        "     z = 3\n"
        "-    cudagraph_support = 4\n"
        "+    w = 5\n"
    )
    full = {raw: (o, n) for o, n, raw in _numbered(patch)}
    trimmed = trim_patch(patch, P)
    kept = _numbered(trimmed)
    assert [raw for _, _, raw in kept] == [
        " class AiterFlashAttentionMetadataBuilder(",
        "-    cudagraph_support = AttentionCGSupport.ALWAYS",
        "+    cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE",
        "+    _cudagraph_support = AttentionCGSupport.NEVER",
        "-    cudagraph_support = 4",
    ]
    for o, n, raw in kept:
        assert (o, n) == full[raw], raw
    assert trimmed.splitlines()[0] == "@@ -233,1 +233,1 @@ class AiterFlashAttentionMetadata:"
    # a new file: the old side is empty and starts at 0, as git writes it
    new_file = ("@@ -0,0 +1,3 @@\n+import x\n+class NewBuilder(Base):\n"
                "+    _cudagraph_support = X.ALWAYS\n")
    assert trim_patch(new_file, P).splitlines() == [
        "@@ -0,0 +2,2 @@", "+class NewBuilder(Base):", "+    _cudagraph_support = X.ALWAYS"]
    # the excerpt shows the class line and the declaration at their own numbers, apart
    ex = excerpt_from_patch(trimmed, "a.py", "AiterFlashAttentionMetadataBuilder",
                            "cudagraph_support", P)
    assert ex is not None
    assert [[ln.number for ln in b.lines] for b in ex.blocks][:2] == [[233], [235]]


# --- what an overriding get_cudagraph_support can return -------------------------------------

METHOD_SHAPES = {
    "single": ("return AttentionCGSupport.UNIFORM_BATCH", "UNIFORM_BATCH"),
    "if_else": (
        "if cfg.trt:\n    return AttentionCGSupport.UNIFORM_BATCH\n"
        "else:\n    return AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE",
        "UNIFORM_BATCH if cfg.trt; else UNIFORM_SINGLE_TOKEN_DECODE",
    ),
    "early": (
        "if cfg.enc_dec and version() == 2:\n    log('off')\n    return AttentionCGSupport.NEVER\n"
        "return cls._cudagraph_support",
        "NEVER if cfg.enc_dec and version() == 2; else cls._cudagraph_support",
    ),
    "nested": (
        "if cfg.a:\n    if cfg.b == 1:\n        return AttentionCGSupport.ALWAYS\n"
        "    return AttentionCGSupport.UNIFORM_BATCH\nreturn AttentionCGSupport.NEVER",
        "ALWAYS if cfg.a and cfg.b == 1; UNIFORM_BATCH if cfg.a and cfg.b != 1; else NEVER",
    ),
    "class_attr": ("del cfg\nreturn cls._cudagraph_support", "cls._cudagraph_support"),
    "super": (
        "if cfg.local:\n    return AttentionCGSupport.NEVER\n"
        "return super().get_cudagraph_support(cfg)",
        "NEVER if cfg.local; else super().get_cudagraph_support(cfg)",
    ),
    "ifexp": (
        "return AttentionCGSupport.UNIFORM_BATCH if cfg.trt else cls.cudagraph_support",
        "UNIFORM_BATCH if cfg.trt; else cls.cudagraph_support",
    ),
    "raise": (
        "if cfg.bad:\n    raise ValueError(cfg)\nreturn AttentionCGSupport.ALWAYS",
        "ALWAYS if not cfg.bad",
    ),
}


def _with_method(body: str) -> str:
    inner = "\n".join("        " + ln for ln in body.splitlines())
    return (
        "class Dyn(Base):\n"
        "    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n\n"
        "    @classmethod\n"
        f"    def get_cudagraph_support(cls, cfg):\n{inner}\n"
    )


@pytest.mark.parametrize("shape", sorted(METHOD_SHAPES))
def test_override_returns_are_read_with_their_conditions(shape):
    body, text = METHOD_SHAPES[shape]
    facts = parse_classes(_with_method(body), P)["Dyn"]
    returns = facts.support["get_cudagraph_support"]
    assert support_text(returns) == text
    (change,) = diff_declarations("f.py", {}, {"Dyn": facts}, P)[-1:]
    assert (change.attr, change.before, change.after, change.direction) == (
        "get_cudagraph_support", None, text, "dynamic-added"
    )


def test_override_return_kinds():
    kinds = {
        shape: [(r.kind, r.when, r.otherwise) for r in parse_classes(
            _with_method(body), P)["Dyn"].support["get_cudagraph_support"]]
        for shape, (body, _) in METHOD_SHAPES.items()
    }
    assert kinds["single"] == [("level", (), False)]
    assert kinds["early"] == [
        ("level", ("cfg.enc_dec and version() == 2",), False),
        ("declared", ("not (cfg.enc_dec and version() == 2)",), True),
    ]
    assert kinds["nested"] == [
        ("level", ("cfg.a", "cfg.b == 1"), False),
        ("level", ("cfg.a", "cfg.b != 1"), False),
        ("level", ("not cfg.a",), True),
    ]
    assert kinds["super"][1] == ("super", ("not cfg.local",), True)
    assert kinds["ifexp"] == [("level", ("cfg.trt",), False),
                              ("declared", ("not cfg.trt",), True)]


def test_override_changes_are_dynamic_changed_with_both_texts():
    before = parse_classes(_with_method(METHOD_SHAPES["single"][0]), P)
    after = parse_classes(_with_method(METHOD_SHAPES["if_else"][0]), P)
    (c,) = diff_declarations("f.py", before, after, P)
    assert (c.attr, c.before, c.after, c.direction) == (
        "get_cudagraph_support", "UNIFORM_BATCH",
        "UNIFORM_BATCH if cfg.trt; else UNIFORM_SINGLE_TOKEN_DECODE", "dynamic-changed",
    )
    # a reformatted body with the same returns and conditions is no change
    same = parse_classes(_with_method(
        "if (cfg.trt):\n    return (AttentionCGSupport.UNIFORM_BATCH)\n"
        "return AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE"
    ), P)
    assert diff_declarations("f.py", after, same, P) == []
    static = (
        "class Dyn(Base):\n"
        "    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    )
    (gone,) = diff_declarations("f.py", after, parse_classes(static, P), P)
    assert (gone.before, gone.after, gone.direction) == (
        "UNIFORM_BATCH if cfg.trt; else UNIFORM_SINGLE_TOKEN_DECODE", None, "dynamic-removed"
    )


def test_threshold_settings_of_init_are_recorded_in_order():
    src = (
        "class B(Base):\n"
        "    reorder_batch_threshold: ClassVar[int] = 1\n"
        "    spec_ok = False\n\n"
        "    def __init__(self, cfg):\n"
        "        super().__init__(cfg)\n"
        "        start = 1\n"
        "        if cfg.big:\n"
        "            start = 64\n"
        "        self._init_reorder_batch_threshold(start, supports_spec_as_decode=self.spec_ok)\n"
        "        self.reorder_batch_threshold += self.num_speculative_tokens\n"
        "        if cfg.dcp:\n"
        "            self.reorder_batch_threshold = 1\n\n"
        "    def later(self):\n"
        "        self._init_reorder_batch_threshold(2)\n"
    )
    facts = parse_classes(src, P, extra_attrs=("reorder_batch_threshold",),
                          calls=("_init_reorder_batch_threshold",),
                          instance_attrs=("reorder_batch_threshold",))["B"]
    assert facts.values["reorder_batch_threshold"] == "1"
    assert facts.consts == {"reorder_batch_threshold": "1", "spec_ok": "False"}
    assert facts.init_calls_super is True
    got = [(t.kind, t.value, t.op, t.conditional) for t in facts.sets]
    assert got == [
        ("call", "start", None, False),
        ("augassign", "self.num_speculative_tokens", "+", False),
        ("assign", "1", None, True),
        ("call", "2", None, False),
    ]
    call = facts.sets[0]
    assert call.call is not None
    assert call.call.keywords == {"supports_spec_as_decode": "self.spec_ok"}
    assert dict(call.bound) == {"start": "(64) if __if__ else (1)"}
