"""Explained code (prkb.analyze.excerpt) on small synthetic sources and patches of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from prkb.analyze import excerpt as x
from prkb.paths import data_dir
from prkb.profile import Profile, load_profile

P = load_profile()
ATTR = "_cudagraph_support"

BEFORE = '''\
import os


class Helper:
    pass


class DemoBuilder(BaseBuilder):
    _cudagraph_support = Support.UNIFORM_SINGLE_TOKEN_DECODE

    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device
        self.width = 4
        self.height = 8
        self.depth = 16

    def build(self, batch):
        a = 1
        b = 2
        c = 3
        d = 4
        return a + b + c + d
'''

AFTER = '''\
import os


class Helper:
    pass


class DemoBuilder(BaseBuilder):
    _cudagraph_support = Support.UNIFORM_BATCH

    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device
        self.width = 4
        self.height = 8
        self.depth = 16
        self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)

    def build(self, batch):
        a = 1
        b = 2
        c = 3
        d = 4
        return a + b + c + d
'''

PATCH = "\n".join([
    "@@ -7,6 +7,6 @@ class Helper:",
    " ",
    " class DemoBuilder(BaseBuilder):",
    "-    _cudagraph_support = Support.UNIFORM_SINGLE_TOKEN_DECODE",
    "+    _cudagraph_support = Support.UNIFORM_BATCH",
    " ",
    "     def __init__(self, cfg, device):",
    "         self.cfg = cfg",
    "@@ -15,5 +15,6 @@ class DemoBuilder(BaseBuilder):",
    "         self.height = 8",
    "         self.depth = 16",
    "+        self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)",
    " ",
    "     def build(self, batch):",
    "         a = 1",
]) + "\n"


def _numbers(ex: x.Excerpt) -> list[int | None]:
    return [ln.number for b in ex.blocks for ln in b.lines]


def test_changed_lines_of_a_patch() -> None:
    assert x.changed_lines(PATCH) == {9, 17}


def test_from_source_keeps_declaration_and_mechanism_marks_changes() -> None:
    ex = x.excerpt_from_source(AFTER, "pkg/demo.py", "DemoBuilder", ATTR, P,
                               changed=x.changed_lines(PATCH))
    assert ex is not None and ex.source == "blob" and not ex.truncated
    # class line + declaration (8..11), def __init__ (9..13), the call (15..19): lines of
    # build() beyond the window and the Helper class are left out
    assert _numbers(ex) == [8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19]
    assert len(ex.blocks) == 2
    marked = [ln.number for b in ex.blocks for ln in b.lines if ln.changed]
    assert marked == [9, 17]
    assert ex.blocks[0].lines[0].text == "class DemoBuilder(BaseBuilder):"
    assert x.Note("level", {"level": "UNIFORM_BATCH"}) in ex.notes
    call = next(n for n in ex.notes if n.code == "input-call")
    assert call.args == {"call": "_init_reorder_batch_threshold", "threshold": "1",
                         "flag_name": "supports_spec_as_decode", "flag": "True", "meets": "yes"}


def test_from_source_says_when_the_class_sets_no_threshold() -> None:
    ex = x.excerpt_from_source(BEFORE, "pkg/demo.py", "DemoBuilder", ATTR, P)
    assert ex is not None
    assert [n.code for n in ex.notes] == ["level", "input-none"]
    assert not any(ln.changed for b in ex.blocks for ln in b.lines)


def test_query_len_and_inherited_level() -> None:
    src = ("class Child(MLABase):\n"
           "    query_len_support = QueryLen.SINGLE_ONLY\n"
           "    other = 1\n")
    ex = x.excerpt_from_source(src, "f.py", "Child", ATTR, P)
    assert ex is not None
    assert ex.notes[0] == x.Note("level-not-declared")
    assert ex.notes[1].code == "input-declares"
    assert ex.notes[1].args["meets"] == "no" and ex.notes[1].args["value"] == "SINGLE_ONLY"


def test_window_never_exceeds_the_bound() -> None:
    body = "".join(f"        self.v{i} = {i}\n" for i in range(200))
    src = ("class Big(Base):\n    _cudagraph_support = S.ALWAYS\n\n"
           "    def __init__(self):\n" + body +
           "        self.reorder_batch_threshold = 1 + self.num_speculative_tokens\n")
    every = set(range(1, 210))
    ex = x.excerpt_from_source(src, "f.py", "Big", ATTR, P, changed=every)
    assert ex is not None and ex.truncated
    assert ex.line_count == x.MAX_LINES
    assert x.Note("input-sets", {"attr": "reorder_batch_threshold",
                                       "value": "1 + self.num_speculative_tokens", "op": "=",
                                       "where": "method", "meets": "yes"}) in ex.notes


def test_unknown_class_or_bad_source_gives_none() -> None:
    assert x.excerpt_from_source(AFTER, "f.py", "Missing", ATTR, P) is None
    assert x.excerpt_from_source("class (:\n", "f.py", "DemoBuilder", ATTR, P) is None


def test_from_patch_uses_only_the_shown_new_side() -> None:
    ex = x.excerpt_from_patch(PATCH, "pkg/demo.py", "DemoBuilder", ATTR, P)
    assert ex is not None and ex.source == "patch"
    nums = _numbers(ex)
    assert 9 in nums and 17 in nums
    assert all(ln.text != "    _cudagraph_support = Support.UNIFORM_SINGLE_TOKEN_DECODE"
               for b in ex.blocks for ln in b.lines)  # removed lines are not the class now
    assert [ln.number for b in ex.blocks for ln in b.lines if ln.changed] == [9, 17]
    assert len(ex.blocks) == 2  # two hunks: never joined over lines the patch does not show
    assert x.Note("level", {"level": "UNIFORM_BATCH"}) in ex.notes
    call = next(n for n in ex.notes if n.code == "input-call")
    assert call.args["meets"] == "yes"


def test_from_patch_without_mechanism_says_not_shown() -> None:
    patch = ("@@ -1,3 +1,3 @@\n class Other(Base):\n"
             "-    _cudagraph_support = S.ALWAYS\n+    _cudagraph_support = S.NEVER\n")
    ex = x.excerpt_from_patch(patch, "f.py", "Other", ATTR, P)
    assert ex is not None
    assert [n.code for n in ex.notes] == ["level", "input-not-shown"]
    assert ex.notes[0].args == {"level": "NEVER"}
    assert x.excerpt_from_patch(patch, "f.py", "DemoBuilder", ATTR, P) is None


def test_a_configured_flag_position_of_0_is_the_first_argument(tmp_path: Path) -> None:
    """``audit.reorder_flag_position = 0`` reads the call's first argument (it read the
    second: 0 was taken for "not set"); left out, the default position 1."""
    text = (data_dir() / "profiles" / "vllm-cudagraph.toml").read_text("utf-8")
    assert "\nreorder_flag_position = 1 " in text
    f = tmp_path / "first.toml"
    f.write_text(text.replace("\nreorder_flag_position = 1 ", "\nreorder_flag_position = 0 "),
                 encoding="utf-8")
    first = load_profile(str(f))
    assert first.audit["reorder_flag_position"] == 0

    def flag(call: str, profile: Profile) -> tuple[str, str]:
        src = (f"class B(Base):\n    {ATTR} = S.ALWAYS\n\n"
               f"    def __init__(self):\n        self._init_reorder_batch_threshold({call})\n")
        ex = x.excerpt_from_source(src, "f.py", "B", ATTR, profile)
        assert ex is not None
        got = next(n for n in ex.notes if n.code == "input-call").args
        return got["flag"], got["meets"]

    assert flag("True, 1", first) == ("True", "yes")
    assert flag("False, True", first) == ("False", "no")
    # the bundled profile (position 1), and a profile that leaves the key out (the default 1)
    assert flag("1, True", P) == ("True", "yes")
    unset = tmp_path / "unset.toml"  # (a profile is parsed once per path)
    unset.write_text(text.replace("\nreorder_flag_position = 1 ", "\n# "), encoding="utf-8")
    assert flag("1, True", load_profile(str(unset))) == ("True", "yes")


@pytest.mark.parametrize(("line", "flag", "grows"), [
    ("self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)", "True", "yes"),
    ("self._init_reorder_batch_threshold(1, True)", "True", "yes"),  # by position (1)
    ("self._init_reorder_batch_threshold(1, False)  # not yet", "False", "no"),
    ("self._init_reorder_batch_threshold(1)", "False", "no"),  # whole call, flag left out
    ("self._init_reorder_batch_threshold(1, spec)", "spec", "unknown"),
    ("self._init_reorder_batch_threshold(", "", "unknown"),  # the call goes on: not shown
    ("self._init_reorder_batch_threshold(1, **opts)", "", "unknown"),
    ("self._init_reorder_batch_threshold(1, *rest)", "", "unknown"),  # may hold it
])
def test_a_shown_call_passes_the_flag_by_keyword_or_position(line: str, flag: str,
                                                              grows: str) -> None:
    """From the patch alone: a call whole on its line says its flag by keyword or at the
    profile's position (left out: the default, no flag); a call cut at the line's end, or one
    that may pass it in ``*`` or ``**``, says nothing."""
    patch = ("@@ -1,3 +1,4 @@\n class Other(Base):\n     def __init__(self):\n"
             f"+        {line}\n         pass\n")
    ex = x.excerpt_from_patch(patch, "f.py", "Other", ATTR, P)
    assert ex is not None
    call = next(n for n in ex.notes if n.code == "input-call")
    assert (call.args["flag"], call.args["meets"]) == (flag, grows)


def test_the_input_notes_are_the_rule_modules() -> None:
    """The notes on the audit's inputs come from the profile's rule module (its ``INPUTS``):
    the same profile without a rule module shows the class and its level, and no input
    note or input line, from a file and from a patch."""
    import dataclasses

    from prkb.analyze.rules import rule_inputs
    from prkb.analyze.rules.cudagraph import INPUTS

    assert rule_inputs("cudagraph") is INPUTS and rule_inputs("") is None
    bare = dataclasses.replace(P, rules="")
    with_rule = x.excerpt_from_source(AFTER, "pkg/demo.py", "DemoBuilder", ATTR, P)
    without = x.excerpt_from_source(AFTER, "pkg/demo.py", "DemoBuilder", ATTR, bare)
    assert with_rule is not None and without is not None
    assert any(n.code.startswith("input-") for n in with_rule.notes)
    assert [n.code for n in without.notes] == ["level"]
    assert without.line_count < with_rule.line_count  # the reorder call's lines are not shown
    patch = "@@ -1,3 +1,3 @@ class DemoBuilder(BaseBuilder):\n" \
            "+    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n" \
            "     def __init__(self):\n"
    got = x.excerpt_from_patch(patch, "pkg/demo.py", "DemoBuilder", ATTR, P)
    bare_got = x.excerpt_from_patch(patch, "pkg/demo.py", "DemoBuilder", ATTR, bare)
    assert got is not None and bare_got is not None
    assert [n.code for n in got.notes] == ["level", "input-not-shown"]
    assert [n.code for n in bare_got.notes] == ["level"]
