"""The report's sections, in the order the report shows them.

Each module builds one small frozen dataclass from a PR's :class:`~prkb.render.prfacts.PrFacts`
(``build(f)``): facts only, codes and values, no sentence. Each is worded by its own template,
``templates/report/sections/NAME.j2``; ``templates/report/report.j2`` only orders them. A
section that differs by language is relabelled by its ``localize(section, lang, profile)``.
"""

from __future__ import annotations

# the sections in the report's order: each is its module's name, the name of its template
# and of its dataclass in the report's context
ORDER = ("header", "summary", "motivation", "implementation", "key_files", "key_code",
         "review", "risks", "related")
