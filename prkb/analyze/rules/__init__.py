"""Audit rule modules: one per rule a profile can name (``[profile] rules``).

A rule module gives ``findings_for(builder, profile, commit)`` and, for the audit's reading
of each class, ``rule_reading(chain, profile)`` -> (True, False or None, the reason in
English[, in Chinese]): whether the class meets the rule (None: the rule does not apply to
it); ``chain`` is the class's MRO as :class:`Link` items, the class first, which the audit
builds. It may also word the report's generic audit messages its own
way (``MESSAGES``, a dict of :class:`Words` by generic msgid), which the report's catalogs
then yield to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..symbols import ClassFacts


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
