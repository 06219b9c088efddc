"""Discussion synthesis without a language model: topics, participants, outcomes, quotes.

Input is one PR record as the knowledge base stores it (GitHub's REST shape, see
:mod:`prkb.collect.record`): ``user.login`` (the author), ``state``, ``merged_at``,
``reviews`` [{user, state, body, submitted_at}], ``comments`` (the conversation)
[{user, body, created_at}] and ``review_comments`` [{user, path, diff_hunk, body,
created_at}] with, when the collector kept them, ``id``, ``in_reply_to_id``, ``line``,
``position``/``original_position`` and ``commit_id``/``original_commit_id``.

Output is language-neutral facts (:class:`Discussion`): codes, logins, paths and verbatim
quotes. No sentence is written here; a template words them per language.

Topics come from three places:

- **review threads** (:data:`THREAD`): inline comments grouped into one thread by
  ``in_reply_to_id`` (a reply joins its root's thread); when the record has no ids, by
  ``(path, diff_hunk)``, since GitHub gives a reply the same file and hunk as its root.
- **conversation** (:data:`CONVERSATION`): conversation comments, plus review bodies of
  ``COMMENTED`` reviews, in time order. A comment joins an earlier topic when it quotes it (a
  ``>`` line whose text occurs in one of the topic's comments), when it @mentions the login of
  the topic's last writer, or when it is the first comment by someone else after a topic
  whose last comment is a question. Otherwise it starts a new topic.
- **review states** (:data:`REVIEW_STATES`): one topic from the ``APPROVED``,
  ``CHANGES_REQUESTED`` and ``DISMISSED`` reviews.

Comments by bots (logins ending in ``[bot]``) are left out of topics. When the record has no
review, no comment and no inline comment at all, the status is ``unknown``: an empty list in
the record does not tell whether the PR had no discussion or the discussion was not collected.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

QUOTE_CHARS = 280  # a decisive quote is cut at a word boundary before this many characters

# topic kinds
THREAD = "review-thread"
CONVERSATION = "conversation"
REVIEW_STATES = "review-states"

# outcomes (the rules are in :func:`thread_outcome`, :func:`states_outcome`)
APPROVED = "approved"
ADDRESSED = "addressed"
ANSWERED = "answered"
UNANSWERED = "unanswered"
OPEN = "open"
NOTED = "noted"
DISMISSED = "dismissed"

# how an outcome was reached (``Topic.evidence``)
EV_AUTHOR_DONE = "author-reply-done"        # the author replied with a done word
EV_OUTDATED = "outdated-by-later-push"      # the commented line changed in a later push
EV_APPROVED_LATER = "reviewer-approved-later"  # the requester approved afterwards
EV_REPLY = "reply"                          # someone else replied
EV_LAST_QUESTION = "last-comment-question"  # the last word is a question
EV_NO_REPLY = "no-reply"                    # nobody else wrote
EV_REQUEST_STANDS = "changes-requested-last"  # a reviewer's last state requests changes
EV_APPROVAL = "approval"                    # approved, no reviewer requests changes
EV_REMARK = "remark"                        # one remark that asks nothing

# roles
AUTHOR = "author"
REVIEWER = "reviewer"
COMMENTER = "commenter"

# Words of a reply saying a request was carried out (whole words, case-insensitive; English
# and Chinese). The first 200 characters of the reply, without quoted lines, are read.
DONE_WORDS = (
    "done", "fixed", "addressed", "updated", "changed", "applied", "resolved", "removed",
    "renamed", "reverted", "已修改", "已修复", "已更新", "已改", "改好了", "已处理",
)
_DONE = re.compile(
    r"(?<![A-Za-z])(?:" + "|".join(re.escape(w) for w in DONE_WORDS) + r")(?![A-Za-z])", re.I
)
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass(frozen=True)
class Quote:
    """A comment quoted verbatim (whitespace runs made one space, quoted lines of an earlier
    comment and HTML comments left out), cut at :data:`QUOTE_CHARS` (``truncated``).
    ``lang``: ``zh`` when it holds more CJK characters than Latin letters, ``en`` when it holds
    Latin letters, else ``und``; a template marks it as a quote in that language."""

    author: str | None
    text: str
    truncated: bool
    lang: str
    source: str          # review, review_comment, comment
    when: str | None


@dataclass(frozen=True)
class Participant:
    """``role``: ``author`` (the PR's author), ``reviewer`` (submitted a review or an inline
    comment on the PR), ``commenter`` (wrote only in the conversation)."""

    login: str
    role: str
    state: str | None = None  # the last review state, in review-state topics


@dataclass(frozen=True)
class Topic:
    """One topic: where it is, who took part, how it ended, and the comment that decided it.

    ``path``/``hunk``/``line``: for review threads, the file, the hunk header (``@@ ... @@``)
    and the commented line when known. ``opener``: who started it. ``comments``: how many
    comments it holds. ``decisive``: the comment that decided it (see
    :func:`thread_outcome`), or None when no comment with text decided it.
    """

    kind: str
    outcome: str
    evidence: str
    participants: tuple[Participant, ...]
    opener: str | None
    comments: int
    decisive: Quote | None
    path: str | None = None
    hunk: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Discussion:
    """``status``: ``unknown`` (the record holds no discussion at all), ``bots-only`` (only
    bots wrote), ``empty`` (people reviewed but wrote no text and gave no verdict), ``topics``
    (at least one topic)."""

    status: str
    author: str | None
    topics: tuple[Topic, ...]


@dataclass
class _Item:
    author: str | None
    body: str
    when: str | None
    source: str
    order: int
    raw: dict[str, Any]


def _login(u: Any) -> str | None:
    if isinstance(u, dict) and u.get("login"):
        return str(u["login"])
    return None


def is_bot(login: str | None) -> bool:
    return bool(login) and str(login).endswith("[bot]")


def _own_text(body: str) -> str:
    """The body without HTML comments and without lines quoting an earlier comment."""
    body = _HTML_COMMENT.sub("", body)
    return "\n".join(ln for ln in body.splitlines() if not ln.lstrip().startswith(">"))


def quote_of(item: _Item) -> Quote | None:
    text = " ".join(_own_text(item.body).split())
    if not text:
        return None
    truncated = len(text) > QUOTE_CHARS
    if truncated:
        cut = text[:QUOTE_CHARS]
        space = cut.rfind(" ")
        text = (cut[:space] if space > QUOTE_CHARS // 2 else cut).rstrip()
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    lang = "zh" if cjk and cjk >= latin else "en" if latin else "und"
    return Quote(item.author, text, truncated, lang, item.source, item.when)


def _is_question(item: _Item) -> bool:
    own = _own_text(item.body).strip()
    return own.endswith(("?", "？"))


def _says_done(item: _Item) -> bool:
    return _DONE.search(_own_text(item.body)[:200]) is not None


def _ordered(items: list[_Item]) -> list[_Item]:
    """Time order when every item has a time; else the record's order."""
    if all(i.when for i in items):
        return sorted(items, key=lambda i: (str(i.when), i.order))
    return sorted(items, key=lambda i: i.order)


def _participants(items: list[_Item], author: str | None, reviewers: set[str]) -> tuple[
    Participant, ...
]:
    seen: dict[str, Participant] = {}
    for it in items:
        if it.author is None or it.author in seen:
            continue
        role = AUTHOR if it.author == author else REVIEWER if it.author in reviewers else COMMENTER
        seen[it.author] = Participant(it.author, role)
    return tuple(seen.values())


def _outdated(items: list[_Item]) -> bool:
    """Whether GitHub marks the thread's root as outdated: its line is gone from the newest
    diff (``position`` null while ``original_position`` is set), or it was made on an earlier
    commit than the one the comment now points to."""
    raw = items[0].raw
    if "position" in raw and raw.get("position") is None and raw.get("original_position"):
        return True
    a, b = raw.get("commit_id"), raw.get("original_commit_id")
    return bool(a and b and a != b)


def thread_outcome(
    items: list[_Item], author: str | None, approved_after: dict[str, str], thread: bool = True
) -> tuple[str, str, _Item | None]:
    """The outcome of a review thread or conversation topic, in this order of rules:

    1. ``addressed`` when the opener is not the author and (a) the author replied with a done
       word (:data:`DONE_WORDS`), decisive: the opener's request; or (b) the thread is outdated
       by a later push (:func:`_outdated`), decisive: the request; or (c) the opener approved
       the PR after the thread's last comment (``approved_after``: login -> time of their last
       approval), decisive: the request. (b) and (c) apply to review threads only
       (``thread``): a conversation remark followed by an approval is not a request met.
    2. ``open`` when someone other than the opener wrote and the last comment is a question
       by someone other than the author; decisive: that question.
    3. ``answered`` when someone other than the opener wrote; decisive: the last comment by
       someone other than the opener.
    4. ``unanswered`` when nobody else wrote and the opener asked a question or is not the
       author (a reviewer's inline comment is a request); decisive: the opener's comment.
    5. ``noted`` otherwise (the author's own remark, nobody replied); decisive: that remark.
    """
    opener = items[0]
    others = [i for i in items[1:] if i.author != opener.author]
    if opener.author != author:
        if any(i.author == author and _says_done(i) for i in items[1:]):
            return ADDRESSED, EV_AUTHOR_DONE, opener
        if thread and _outdated(items):
            return ADDRESSED, EV_OUTDATED, opener
        when = approved_after.get(opener.author or "")
        last = items[-1].when
        if thread and when and last and when > last:
            return ADDRESSED, EV_APPROVED_LATER, opener
    if others:
        if _is_question(items[-1]) and items[-1].author != author:
            return OPEN, EV_LAST_QUESTION, items[-1]
        return ANSWERED, EV_REPLY, others[-1]
    if _is_question(opener) or opener.author != author:
        return UNANSWERED, EV_NO_REPLY, opener
    return NOTED, EV_REMARK, opener


def states_outcome(reviews: list[_Item]) -> tuple[str, str, _Item | None]:
    """The outcome of the review-state topic, from each reviewer's last state:

    - ``open`` when a reviewer's last state is ``CHANGES_REQUESTED``; decisive: that review.
    - ``addressed`` when a reviewer requested changes and later approved; decisive: the
      request.
    - ``approved`` when a reviewer's last state is ``APPROVED``; decisive: the last approval
      with a body, or None (an approval without text).
    - ``dismissed`` when every last state is ``DISMISSED``; decisive: None.
    """
    last: dict[str, _Item] = {}
    requested: dict[str, _Item] = {}
    for r in reviews:
        key = r.author or ""
        last[key] = r
        if _state(r) == "CHANGES_REQUESTED":
            requested.setdefault(key, r)
    standing = [r for r in last.values() if _state(r) == "CHANGES_REQUESTED"]
    if standing:
        return OPEN, EV_REQUEST_STANDS, standing[-1]
    approved = [r for r in last.values() if _state(r) == "APPROVED"]
    fixed = [requested[k] for k, r in last.items() if k in requested and _state(r) == "APPROVED"]
    if fixed:
        return ADDRESSED, EV_APPROVED_LATER, fixed[0]
    if approved:
        with_text = [r for r in reviews if _state(r) == "APPROVED" and _own_text(r.body).strip()]
        return APPROVED, EV_APPROVAL, with_text[-1] if with_text else None
    return DISMISSED, EV_REQUEST_STANDS, None


def _state(r: _Item) -> str:
    return str(r.raw.get("state") or "COMMENTED").upper()


def _hunk_header(diff_hunk: str | None) -> str | None:
    first = (diff_hunk or "").split("\n", 1)[0]
    m = re.match(r"@@ [^@]* @@", first)
    return m.group(0) if m else None


def _threads(rcs: list[_Item]) -> list[list[_Item]]:
    has_ids = all(i.raw.get("id") is not None for i in rcs)
    groups: dict[Any, list[_Item]] = {}
    if has_ids:
        by_id = {i.raw["id"]: i for i in rcs}

        def root(i: _Item) -> Any:
            seen = set()
            while i.raw.get("in_reply_to_id") in by_id and i.raw["id"] not in seen:
                seen.add(i.raw["id"])
                i = by_id[i.raw["in_reply_to_id"]]
            return i.raw["id"]

        for it in rcs:
            groups.setdefault(root(it), []).append(it)
    else:
        for it in rcs:
            groups.setdefault((it.raw.get("path"), it.raw.get("diff_hunk")), []).append(it)
    threads = [_ordered(g) for g in groups.values()]
    return sorted(threads, key=lambda t: (str(t[0].when or ""), t[0].order))


def _conversation(items: list[_Item]) -> list[list[_Item]]:
    topics: list[list[_Item]] = []
    for it in items:
        own = _own_text(it.body)
        quoted = [
            ln.lstrip()[1:].strip() for ln in it.body.splitlines() if ln.lstrip().startswith(">")
        ]
        quoted = [q for q in quoted if len(q) >= 8]
        mentioned = {m.lower() for m in _MENTION.findall(own)}
        home = None
        for t in reversed(topics):
            if quoted and any(q in " ".join(c.body.split()) for c in t for q in quoted):
                home = t
                break
            if t[-1].author and t[-1].author.lower() in mentioned and t[-1].author != it.author:
                home = t
                break
        if home is None and topics:
            last = topics[-1]
            if _is_question(last[-1]) and last[-1].author != it.author and not any(
                c.author == it.author for c in last[1:]
            ):
                home = last
        if home is None:
            topics.append([it])
        else:
            home.append(it)
    return topics


def synthesize(rec: dict[str, Any]) -> Discussion:
    """The discussion of one PR record as topics (see the module's docstring)."""
    author = _login(rec.get("user"))
    reviews = rec.get("reviews") or []
    comments = rec.get("comments") or []
    inline = rec.get("review_comments") or []
    if not (reviews or comments or inline):
        return Discussion("unknown", author, ())
    n = 0

    def items(objs: list[Any], source: str, when_key: str) -> list[_Item]:
        nonlocal n
        out = []
        for o in objs:
            if not isinstance(o, dict):
                continue
            n += 1
            who = _login(o.get("user"))
            if is_bot(who):
                continue
            out.append(_Item(who, str(o.get("body") or ""), o.get(when_key), source, n, o))
        return out

    rv = items(reviews, "review", "submitted_at")
    rc = items(inline, "review_comment", "created_at")
    cc = items(comments, "comment", "created_at")
    reviewers = {i.author for i in rv + rc if i.author and i.author != author}
    approved_after: dict[str, str] = {}
    for r in rv:
        if _state(r) == "APPROVED" and r.author and r.when:
            approved_after[r.author] = max(approved_after.get(r.author, ""), str(r.when))
    topics: list[Topic] = []
    for th in _threads(rc):
        outcome, ev, dec = thread_outcome(th, author, approved_after)
        line = th[0].raw.get("line") or th[0].raw.get("original_line")
        topics.append(Topic(
            THREAD, outcome, ev, _participants(th, author, reviewers), th[0].author, len(th),
            quote_of(dec) if dec else None, path=th[0].raw.get("path"),
            hunk=_hunk_header(th[0].raw.get("diff_hunk")),
            line=line if isinstance(line, int) else None,
        ))
    talk = _ordered(cc + [r for r in rv if _state(r) == "COMMENTED" and _own_text(r.body).strip()])
    for conv in _conversation(talk):
        outcome, ev, dec = thread_outcome(conv, author, approved_after, thread=False)
        topics.append(Topic(
            CONVERSATION, outcome, ev, _participants(conv, author, reviewers), conv[0].author,
            len(conv), quote_of(dec) if dec else None,
        ))
    verdicts = _ordered([r for r in rv if _state(r) in ("APPROVED", "CHANGES_REQUESTED",
                                                        "DISMISSED")])
    if verdicts:
        outcome, ev, dec = states_outcome(verdicts)
        last = {r.author: _state(r) for r in verdicts if r.author}
        people = tuple(
            Participant(who, AUTHOR if who == author else REVIEWER, state)
            for who, state in last.items()
        )
        topics.append(Topic(
            REVIEW_STATES, outcome, ev, people, verdicts[0].author, len(verdicts),
            quote_of(dec) if dec else None,
        ))
    if not topics:
        humans = rv or rc or cc
        return Discussion("empty" if humans else "bots-only", author, ())
    return Discussion("topics", author, tuple(topics))


def discussion_json(record: dict[str, Any]) -> dict[str, Any]:
    """The discussion of a stored record as :func:`synthesize` reads it, as plain JSON data
    (``prkb show --json``): status, author, topics with their quotes."""
    return asdict(synthesize(record))
