"""A note on shown code: a fact for a template (a code and its values), never a sentence.

The code excerpt (:mod:`.excerpt`) and an audit rule's inputs (:class:`.rules.RuleInputs`)
both make them; the report's key code template words each code."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Note:
    code: str
    args: dict[str, str] = field(default_factory=dict)
