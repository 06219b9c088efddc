"""The digest's new relations, each as one list item written here, not by its template.

At 10,000 PRs a week's digest lists about 260 relations; in ``digest/section.j2`` each item
took a macro call for its sentence (``report/_relations.j2`` ``between``, gone) and a dozen
template expressions. :class:`RelationItems` writes the same text from the same catalog
messages (marked here with ``N_``), through the environment's own ``_`` (both digest
environments' are plain calls), its ``label`` filter, its markup and labels, and the
relation's evidence through the environment's evidence lines (worded once per build,
``render.evidence_lines``). ``tests/test_digest_relations.py`` holds it to the template it
replaced (``tests/golden/digest_relations_before.j2``) in text and HTML, in both languages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jinja2

from ..render.i18n import N_
from ..render.related_items import INFERRED
from ..render.section_writer import SectionWriter

SECTION = "digest/section.j2"

# A relation as one sentence naming both of its PRs: one catalog message per relation type,
# so that no sentence is made of fragments joined in an order that only fits one language
# (a relation seen from one of its PRs, "this PR", is render/related_items.py's SEEN_FROM)
BETWEEN: dict[str, str] = {
    "fixes-regression-from": N_("%(source)s fixes a regression from %(target)s"),
    "attempts-fix-of": N_("%(source)s tried to fix a regression from %(target)s"),
    "follow-up-of": N_("%(source)s follows up %(target)s"),
    "modifies-declaration-of": N_("%(source)s modifies a declaration last set by %(target)s"),
    "depends-on": N_("%(source)s depends on %(target)s"),
    "supersedes": N_("%(source)s supersedes %(target)s"),
    "alternative-to": N_("%(source)s is an alternative to %(target)s"),
    "reverts": N_("%(source)s reverts %(target)s"),
    "mentions": N_("%(source)s mentions %(target)s"),
}
# a type without a sentence of its own: its glossary label between the two ends
ANY_TYPE = N_("%(source)s %(rel)s %(target)s")


class RelationItems(SectionWriter):
    """The global ``relation_items(relations, node)`` of a digest environment: the items of
    its "new relations" list, each with its evidence, as the environment writes them
    (Markup under autoescape). ``relations``: the digest's ``RelationItem``s; ``node``: how
    the digest names a graph node (a link or text, made for this output)."""

    TEMPLATE = SECTION  # the section's autoescape

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.li, self.ul, self.end_ul, self.end_li = self.structure("li", "ul", "end_ul",
                                                                    "end_li")
        # the evidence lines as the template called them: the items' markup as it is
        self.li2, self.item_end = self.markup.li2, self.markup.end_li
        self.evidence = self.evidence_lines(env)

    def sentence(self, type_: str, source: Any, target: Any, inferred: bool) -> Any:
        """The relation as one sentence naming both ends (already made for the output)."""
        say = self.say
        said = BETWEEN.get(type_)
        s = (say(said, source=source, target=target) if said is not None
             else say(ANY_TYPE, source=source, rel=self.label(type_, "relations"),
                      target=target))
        return say(INFERRED, relation=s) if inferred else s

    def __call__(self, relations: Iterable[Any], node: Callable[[str], Any]) -> str:
        shown, li, end_li = self.shown, self.li, self.end_li
        parts: list[str] = []
        add = parts.append
        for r in relations:
            said = shown(self.sentence(r.type, node(r.source), node(r.target), r.inferred))
            if r.evidence:
                lines = self.evidence(r.evidence, self.li2, self.item_end)
                add(f"{li}{said}{self.colon}{self.ul}\n{lines}{self.end_ul}{end_li}\n")
            else:
                add(f"{li}{said}{end_li}\n")
        return self.made("".join(parts))
