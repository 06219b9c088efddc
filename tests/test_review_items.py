"""The report's review highlights written in Python (prkb/render/review_items.py) say what the
section's template said, line for line, in every format and language."""

from __future__ import annotations

from typing import Any

import pytest
from markupsafe import Markup
from section_oracle import assert_same_text, sources

from prkb.profile import load_profile
from prkb.render import report
from prkb.render.review_items import OUTCOMES
from prkb.render.sections.review import Review

# report/sections/review.j2 before it moved to Python (commit f7e6c0d): the oracle the new
# code is held to, rendered by the same environment (catalog, filters, formatter, labels)
OLD, NEW = sources("review_before.j2", "review.j2")

HOSTILE = '<script>alert("x")</script> & `code` **b** [a](javascript:x)'


def _topics() -> list[dict[str, Any]]:
    """A topic of every kind and outcome (with each evidence the template tells apart),
    opener or none, path and line or none, one comment or several, participants or none,
    a deciding comment in the report's language, the other one, an unknown one, by its
    author or an unknown one, cut or whole; the texts written to break out."""
    outcomes = [*OUTCOMES, ("dismissed", ""), ("approved", "author-reply-done")]
    kinds = ("review-thread", "conversation", "review-verdicts", "something-else")
    out = []
    for i, (outcome, evidence) in enumerate(outcomes * 2):
        kind = kinds[i % len(kinds)]
        decisive = None if i % 5 == 0 else {
            "author": None if i % 3 == 0 else f"rev{i}<b>",
            "lang": ("zh", "en", "fr")[(i // 3) % 3],
            "text": f"{HOSTILE} `inline` text {i}", "truncated": i % 2 == 0}
        out.append({
            "kind": kind, "outcome": outcome, "evidence": evidence,
            "participants": [] if i % 4 == 0 else [
                {"login": HOSTILE if i % 7 == 0 else f"user{i}", "role": "author"},
                {"login": None, "role": "reviewer"}, {"login": "c_d", "role": "commenter"}],
            "opener": None if i % 3 == 1 else f"op{i}&", "comments": 1 if i % 2 else i + 2,
            "path": None if i % 3 == 1 else f"vllm/{i}<x>.py",
            "line": None if i % 8 == 0 else i * 7,
            "decisive": decisive,
        })
    return out


def _cases(store: Any, lang: str) -> list[tuple[Review, str]]:
    """Every bundled PR's review as its report reads it, then crafted ones: not collected,
    each status, the topics with each source of the PR's text."""
    profile = load_profile(None)
    out = []
    for p in store.all_prs():
        ctx = report.localize(report.report_facts(store, p["ref"], profile), lang, profile)
        out.append((ctx["review"], ctx["pr"]["text"]))
    topics = _topics()
    for status in ("unknown", "bots-only", "empty", "discussed"):
        out.append((Review(collected=False, status=status, author=None, topics=topics),
                    "description"))
        out.append((Review(collected=True, status=status, author="a", topics=[]),
                    "description"))
    for text in ("description", "commit", "paraphrase"):
        out.append((Review(collected=True, status="discussed", author="a", topics=topics), text))
    return out


@pytest.mark.parametrize("fmt", ["html", "md", "txt"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subject", ["", "commit"])
def test_review_is_what_the_template_wrote(bundled: Any, fmt: str, lang: str,
                                           subject: str) -> None:
    env = report._report_env(lang, fmt, subject, "")
    cases = _cases(bundled, lang)
    assert len(cases) > 60
    unknown = env.globals["_"]("unknown")
    want = assert_same_text(env, OLD, NEW, [
        {"review": review, "pr": {"text": text}, "lang": lang,
         "colon": env.globals["labels"].colon, "unknown": unknown} for review, text in cases])
    got = env.globals["review_items"](cases[-1][0], cases[-1][1], lang)
    assert isinstance(got, Markup) == (fmt == "html")
    if fmt == "html":  # the crafted text is escaped, never markup
        assert "<script>" not in want and "&lt;script&gt;" in want


def test_every_topic_line_is_said(bundled: Any) -> None:
    env = report._report_env("en", "md", "", "")
    out = str(env.globals["review_items"](
        Review(collected=True, status="discussed", author="a", topics=_topics()), "paraphrase",
        "en"))
    for needle in ("paraphrased", "who started it is not recorded", ", line 84, opened by @op12",
                   "Review thread on `?`", "Conversation opened by @op", "Review verdicts (",
                   "1 comment)", "comments)", "the author replied", "in a later push",
                   "reviewer who asked approved", "someone other than the opener",
                   "nobody else replied", "last verdict requests changes", "question nobody",
                   "a remark by the author", "every verdict was dismissed",
                   "its author unknown (in Chinese)", "its author unknown:", "(in Chinese):",
                   "by @rev", "No comment with text decided it.", "(reviewer)",
                   "Participants: unknown", " …"):
        assert needle in out, needle
