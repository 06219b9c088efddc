"""The report's related PRs, each as one list item written here, not by the template.

A PR page lists five or so relations; in ``report/sections/related.j2`` each item took a
macro call for its sentence and some twenty template expressions (about 60,000 instructions
an item, a sixth of a PR page's report). :func:`related_items` writes the same text from the
same catalog messages, filters, formatter and labels as the template did, in one call.

Every sentence is still one catalog message (marked here with ``N_``, so the catalog's
extraction finds it), looked up through the environment's own ``_`` (its language, and the
wording of a report about a commit or of a profile's audit rule). The relation's evidence is
the report's ``report/_evidence.j2``, worded once per build (:mod:`.evidence_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import jinja2

from .formats import related_ref
from .i18n import N_
from .jinja_calls import as_markup, plain_call, safe_escape

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


def make_related_items(
    env: jinja2.Environment,
) -> Callable[[Iterable[Mapping[str, Any]], Mapping[str, str] | None], str]:
    """The global ``related_items(relations, pr_links)`` of a report environment (its
    ``_``, filters ``t``, ``c`` and ``label``, globals ``markup``, ``labels`` and
    ``sentences`` all set): the items of the related PRs' list, each with its evidence, as
    the environment writes them (Markup under autoescape). ``pr_links``: the pages of the
    other PRs by graph node key (the site's); a PR that has one is a link to it."""
    auto = bool(env.autoescape)
    shown: Callable[[Any], str] = safe_escape if auto else str  # what {{ value }} writes
    say: Any = env.globals["_"]  # its gettext
    label = env.filters["label"]
    text, code = env.filters["t"], env.filters["c"]
    markup: Any = env.globals["markup"]
    labels: Any = env.globals["labels"]
    macro = env.globals["sentences"]["evidence"].lines  # type: ignore[index]
    evidence = getattr(macro, "direct", None)
    if evidence is None:
        raise TypeError("the report's evidence macro cannot be called directly")
    # the structure and punctuation as written, plain text joined by f-strings (Markup's
    # own "+" escapes its other operand again)
    li, ul, end_ul, end_li, end_one = (str(shown(getattr(markup, k)))
                                      for k in ("li", "ul", "end_ul", "end_li", "end"))
    li2, end = markup.li2, markup.end  # the evidence macro's arguments, as the template's
    # an item without evidence ends its line and leaves a blank one; the template wrote its
    # end as literal text, and an empty one let trim_blocks take the first newline too
    no_evidence = f"{end_one}\n\n" if end_one else "\n"
    colon, lp, lq, rq, rp = (str(shown(getattr(labels, k)))
                             for k in ("colon", "lp", "lq", "rq", "rp"))
    origins: Mapping[str, Any] = labels.origin
    pr_link = markup.pr_link

    def commit(sha: str) -> Any:  # a commit at the other end, in the report's language
        return say(COMMIT, sha=code(sha))

    def sentence(type_: str, out: bool, other: Any, inferred: bool) -> Any:
        said = SEEN_FROM.get(type_)
        if said is None:
            s = say(ANY_TYPE[0 if out else 1], rel=label(type_, "relations"), other=other)
        else:
            s = say(said[0 if out else 1], other=other)
        return say(INFERRED, relation=s) if inferred else s

    @plain_call
    def related_items(relations: Iterable[Mapping[str, Any]],
                      pr_links: Mapping[str, str] | None) -> str:
        parts: list[str] = []
        add = parts.append
        for r in relations:
            other = related_ref(r, pr_links, code, pr_link, commit)
            said = shown(sentence(r["type"], r["direction"] == "out", other, r["inferred"]))
            title = r["title"]
            titled = f"{lp}{lq}{shown(text(title))}{rq}{rp}" if title else ""
            origin = r["origin"]
            conf = shown(say(CONFIDENCE, conf=f"{r['confidence']:.2f}",
                             origin=origins.get(origin) or text(origin)))
            items = r["evidence"]
            add(f"{li}{said}{titled}{conf}{colon}\n{ul}\n{evidence(items, li2, end)}\n"
                f"{end_ul}{end_li}\n" if items else f"{li}{said}{titled}{conf}{no_evidence}")
        made = "".join(parts)
        return as_markup(made) if auto else made

    return related_items
