"""Discussion synthesis (prkb.analyze.topics) on small synthetic records of our own."""

from __future__ import annotations

from typing import Any

from prkb.analyze import topics as t

HUNK = "@@ -10,6 +10,7 @@ class DemoBuilder(Base):\n     level = Support.LOW\n+    extra = 1"


def _u(login: str) -> dict[str, str]:
    return {"login": login}


def rec(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "number": 7, "user": _u("ann"), "state": "merged", "merged_at": "2026-01-05T00:00:00Z",
        "reviews": [], "comments": [], "review_comments": [],
    }
    base.update(kw)
    return base


def rc(login: str, body: str, when: str, *, path: str = "pkg/demo.py", hunk: str = HUNK,
       **extra: Any) -> dict[str, Any]:
    return {"user": _u(login), "path": path, "diff_hunk": hunk, "body": body,
            "created_at": when, **extra}


def cc(login: str, body: str, when: str) -> dict[str, Any]:
    return {"user": _u(login), "body": body, "created_at": when}


def rv(login: str, state: str, when: str, body: str = "") -> dict[str, Any]:
    return {"user": _u(login), "state": state, "body": body, "submitted_at": when}


def test_no_discussion_is_unknown_not_none() -> None:
    d = t.synthesize(rec())
    assert d.status == "unknown" and d.topics == ()
    assert t.synthesize(rec(reviews=None, comments=None)).status == "unknown"


def test_only_bots() -> None:
    d = t.synthesize(rec(comments=[cc("ci-helper[bot]", "Build passed.", "2026-01-01")]))
    assert d.status == "bots-only" and d.topics == ()


def test_thread_addressed_by_author_done_reply_quotes_the_request() -> None:
    d = t.synthesize(rec(review_comments=[
        rc("bob", "Please keep the level at LOW here.", "2026-01-02T10:00:00Z"),
        rc("ann", "Done, thanks.", "2026-01-02T11:00:00Z"),
    ]))
    (topic,) = d.topics
    assert topic.kind == t.THREAD and topic.outcome == t.ADDRESSED
    assert topic.evidence == t.EV_AUTHOR_DONE
    assert topic.path == "pkg/demo.py" and topic.hunk == "@@ -10,6 +10,7 @@"
    assert topic.decisive is not None
    assert topic.decisive.text == "Please keep the level at LOW here."
    assert topic.decisive.author == "bob" and topic.decisive.lang == "en"
    roles = {p.login: p.role for p in topic.participants}
    assert roles == {"bob": t.REVIEWER, "ann": t.AUTHOR}


def test_replies_join_their_root_by_id_even_across_hunks() -> None:
    other = "@@ -40,2 +41,2 @@ def f():\n-    a\n+    b"
    d = t.synthesize(rec(review_comments=[
        rc("bob", "Why this value?", "2026-01-02T10:00:00Z", id=1),
        rc("cy", "Is this tested?", "2026-01-02T10:05:00Z", id=2, hunk=other),
        rc("ann", "It matches the parent class.", "2026-01-02T10:30:00Z", id=3,
           in_reply_to_id=1, hunk=other),
    ]))
    first, second = d.topics
    assert first.comments == 2 and first.outcome == t.ANSWERED
    assert first.decisive is not None and first.decisive.author == "ann"
    assert second.comments == 1 and second.outcome == t.UNANSWERED
    assert second.decisive is not None and second.decisive.text == "Is this tested?"


def test_without_ids_threads_group_by_file_and_hunk() -> None:
    d = t.synthesize(rec(review_comments=[
        rc("bob", "nit: rename", "2026-01-02T10:00:00Z"),
        rc("bob", "and here", "2026-01-02T10:01:00Z", path="pkg/other.py"),
        rc("ann", "ok", "2026-01-02T10:02:00Z"),
    ]))
    assert [x.comments for x in d.topics] == [2, 1]
    assert [x.path for x in d.topics] == ["pkg/demo.py", "pkg/other.py"]


def test_outdated_thread_counts_as_addressed_by_a_later_push() -> None:
    d = t.synthesize(rec(review_comments=[
        rc("bob", "This should grow with the draft tokens.", "2026-01-02T10:00:00Z",
           position=None, original_position=4),
    ]))
    assert d.topics[0].outcome == t.ADDRESSED
    assert d.topics[0].evidence == t.EV_OUTDATED


def test_later_approval_by_the_requester_addresses_the_thread() -> None:
    d = t.synthesize(rec(
        review_comments=[rc("bob", "Add a test for the capture path.", "2026-01-02T10:00:00Z")],
        reviews=[rv("bob", "APPROVED", "2026-01-03T09:00:00Z")],
    ))
    thread, states = d.topics
    assert thread.outcome == t.ADDRESSED and thread.evidence == t.EV_APPROVED_LATER
    assert states.kind == t.REVIEW_STATES and states.outcome == t.APPROVED
    assert states.decisive is None  # an approval without text quotes nothing
    assert states.participants == (t.Participant("bob", t.REVIEWER, "APPROVED"),)


def test_question_left_standing_is_open() -> None:
    d = t.synthesize(rec(review_comments=[
        rc("bob", "Does this hold for mixed batches?", "2026-01-02T10:00:00Z"),
        rc("ann", "I think so.", "2026-01-02T10:10:00Z"),
        rc("bob", "Can you show a run with two draft tokens?", "2026-01-02T10:20:00Z"),
    ]))
    (topic,) = d.topics
    assert topic.outcome == t.OPEN and topic.evidence == t.EV_LAST_QUESTION
    assert topic.decisive is not None
    assert topic.decisive.text == "Can you show a run with two draft tokens?"


def test_authors_own_remark_is_noted() -> None:
    d = t.synthesize(rec(comments=[cc("ann", "Works again now that #5 landed.", "2026-01-01")]))
    assert d.topics[0].outcome == t.NOTED and d.topics[0].kind == t.CONVERSATION
    assert d.topics[0].participants == (t.Participant("ann", t.AUTHOR),)


def test_conversation_question_and_its_answer_are_one_topic() -> None:
    d = t.synthesize(rec(comments=[
        cc("bob", "Which test turns green with this?", "2026-01-01T01:00:00Z"),
        cc("ann", "The single-model case in the init tests.", "2026-01-01T02:00:00Z"),
        cc("dee", "Unrelated: the docs build is slow today.", "2026-01-01T03:00:00Z"),
    ]))
    first, second = d.topics
    assert first.comments == 2 and first.outcome == t.ANSWERED
    assert first.decisive is not None and first.decisive.author == "ann"
    roles = {p.login: p.role for p in first.participants}
    assert roles == {"bob": t.COMMENTER, "ann": t.AUTHOR}
    assert second.comments == 1 and second.outcome == t.UNANSWERED


def test_mention_and_quote_join_an_earlier_topic() -> None:
    d = t.synthesize(rec(comments=[
        cc("bob", "The numbers look low on the small model.", "2026-01-01T01:00:00Z"),
        cc("dee", "Separate point: please update the table.", "2026-01-01T02:00:00Z"),
        cc("ann", "> The numbers look low on the small model.\n\nThey were taken without "
                  "the patch.", "2026-01-01T03:00:00Z"),
        cc("ann", "@dee updated the table.", "2026-01-01T04:00:00Z"),
    ]))
    first, second = d.topics
    assert [first.comments, second.comments] == [2, 2]
    assert first.decisive is not None
    assert first.decisive.text == "They were taken without the patch."  # the quote left out
    assert second.outcome == t.ADDRESSED and second.evidence == t.EV_AUTHOR_DONE


def test_conversation_remark_then_approval_is_not_addressed() -> None:
    d = t.synthesize(rec(
        comments=[cc("bob", "Nice cleanup.", "2026-01-01T01:00:00Z")],
        reviews=[rv("bob", "APPROVED", "2026-01-02T01:00:00Z", "Thanks, looks good.")],
    ))
    conv, states = d.topics
    assert conv.outcome == t.UNANSWERED
    assert states.outcome == t.APPROVED
    assert states.decisive is not None and states.decisive.text == "Thanks, looks good."


def test_change_request_standing_is_open_and_met_is_addressed() -> None:
    standing = t.synthesize(rec(reviews=[
        rv("bob", "APPROVED", "2026-01-01T01:00:00Z"),
        rv("cy", "CHANGES_REQUESTED", "2026-01-01T02:00:00Z", "Lower the level instead."),
    ]))
    topic = standing.topics[-1]
    assert topic.outcome == t.OPEN and topic.evidence == t.EV_REQUEST_STANDS
    assert topic.decisive is not None and topic.decisive.author == "cy"
    met = t.synthesize(rec(reviews=[
        rv("cy", "CHANGES_REQUESTED", "2026-01-01T02:00:00Z", "Lower the level instead."),
        rv("cy", "APPROVED", "2026-01-02T02:00:00Z"),
    ]))
    assert met.topics[-1].outcome == t.ADDRESSED
    assert met.topics[-1].decisive is not None
    assert met.topics[-1].decisive.text == "Lower the level instead."


def test_quote_is_capped_and_keeps_its_language() -> None:
    long = "这个阈值在推测解码下不会增大，" * 40
    d = t.synthesize(rec(comments=[cc("bob", long + "对吗？", "2026-01-01")]))
    q = d.topics[0].decisive
    assert q is not None and q.truncated and q.lang == "zh"
    assert len(q.text) <= t.QUOTE_CHARS and long.startswith(q.text)


def test_empty_reviews_without_text_or_verdict() -> None:
    d = t.synthesize(rec(reviews=[rv("bob", "COMMENTED", "2026-01-01")]))
    assert d.status == "empty" and d.topics == ()
