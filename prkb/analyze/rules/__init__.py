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

import importlib
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import InputError

if TYPE_CHECKING:
    import ast
    from collections.abc import Sequence

    from ...profile import Profile
    from ..hierarchy import ClassRef, Hierarchy
    from ..notes import Note
    from ..state import Tracked
    from ..symbols import ClassFacts


@lru_cache(maxsize=16)
def load_rule(rules: str) -> ModuleType | None:
    """The audit rule module named ``rules`` (a profile's ``[profile] rules``); None for
    ``""``. Looked up once per name: the audit asks for it per class and per file."""
    if not rules:
        return None
    try:
        return importlib.import_module(f"{__name__}.{rules}")
    except ImportError as e:
        raise InputError(f"unknown rule module {rules!r}") from e


@dataclass(frozen=True)
class InputNames:
    """The names of a rule's inputs in the code: attributes declared in a class body
    (``class_attrs``), calls made in its methods (``calls``), and attributes set on ``self``
    there (``instance_attrs``); ``related``: the calls and attributes whose lines a report
    shows as related code; ``watched``: every name of the inputs, in the order a collector's
    note lists them (the git collector keeps a commit that changes one in a file with a
    finding)."""

    class_attrs: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    instance_attrs: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    watched: tuple[str, ...] = ()


class RuleInputs(Protocol):
    """A rule's inputs (a rule module's ``INPUTS``): what the audit reads of each class
    besides the profile's value (``audit_names``) and the values in force the state model
    tracks of them (``tracked``, by name, after the profile's own value); and what the
    report's key code says of them: the names an excerpt reads and the lines it shows, and
    notes (``notes.Note``: a code and values, worded by ``report/sections/key_code.j2``; codes
    ``input-*``) read from a class of a whole file, from the lines a patch shows of it, and
    from the state model's reading stored with its row."""

    def audit_names(self, profile: Profile) -> InputNames: ...

    def tracked(self, hier: Hierarchy, ref: ClassRef, mro: Sequence[ClassRef],
                roots: set[str], profile: Profile) -> dict[str, Tracked]: ...

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
