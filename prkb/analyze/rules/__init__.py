"""Audit rule modules: one per rule a profile can name (``[profile] rules``).

A rule module gives ``findings_for(builder, profile, commit)`` and, for the audit's reading
of each class, ``rule_reading(chain, profile, values)`` -> (True, False or None, the reason
in English[, in Chinese]): whether the class meets the rule (None: the rule does not apply to
it); ``chain`` is the class's MRO as :class:`Link` items, the class first, which the audit
builds; ``values``: the values in force for the class as the state model reads them (by
name, each ``prkb.analyze.state.Tracked.to_json()``: ``value``, ``source``...), so that a
rule about the value in force need not work it out again from the chain. It may also word
the report's generic audit messages its own way (``MESSAGES``, a dict of :class:`Words` by
generic msgid), which the report's catalogs then yield to, and say what the report's key
code notes of its inputs (``INPUTS``, a :class:`RuleInputs`).
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import InputError

if TYPE_CHECKING:
    from ...profile import Profile
    from ..notes import Note
    from ..symbols import ClassFacts


def load_rule(rules: str) -> ModuleType | None:
    """The audit rule module named ``rules`` (a profile's ``[profile] rules``); None for
    ``""``."""
    if not rules:
        return None
    try:
        return importlib.import_module(f"{__name__}.{rules}")
    except ImportError as e:
        raise InputError(f"unknown rule module {rules!r}") from e


@dataclass(frozen=True)
class InputNames:
    """What a code excerpt reads for a rule's inputs: attributes declared in a class body,
    calls made in its methods, and attributes set on ``self`` there."""

    class_attrs: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    instance_attrs: tuple[str, ...] = ()


class RuleInputs(Protocol):
    """What the report's key code says of a rule's inputs (a rule module's ``INPUTS``): notes
    (``excerpt.Note``: a code and values, worded by ``report/sections/key_code.j2``; codes
    ``input-*``) read from a class of a whole file, from the lines a patch shows of it, and
    from the state model's reading stored with its row."""

    def names(self, profile: Profile) -> InputNames: ...

    def anchors(self, node: ast.ClassDef, profile: Profile) -> list[tuple[int, int]]: ...

    def class_notes(self, facts: ClassFacts, profile: Profile) -> list[Note]: ...

    def patch_notes(self, lines: list[str], profile: Profile) -> list[Note]: ...

    def state_notes(self, ex: dict[str, Any], row: dict[str, Any] | None,
                    profile: Profile) -> list[dict[str, Any]]: ...


def rule_inputs(rules: str) -> RuleInputs | None:
    """The inputs the rule module ``rules`` shows in reports (its ``INPUTS``); None for no
    rule, or a rule that shows none."""
    got: RuleInputs | None = getattr(load_rule(rules), "INPUTS", None)
    return got


@dataclass(frozen=True)
class Link:
    """One class of a class's MRO as a rule sees it: its name, its facts (None for a base that
    could not be resolved), its role: ``root`` (one of the profile's ``[audit]
    builder_bases``), ``group`` (a base named in its ``[audit] base_groups``: the classes below
    it form a group a rule may judge apart) or ``builder`` (any other class); and ``groups``,
    the names of the groups a ``group`` class heads."""

    name: str
    facts: ClassFacts | None
    role: str
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class Words:
    """A rule's text for one generic catalog message: English, Chinese and, where a report
    about a commit without a pull request says it otherwise, that text as (English, Chinese).
    Its ``%(name)s`` placeholders are among those of the generic message."""

    en: str
    zh: str
    commit: tuple[str, str] | None = None

    def text(self, lang: str, subject: str = "") -> str:
        if subject == "commit" and self.commit is not None:
            return self.commit[0] if lang == "en" else self.commit[1]
        return self.en if lang == "en" else self.zh
