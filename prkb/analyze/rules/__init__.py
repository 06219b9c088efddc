"""Audit rule modules: one per rule a profile can name (``[profile] rules``).

A rule module gives ``findings_for(builder, profile, commit)`` and the readings the audit
stores; it may also word the report's generic audit messages its own way (``MESSAGES``, a
dict of :class:`Words` by generic msgid), which the report's catalogs then yield to.
"""

from __future__ import annotations

from dataclasses import dataclass


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
