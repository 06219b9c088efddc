"""The report's related PRs, each as one list item written here, not by the template.

A PR page lists five or so relations; in ``report/sections/related.j2`` each item took a
macro call for its sentence and some twenty template expressions (about 60,000 instructions
an item, a sixth of a PR page's report). :class:`RelatedItems` writes the same text from the
same catalog messages, filters, formatter and labels as the template did, in one call.

Every sentence is still one catalog message (marked here with ``N_``, so the catalog's
extraction finds it), looked up through the environment's own ``_`` (its language, and the
wording of a report about a commit or of a profile's audit rule). The relation's evidence is
the report's ``report/_evidence.j2``, worded once per build (:mod:`.evidence_lines`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jinja2

from .formats import related_ref
from .i18n import N_
from .section_writer import SectionWriter

# A relation as one sentence, seen from one PR: one message per type and direction, so that
# no sentence is made of fragments joined in an order that only fits one language. The
# first is said when this PR is the relation's source ("out"), the second when it is the
# target.
SEEN_FROM: dict[str, tuple[str, str]] = {
    "fixes-regression-from": (N_("This PR fixes a regression from %(other)s"),
                              N_("%(other)s fixes a regression from this PR")),
    "attempts-fix-of": (N_("This PR tried to fix a regression from %(other)s"),
                        N_("%(other)s tried to fix a regression from this PR")),
    "follow-up-of": (N_("This PR follows up %(other)s"), N_("%(other)s follows up this PR")),
    "modifies-declaration-of": (N_("This PR modifies a declaration last set by %(other)s"),
                                N_("%(other)s modifies a declaration last set by this PR")),
    "depends-on": (N_("This PR depends on %(other)s"), N_("%(other)s depends on this PR")),
    "supersedes": (N_("This PR supersedes %(other)s"), N_("%(other)s supersedes this PR")),
    "alternative-to": (N_("This PR is an alternative to %(other)s"),
                       N_("%(other)s is an alternative to this PR")),
    "reverts": (N_("This PR reverts %(other)s"), N_("%(other)s reverts this PR")),
    "mentions": (N_("This PR mentions %(other)s"), N_("%(other)s mentions this PR")),
}
# a type without a sentence of its own: its glossary label between the two ends
ANY_TYPE = (N_("This PR %(rel)s %(other)s"), N_("%(other)s %(rel)s this PR"))
# a relation that comes only from code lineage or a heuristic (graph.relations.is_inferred)
INFERRED = N_("%(relation)s (inferred)")
CONFIDENCE = N_(" (confidence %(conf)s, %(origin)s)")
COMMIT = N_("commit %(sha)s")  # the other end is a commit without a PR


class RelatedItems(SectionWriter):
    """The global ``related_items(relations, pr_links)`` of a report environment (also its
    ``label`` filter and ``sentences`` set): the items of the related PRs' list, each with
    its evidence, as the environment writes them (Markup under autoescape). ``pr_links``:
    the pages of the other PRs by graph node key (the site's); a PR that has one is a link
    to it."""

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.evidence = self.evidence_lines(env)
        markup = self.markup
        self.li, self.ul, self.end_ul, self.end_li = self.structure("li", "ul", "end_ul",
                                                                    "end_li")
        self.li2, self.end = markup.li2, markup.end  # the evidence macro's, as the template's
        # an item without evidence ends its line and leaves a blank one
        self.no_evidence = self.after_tag("end", "\n\n")
        self.lp, self.lq, self.rq, self.rp = self.punctuation("lp", "lq", "rq", "rp")
        self.origins: Mapping[str, Any] = self.labels.origin
        self.pr_link = markup.pr_link

    def commit(self, sha: str) -> Any:
        """A commit at the other end, in the report's language."""
        return self.say(COMMIT, sha=self.code(sha))

    def sentence(self, type_: str, out: bool, other: Any, inferred: bool) -> Any:
        say = self.say
        said = SEEN_FROM.get(type_)
        if said is None:
            s = say(ANY_TYPE[0 if out else 1], rel=self.label(type_, "relations"), other=other)
        else:
            s = say(said[0 if out else 1], other=other)
        return say(INFERRED, relation=s) if inferred else s

    def __call__(self, relations: Iterable[Mapping[str, Any]],
                 pr_links: Mapping[str, str] | None) -> str:
        shown, say, text, code = self.shown, self.say, self.text, self.code
        li, ul, end_ul, end_li, colon = self.li, self.ul, self.end_ul, self.end_li, self.colon
        lp, lq, rq, rp = self.lp, self.lq, self.rq, self.rp
        parts: list[str] = []
        add = parts.append
        for r in relations:
            other = related_ref(r, pr_links, code, self.pr_link, self.commit)
            said = shown(self.sentence(r["type"], r["direction"] == "out", other,
                                       r["inferred"]))
            title = r["title"]
            titled = f"{lp}{lq}{shown(text(title))}{rq}{rp}" if title else ""
            origin = r["origin"]
            conf = shown(say(CONFIDENCE, conf=f"{r['confidence']:.2f}",
                             origin=self.origins.get(origin) or text(origin)))
            items = r["evidence"]
            add(f"{li}{said}{titled}{conf}{colon}\n{ul}\n"
                f"{self.evidence(items, self.li2, self.end)}\n{end_ul}{end_li}\n" if items
                else f"{li}{said}{titled}{conf}{self.no_evidence}")
        return self.made("".join(parts))
