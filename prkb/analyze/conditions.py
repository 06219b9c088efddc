"""A change of a conditional declaration, read per condition.

``X if c else Y`` becoming ``X if c or d else Y`` changes the value only where ``d`` holds and
``c`` does not: there it goes from ``Y`` to ``X``; everywhere else it is what it was. This
module reads such a change from the two texts (code in, facts out):

- both sides are one conditional expression whose two branches are plain levels of the profile,
  the same two levels in the same branches (``X`` on the true side), ``X != Y``;
- one test extends the other by operands of ``or`` or of ``and`` (added or dropped), compared as
  syntax trees (formatting, parentheses and line breaks do not count):

  =================  ==========================================  ==============
  after's test       where the value changes                     from -> to
  =================  ==========================================  ==============
  ``c or d``         ``d`` holds and ``c`` does not              ``Y -> X``
  ``c and d``        ``c`` holds and ``d`` does not              ``X -> Y``
  ``c`` (was         ``d`` holds and ``c`` does not              ``X -> Y``
  ``c or d``)
  ``c`` (was         ``c`` holds and ``d`` does not              ``Y -> X``
  ``c and d``)
  =================  ==========================================  ==============

Anything else (other tests, swapped or other levels, nested conditionals) is not read: None.
What is read is the *declared* value; a class whose support method decides at run time may
report another level (the report says so where it knows of such a method).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..profile import Profile


@dataclass(frozen=True)
class Shift:
    """Where a conditional declaration's value changed (code texts) and from which level to
    which; elsewhere it is unchanged."""

    holds: str       # the condition that must hold for the change
    not_holds: str   # and the one that must not (it kept the value as it was)
    before: str      # the level there before
    after: str       # the level there after


def _parse(text: str) -> ast.expr | None:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _level(node: ast.expr, profile: Profile) -> str | None:
    name = node.attr if isinstance(node, ast.Attribute) else (
        node.id if isinstance(node, ast.Name) else None)
    if name is None:
        return None
    level = profile.normalize_level(name)
    return level if level in profile.levels else None


def _branches(text: str, profile: Profile) -> tuple[ast.expr, str, str] | None:
    """(test, level when true, level when false) of ``X if test else Y``; None otherwise."""
    node = _parse(text)
    if not isinstance(node, ast.IfExp):
        return None
    yes, no = _level(node.body, profile), _level(node.orelse, profile)
    if yes is None or no is None or yes == no:
        return None
    return node.test, yes, no


def _operands(node: ast.expr, op: type[ast.boolop]) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, op):
        return list(node.values)
    return [node]


def _extra(small: ast.expr, big: ast.expr, op: type[ast.boolop]) -> list[ast.expr] | None:
    """The operands ``big`` adds to ``small`` under ``op`` (``c`` -> ``c or d``: ``[d]``), in
    ``big``'s order; None when ``big`` is not ``small`` with operands added."""
    if not (isinstance(big, ast.BoolOp) and isinstance(big.op, op)):
        return None
    rest = list(big.values)
    for part in _operands(small, op):
        key = ast.dump(part)
        at = next((i for i, r in enumerate(rest) if ast.dump(r) == key), None)
        if at is None:
            return None
        del rest[at]
    return rest or None


def _text(parts: list[ast.expr], op: type[ast.boolop]) -> str:
    node = parts[0] if len(parts) == 1 else ast.BoolOp(op=op(), values=parts)
    return " ".join(ast.unparse(node).split())


def condition_shift(before: str | None, after: str | None, profile: Profile) -> Shift | None:
    """How ``before`` became ``after`` per condition (the table of the module's docstring),
    or None when the change is not one of those shapes."""
    if not before or not after:
        return None
    old, new = _branches(before, profile), _branches(after, profile)
    if old is None or new is None or old[1:] != new[1:]:
        return None
    (c_old, yes, no), c_new = old, new[0]
    added_or = _extra(c_old, c_new, ast.Or)
    if added_or is not None:
        return Shift(_text(added_or, ast.Or), _text([c_old], ast.Or), no, yes)
    added_and = _extra(c_old, c_new, ast.And)
    if added_and is not None:
        return Shift(_text([c_old], ast.And), _text(added_and, ast.And), yes, no)
    dropped_or = _extra(c_new, c_old, ast.Or)
    if dropped_or is not None:
        return Shift(_text(dropped_or, ast.Or), _text([c_new], ast.Or), yes, no)
    dropped_and = _extra(c_new, c_old, ast.And)
    if dropped_and is not None:
        return Shift(_text([c_new], ast.And), _text(dropped_and, ast.And), no, yes)
    return None
