"""A conditional declaration's change read per condition (prkb.analyze.conditions)."""

from __future__ import annotations

import pytest

from prkb.analyze.conditions import Shift, condition_shift
from prkb.profile import load_profile

P = load_profile()
E = "AttentionCGSupport"


def cond(test: str, yes: str = "ALWAYS", no: str = "UNIFORM_BATCH") -> str:
    return f"{E}.{yes} if {test} else {E}.{no}"


@pytest.mark.parametrize(
    ("before", "after", "want"),
    [
        # vLLM #43043: the test gained "or current_platform.is_xpu()"
        (cond("get_flash_attn_version() == 3"),
         cond("get_flash_attn_version() == 3 or current_platform.is_xpu()"),
         Shift("current_platform.is_xpu()", "get_flash_attn_version() == 3",
               "UNIFORM_BATCH", "ALWAYS")),
        # the same, undone: the operand dropped from the "or"
        (cond("v == 3 or is_xpu()"), cond("v == 3"),
         Shift("is_xpu()", "v == 3", "ALWAYS", "UNIFORM_BATCH")),
        # "and" narrows the true side: where v == 3 and not fa3_ok(), X -> Y
        (cond("v == 3"), cond("v == 3 and fa3_ok()"),
         Shift("v == 3", "fa3_ok()", "ALWAYS", "UNIFORM_BATCH")),
        # an operand dropped from an "and" widens it again
        (cond("v == 3 and fa3_ok()"), cond("v == 3"),
         Shift("v == 3", "fa3_ok()", "UNIFORM_BATCH", "ALWAYS")),
        # several operands added, the old "or" kept inside the new one; formatting ignored
        (cond("(a or b)"), cond("a   or b or (c and d) or e()"),
         Shift("c and d or e()", "a or b", "UNIFORM_BATCH", "ALWAYS")),
        # plain level names, the other level on the true side
        ("NEVER if x else UNIFORM_BATCH", "NEVER if x or y else UNIFORM_BATCH",
         Shift("y", "x", "UNIFORM_BATCH", "NEVER")),
    ],
)
def test_a_test_that_gained_or_lost_an_operand_is_read_where_it_changed(before, after, want):
    assert condition_shift(before, after, P) == want


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (cond("v == 3"), cond("v == 2")),                      # another test
        (cond("v == 3"), cond("v == 3", "UNIFORM_BATCH", "ALWAYS")),  # branches swapped
        (cond("v == 3"), cond("v == 3 or x", "ALWAYS", "NEVER")),     # another level
        (cond("v == 3"), cond("v == 3 or x", "ALWAYS", "ALWAYS")),    # one level both ways
        (cond("v == 3"), f"{E}.ALWAYS"),                      # no longer conditional
        (cond("v == 3"), cond("v == 3") + " if y else " + f"{E}.NEVER"),  # nested
        (cond("v == 3"), cond("(v == 3) | x")),                # a bitwise "or" is no BoolOp
        (cond("v == 3"), cond("v == 3")),                      # nothing changed
        (cond("v == 3 or x"), cond("v == 3 and x")),           # another operator
        (f"{E}.ALWAYS if v == 3 else compute()", f"{E}.ALWAYS if v == 3 or x else compute()"),
        ("not python (", cond("v == 3")),
        (None, cond("v == 3")),
    ],
)
def test_other_changes_are_not_read(before, after):
    assert condition_shift(before, after, P) is None
