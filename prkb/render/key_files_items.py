"""The report's key files, written here, not by the template: each file the report lists,
with its module, category, type, symbols and size of change and what it does, then how many
it leaves out. ``tests/test_key_files_items.py`` holds it to the template it replaced, kept
as ``tests/golden/key_files_before.j2``."""

from __future__ import annotations

from typing import Any

import jinja2

from .i18n import N_
from .section_writer import SectionWriter

NONE_RECOGNISED = N_("none recognised")
WITH_MODULE = N_(" (module %(module)s; category %(category)s; type %(type)s; symbols "
                 "%(symbols)s; +%(add)s/-%(del)s)")
WITHOUT_MODULE = N_(" (category %(category)s; type %(type)s; symbols %(symbols)s; "
                    "+%(add)s/-%(del)s)")
CHANGES_VALUE = N_("changes the declared value")


class KeyFilesItems(SectionWriter):
    """The global ``key_files_items(key_files, profile)`` of a report environment: the key
    files after their heading (without the section's last newline), as the
    environment writes them (Markup under autoescape), when called with ``key_files`` (the
    section's facts) and ``profile`` (the report context's: its ``kind``)."""

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.p, self.end_p, self.ul, self.end_ul, self.li, self.end = self.structure(
            "p", "end_p", "ul", "end_ul", "li", "end")

    def file(self, f: Any, enum: bool) -> str:
        say, code, shown, getitem, labels = (self.say, self.code, self.shown, self.getitem,
                                             self.labels)
        symbols = self.codes(f["symbols"], labels.lsep) if f["symbols"] else \
            say(NONE_RECOGNISED)
        values = {"category": getitem(labels.category, f["category"]),
                  "type": getitem(labels.ftype, f["type"]), "symbols": symbols,
                  "add": f["additions"], "del": f["deletions"]}
        detail = say(WITH_MODULE, module=code(f["module"]), **values) if f["module"] else \
            say(WITHOUT_MODULE, **values)
        role = say(CHANGES_VALUE) if f["role"] == "declaration" and not enum else \
            getitem(labels.role, f["role"])
        return (f"{self.li}{shown(code(f['path']))}{shown(detail)}{self.colon}{shown(role)}"
                f"{self.end}\n")

    def __call__(self, key_files: Any, profile: Any) -> str:
        shown, files, more = self.shown, key_files.files, key_files.more
        parts: list[str] = []
        if not files:
            parts.append(f"{self.p}{shown(self.labels.no_files)}{self.end_p}\n")
        if files or more:
            enum = profile["kind"] == "enum"
            parts.append(f"{self.ul}\n")
            parts.extend(self.file(f, enum) for f in files)
            if more:
                left = self.labels.files_left(self.ctx, more)
                parts.append(f"{self.li}{shown(left)}{self.end}\n")
            parts.append(f"{self.end_ul}\n")
        return self.made("".join(parts))
