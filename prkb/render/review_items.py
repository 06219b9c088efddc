"""The report's review highlights, written here, not by the template: the status of the
discussion or its topics, each with its participants, outcome and deciding comment.

In ``report/sections/review.j2`` the section took about 300,000 instructions a report (per
language), the costliest section after the risks, most of it the template's own work around
each sentence. :class:`ReviewItems` writes the same text in one call, from the same catalog
messages (marked here with ``N_``), the environment's ``_`` and ``ngettext``, filters (``t``,
``q``), formatter and label tables. ``tests/test_review_items.py`` holds it to the template it
replaced, kept as ``tests/golden/review_before.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jinja2

from .i18n import N_
from .section_writer import SectionWriter

NOT_COLLECTED = N_("Unknown: the discussion was not collected, this record comes from git "
                   "history only.")
STATUS: dict[str, str] = {
    "unknown": N_("Unknown: the knowledge base holds no review, comment or line comment for "
                  "this PR, so it cannot tell whether there was no discussion or it was not "
                  "collected."),
    "bots-only": N_("Only bots wrote in this PR: there was no discussion between people."),
    "empty": N_("Reviews were recorded, but without text and without a verdict: nothing was "
                "discussed."),
}
PARAPHRASED = N_("The comments shown below are paraphrased from public information, not the "
                 "original text.")
TOPICS = N_("Topics from review threads, the conversation and review verdicts: %(n)s.")
UNKNOWN = N_("unknown")
PERSON = N_("%(who)s (%(role)s)")
NO_OPENER = N_("Conversation of %(count)s; who started it is not recorded.")
THREAD_LINE = N_("Review thread on %(path)s, line %(line)s, opened by %(who)s (%(count)s).")
THREAD = N_("Review thread on %(path)s, opened by %(who)s (%(count)s).")
CONVERSATION = N_("Conversation opened by %(who)s (%(count)s).")
VERDICTS = N_("Review verdicts (%(count)s).")
PARTICIPANTS = N_("Participants")
OUTCOME = N_("Outcome")
# a topic's outcome, by outcome and the evidence of it ("": any other evidence)
OUTCOMES: dict[tuple[str, str], str] = {
    ("approved", ""): N_("approved; no reviewer's last verdict requests changes."),
    ("addressed", "author-reply-done"): N_("addressed: the author replied that the request "
                                           "was carried out."),
    ("addressed", "outdated-by-later-push"): N_("addressed: the commented line changed in a "
                                                "later push."),
    ("addressed", ""): N_("addressed: the reviewer who asked approved the PR afterwards."),
    ("answered", ""): N_("answered: someone other than the opener replied."),
    ("unanswered", ""): N_("unanswered: nobody else replied."),
    ("open", "changes-requested-last"): N_("left open: a reviewer's last verdict requests "
                                           "changes."),
    ("open", ""): N_("left open: the last comment is a question nobody answered."),
    ("noted", ""): N_("a remark by the author; nothing was asked."),
}
DISMISSED = N_("every verdict was dismissed.")
DECIDED_NO_AUTHOR_LANG = N_("The comment that decided it, its author unknown (in "
                            "%(language)s):")
DECIDED_NO_AUTHOR = N_("The comment that decided it, its author unknown:")
DECIDED_LANG = N_("The comment that decided it, by %(who)s (in %(language)s):")
DECIDED = N_("The comment that decided it, by %(who)s:")
NOT_DECIDED = N_("No comment with text decided it.")


class ReviewItems(SectionWriter):
    """The global ``review_items(review, pr_text, lang)`` of a report environment: the review
    highlights after their heading (no newline after the last line), as the
    environment writes them (Markup under autoescape), when called with ``review`` (the
    section's facts), ``pr_text`` (where the PR's text came from) and ``lang`` (the
    report's)."""

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        # the i18n extension's ngettext takes a template context: one, made once, to call it
        # as a template does (its catalog and escaping)
        self.plural: Any = env.globals["ngettext"]
        self.context = env.from_string("").new_context()
        self.num: Any = env.globals["num"]
        (self.p, self.end_p, self.ol, self.end_ol, self.ul, self.end_ul, self.li3, self.end,
         self.end_li, self.quote, self.end_quote, self.ql) = self.structure(
            "p", "end_p", "ol", "end_ol", "ul", "end_ul", "li3", "end", "end_li", "quote",
            "end_quote", "ql")
        # a quoted line the template ended with a tag, then its end
        self.end_ql = self.after_tag("end_ql", "\n")

    def ngettext(self, singular: str, plural: str, n: Any) -> Any:
        """``ngettext(singular, plural, n)`` as a template calls it (a plural message: its
        literal arguments at each call are what the catalog's extraction reads)."""
        return self.plural(self.context, singular, plural, n)

    def comments(self, n: Any) -> Any:
        return self.ngettext("%(num)d comment", "%(num)d comments", n)

    def who(self, login: Any) -> str:
        """A person: @login, else the report's "unknown" (the template's macro ``who``)."""
        if login:
            return self.made(f"@{self.shown(self.text(login))}")
        return self.say(UNKNOWN)

    def heading(self, tp: Mapping[str, Any]) -> Any:
        """A topic's first line, after its number."""
        say, kind = self.say, tp["kind"]
        if not tp["opener"] and kind == "conversation":
            return say(NO_OPENER, count=self.comments(tp["comments"]))
        if kind == "review-thread":
            code = self.code
            if tp["line"]:
                return say(THREAD_LINE, path=code(tp["path"]), line=tp["line"],
                           who=self.who(tp["opener"]),
                           count=self.comments(tp["comments"]))
            return say(THREAD, path=code(tp["path"] or "?"), who=self.who(tp["opener"]),
                       count=self.comments(tp["comments"]))
        if kind == "conversation":
            return say(CONVERSATION, who=self.who(tp["opener"]),
                       count=self.comments(tp["comments"]))
        return say(VERDICTS, count=self.ngettext("%(num)d review", "%(num)d reviews",
                                                 tp["comments"]))

    def outcome(self, tp: Mapping[str, Any]) -> Any:
        outcome, evidence = tp["outcome"], tp["evidence"]
        said = OUTCOMES.get((outcome, evidence)) or OUTCOMES.get((outcome, ""))
        return self.say(said or DISMISSED)

    def decided(self, q: Mapping[str, Any], lang: str) -> Any:
        """Who wrote the comment that decided a topic, and in what language if not the
        report's."""
        say, other = self.say, q["lang"] != lang and q["lang"] in ("zh", "en")
        if not q["author"]:
            if other:
                return say(DECIDED_NO_AUTHOR_LANG,
                           language=self.getitem(self.labels.language, q["lang"]))
            return say(DECIDED_NO_AUTHOR)
        if other:
            return say(DECIDED_LANG, who=self.who(q["author"]),
                       language=self.getitem(self.labels.language, q["lang"]))
        return say(DECIDED, who=self.who(q["author"]))

    def topic(self, add: Callable[[str], None], i: int, tp: Mapping[str, Any],
              lang: str) -> None:
        shown, say, li3, end, colon = self.shown, self.say, self.li3, self.end, self.colon
        participants = tp["participants"]
        if participants:
            people = self.sep.join(
                str(shown(say(PERSON, who=self.who(pp["login"]),
                              role=self.getitem(self.labels.role_of, pp["role"]))))
                for pp in participants)
            people_said: Any = self.made(people)
        else:
            people_said = say(UNKNOWN)
        add(f"{shown(self.num(i))}{shown(self.heading(tp))}\n{self.ul}\n"
            f"{li3}{shown(say(PARTICIPANTS))}{colon}{shown(people_said)}{end}\n"
            f"{li3}{shown(say(OUTCOME))}{colon}{shown(self.outcome(tp))}{end}\n")
        q = tp["decisive"]
        if q:
            truncated = " …" if q["truncated"] else ""
            add(f"{li3}{shown(self.decided(q, lang))}{end}\n{self.end_ul}\n\n"
                f"{self.quote}\n{self.ql}{shown(self.quoted(q['text']))}{truncated}"
                f"{self.end_ql}{self.end_quote}\n\n")
        else:
            add(f"{li3}{shown(say(NOT_DECIDED))}{end}\n{self.end_ul}\n")
        add(f"{self.end_li}\n")

    def __call__(self, review: Any, pr_text: Any, lang: str) -> str:
        shown, say, p, end_p = self.shown, self.say, self.p, self.end_p
        if not review.collected:
            made = f"{p}{shown(say(NOT_COLLECTED))}{end_p}"
        elif review.status in STATUS:
            made = f"{p}{shown(say(STATUS[review.status]))}{end_p}"
        else:
            parts: list[str] = []
            add = parts.append
            if pr_text == "paraphrase":
                add(f"{p}{shown(say(PARAPHRASED))}{end_p}\n\n")
            add(f"{p}{shown(say(TOPICS, n=len(review.topics)))}{end_p}\n\n{self.ol}\n")
            for i, tp in enumerate(review.topics, 1):
                self.topic(add, i, tp, lang)
            add(self.end_ol)
            made = "".join(parts)
        return self.made(made)
