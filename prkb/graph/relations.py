"""PR-to-PR relations read from PR texts: titles, bodies, reviews and comments.

The phrase rules are data (``data/relations.toml``). For every reference to another PR,
issue or external repository inside one sentence, every rule is tried against the text right
before and right after the reference; the strongest result wins. Code blocks, inline code,
HTML comments and URLs of other repositories are removed first; GitHub URLs of the same
repository's PRs and issues count as references. A reference in a negated clause ("not
related to #N", "unlike #N") gives no edge.

The result is a list of :class:`TextRelation` whose target is not yet resolved to a node
kind (PR or issue): :mod:`prkb.graph.build` does that with what the knowledge base knows.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..paths import data_dir
from ..profile import Profile

RELATION_TYPES = (
    "fixes-regression-from",
    "attempts-fix-of",
    "depends-on",
    "follow-up-of",
    "supersedes",
    "alternative-to",
    "reverts",
    "modifies-declaration-of",
    "mentions",
)

_F = re.IGNORECASE


@dataclass(frozen=True)
class Rule:
    type: str
    direction: str
    confidence: float
    pre: re.Pattern[str] | None
    post: re.Pattern[str] | None
    needs_fix: bool = False
    else_type: str | None = None
    else_confidence: float = 0.0
    context: re.Pattern[str] | None = None
    context_type: str | None = None
    context_direction: str | None = None
    older_type: str | None = None


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    priority: tuple[str, ...]
    issue_types: frozenset[str]
    symmetric: frozenset[str]
    settings: dict[str, Any]
    fix_words: re.Pattern[str]
    negation_pre: re.Pattern[str]
    negation_post: re.Pattern[str]
    clause_break: re.Pattern[str]
    revert_title: re.Pattern[str]
    revert_commit: re.Pattern[str]

    def rank(self, rel_type: str) -> int:
        """Higher is stronger."""
        try:
            return len(self.priority) - self.priority.index(rel_type)
        except ValueError:
            return 0

    def number(self, key: str, default: float) -> float:
        return float(self.settings.get(key, default))


def _compile(pattern: str | None, where: str, *, anchor: str) -> re.Pattern[str] | None:
    if not pattern:
        return None
    text = f"(?:{pattern})\\s*$" if anchor == "end" else f"^\\s*(?:{pattern})"
    try:
        return re.compile(text, _F)
    except re.error as e:
        raise InputError(f"relation rules: bad regex in {where}: {e}") from None


def load_rules(raw: dict[str, Any]) -> RuleSet:
    """A rule set from the parsed TOML (see data/relations.toml for the keys)."""
    settings = dict(raw.get("relations", {}))
    title = raw.get("title", {})
    rules = []
    for i, r in enumerate(raw.get("rules", [])):
        where = f"rules[{i}]"
        for key, val in (("type", r.get("type")), ("else_type", r.get("else_type")),
                         ("context_type", r.get("context_type")),
                         ("older_type", r.get("older_type"))):
            if val is not None and val not in RELATION_TYPES:
                raise InputError(f"relation rules: {where}.{key} {val!r} is not a relation type")
        if r.get("type") is None:
            raise InputError(f"relation rules: {where} has no type")
        if not r.get("pre") and not r.get("post"):
            raise InputError(f"relation rules: {where} needs a pre or a post pattern")
        direction = r.get("direction", "out")
        if direction not in ("out", "in"):
            raise InputError(f"relation rules: {where}.direction must be out or in")
        ctx = r.get("context")
        rules.append(
            Rule(
                type=r["type"],
                direction=direction,
                confidence=float(r.get("confidence", 0.5)),
                pre=_compile(r.get("pre"), f"{where}.pre", anchor="end"),
                post=_compile(r.get("post"), f"{where}.post", anchor="start"),
                needs_fix=r.get("needs") == "fix",
                else_type=r.get("else_type"),
                else_confidence=float(r.get("else_confidence", 0.3)),
                context=re.compile(ctx, _F) if ctx else None,
                context_type=r.get("context_type"),
                context_direction=r.get("context_direction", direction),
                older_type=r.get("older_type"),
            )
        )

    def rx(key: str, default: str) -> re.Pattern[str]:
        try:
            return re.compile(str(settings.get(key, default)), _F)
        except re.error as e:
            raise InputError(f"relation rules: bad regex in relations.{key}: {e}") from None

    return RuleSet(
        rules=tuple(rules),
        priority=tuple(settings.get("priority", RELATION_TYPES)),
        issue_types=frozenset(settings.get("issue_types", ["mentions"])),
        symmetric=frozenset(settings.get("symmetric", ["alternative-to"])),
        settings=settings,
        fix_words=rx("fix_words", r"\bfix"),
        negation_pre=rx("negation_pre", r"\bnot\b"),
        negation_post=rx("negation_post", r"^\s*is\s+not\b"),
        clause_break=rx("clause_break", r"[,;:]"),
        revert_title=re.compile(title.get("revert", r'^Revert\s+"(?P<inner>.*)"')),
        revert_commit=re.compile(
            title.get("revert_commit", r"\breverts?\s+commit\s+(?P<sha>[0-9a-f]{7,40})\b"), _F
        ),
    )


@lru_cache(maxsize=4)
def default_rules(path: str | None = None) -> RuleSet:
    """The bundled rules (``data/relations.toml``), or a TOML file given by path."""
    file = data_dir() / "relations.toml" if path is None else Path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"relation rules {file}: {e}") from None
    return load_rules(raw)


# --- cleaning ------------------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_INLINE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_URL = re.compile(r"\bhttps?://[^\s<>()\[\]`'\"]+", re.I)
_GH_URL = re.compile(
    r"^https?://(?:www\.)?github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)/"
    r"(?P<kind>pull|issues)/(?P<num>\d+)(?:[/#?].*)?$",
    re.I,
)
_CODE_MARK = re.compile("\u27e8(\\d+)\u27e9")  # ⟨N⟩ stands for the N-th inline code span


def clean_text(text: str, repo: str, codes: list[str] | None = None) -> str:
    """The text with code and foreign URLs removed; same-repo PR/issue URLs become #N.

    Inline code spans become placeholders ``⟨i⟩``; their text is appended to ``codes`` so
    that evidence can quote them (see :func:`restore_code`).
    """
    spans = codes if codes is not None else []
    text = _HTML_COMMENT.sub(" ", text)
    text = _FENCE.sub("\n\n", text)

    def inline(m: re.Match[str]) -> str:
        spans.append(" ".join(m.group(2).split()))
        return f"\u27e8{len(spans) - 1}\u27e9"

    text = _INLINE.sub(inline, text)

    def url(m: re.Match[str]) -> str:
        u = m.group(0).rstrip(".,;:!?")
        tail = m.group(0)[len(u):]
        g = _GH_URL.match(u)
        if g and f"{g['owner']}/{g['name']}".lower() == repo.lower():
            prefix = "issue " if g["kind"].lower() == "issues" else "PR "
            return f"{prefix}#{g['num']}{tail}"
        return " " + tail

    return _URL.sub(url, text)


# --- sentences and references ----------------------------------------------------------------

_SENT_SPLIT = re.compile(
    r"(?<=[.!?])\s+|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s|>|\|))"
)
_REF = re.compile(
    r"(?<![\w/&#])(?:(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*))?#(?P<num>\d{1,7})(?![\w])"
)
_FILLER = re.compile(
    r"\b(?:the|this|that|a|an|PR|PRs|pull\s+request|pull\s+requests|issue|issues|change|"
    r"changes|commit)\s*$",
    _F,
)
_PRE_LIST = re.compile(r"(?:[\w.-]+/[\w.-]+)?#\d+\s*(?:,|\band\b|\bor\b|&|/)\s*$", _F)
_POST_LIST = re.compile(r"^(?:\s*(?:,|\band\b|\bor\b|&|/)\s*(?:[\w.-]+/[\w.-]+)?#\d+)+", _F)
_WINDOW = 160  # characters either side of a reference that the rules look at
_ISSUE_HINT = re.compile(r"\bissues?\s*$", _F)


@dataclass(frozen=True)
class Reference:
    """One reference found in a text: a number of this repository or of another one."""

    number: int
    repo: str | None  # owner/name of another repository (an external node), else None
    issue_hint: bool  # the text names it an issue (URL /issues/N or "issue #N")
    commit: str | None = None

    @property
    def key(self) -> str:
        if self.commit:
            return f"commit:{self.commit}"
        if self.repo:
            return f"ext:{self.repo}#{self.number}"
        return f"{'issue' if self.issue_hint else 'pr'}:{self.number}"


@dataclass(frozen=True)
class TextRelation:
    """A relation from text, before the target is resolved (``ref`` says what was named)."""

    source: int  # the number of the PR whose text it is (0 for a record without a number)
    ref: Reference
    type: str
    direction: str  # out: this PR -> ref; in: ref -> this PR
    where: str  # the field the reference is in: title, body, comment, review, review-comment
    quote: str  # the words around the reference, as written (cut to ``evidence_chars``)
    confidence: float
    # the type to give instead when the PR the edge starts from is older than the one it
    # points to (``older_type`` of the rule; see data/relations.toml)
    older_type: str | None = None
    path: str | None = None  # the file of a review comment


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENT_SPLIT.split(text):
        s = " ".join(part.split())
        if s:
            out.append(s)
    return out


def _pre_variants(pre: str) -> list[str]:
    """The text before a reference as written, without earlier references of a list
    ("#1, #2 and"), and also without filler words ("the PR", "issue")."""

    def strip(rx: re.Pattern[str], text: str) -> str:
        prev = None
        while prev != text:
            prev = text
            text = rx.sub("", text).rstrip()
            text = text + " " if text else text
        return text

    no_list = strip(_PRE_LIST, pre)
    bare = no_list
    prev = None
    while prev != bare:
        prev = bare
        bare = strip(_PRE_LIST, strip(_FILLER, bare))
    return list(dict.fromkeys((pre, no_list, bare)))


def _clause(pre: str, rules: RuleSet) -> str:
    parts = rules.clause_break.split(pre)
    return parts[-1] if parts else pre


def _evidence(sentence: str, start: int, end: int, limit: int) -> str:
    """The words around a reference, about ``limit`` characters, cut between words."""
    half = max(20, limit // 2)
    a = max(0, start - half)
    b = min(len(sentence), end + half)
    # a cut inside a word moves to the word's edge (towards the reference)
    while 0 < a < start and not sentence[a - 1].isspace():
        a += 1
    while start < b < len(sentence) and not sentence[b].isspace():
        b -= 1
    text = sentence[a:b].strip()
    if a > 0:
        text = "\u2026" + text
    if b < len(sentence):
        text = text + "\u2026"
    return text


def restore_code(text: str, codes: list[str], width: int = 40) -> str:
    """Put the inline code spans back into a quote (each cut to ``width`` characters)."""

    def put(m: re.Match[str]) -> str:
        i = int(m.group(1))
        code = codes[i] if i < len(codes) else "\u2026"
        if len(code) > width:
            code = code[: width - 1] + "\u2026"
        return f"`{code}`"

    return _CODE_MARK.sub(put, text)


def is_fix(title: str, text: str, profile: Profile, rules: RuleSet) -> bool:
    """A bugfix title tag of the profile, or a fix word in the title or the given text."""
    return (
        profile.title_has("bugfix", title)
        or rules.fix_words.search(title or "") is not None
        or rules.fix_words.search(text or "") is not None
    )


def classify(
    pre: str,
    post: str,
    *,
    document: str,
    fix: bool,
    rules: RuleSet,
) -> tuple[str, str, float, str | None] | None:
    """(type, direction, confidence, older_type) of one reference; None when negated."""
    clause = _clause(pre, rules)
    if rules.negation_pre.search(clause) or rules.negation_post.search(post):
        return None
    pres = _pre_variants(pre)
    post_s = _POST_LIST.sub("", post)
    best: tuple[str, str, float, str | None] | None = None
    for rule in rules.rules:
        if rule.pre is not None and not any(rule.pre.search(p) for p in pres):
            continue
        if rule.post is not None and not rule.post.search(post_s):
            continue
        rtype, direction, conf = rule.type, rule.direction, rule.confidence
        older = rule.older_type
        if rule.context is not None and rule.context_type and rule.context.search(document):
            rtype, direction = rule.context_type, rule.context_direction or direction
            older = None
        elif rule.needs_fix and not fix:
            if rule.else_type is None:
                continue
            rtype, conf, older = rule.else_type, rule.else_confidence, None
        cand = (rtype, direction, conf, older)
        if best is None or (rules.rank(rtype), conf) > (rules.rank(best[0]), best[2]):
            best = cand
    if best is None:
        return ("mentions", "out", rules.number("mention_confidence", 0.3), None)
    return best


def references(sentence: str, repo: str) -> list[tuple[Reference, int, int]]:
    out = []
    for m in _REF.finditer(sentence):
        other = m.group("repo")
        if other and other.lower() == repo.lower():
            other = None
        hint = other is None and _ISSUE_HINT.search(sentence[: m.start()]) is not None
        out.append((Reference(int(m.group("num")), other, hint), m.start(), m.end()))
    return out


def relations_in_text(
    text: str,
    *,
    number: int | None,
    title: str,
    where: str,
    profile: Profile,
    rules: RuleSet | None = None,
    path: str | None = None,
) -> list[TextRelation]:
    """Every reference in one text of PR ``number`` (``where``: body, comment, review,
    review-comment with the commented file as ``path``...)."""
    rules = rules or default_rules()
    if not text:
        return []
    limit = int(rules.number("evidence_chars", 140))
    codes: list[str] = []
    clean = clean_text(text, profile.repo, codes)
    out: list[TextRelation] = []
    for sent in sentences(clean):
        for ref, start, end in references(sent, profile.repo):
            if ref.repo is None and ref.number == number:
                continue
            res = classify(
                sent[max(0, start - _WINDOW):start],
                sent[end:end + _WINDOW],
                document=clean,
                fix=is_fix(title, sent, profile, rules),
                rules=rules,
            )
            if res is None:
                continue
            rtype, direction, conf, older = res
            quote = restore_code(_evidence(sent, start, end, limit), codes)
            out.append(TextRelation(number or 0, ref, rtype, direction, where, quote, conf, older,
                                    path))
    for m in rules.revert_commit.finditer(clean):
        sha = m.group("sha").lower()
        ref = Reference(0, None, False, commit=sha)
        quote = restore_code(_evidence(clean, m.start(), m.end(), limit), codes)
        out.append(TextRelation(number or 0, ref, "reverts", "out", where, quote, 0.9,
                                path=path))
    return out


def relations_in_title(
    title: str, *, number: int | None, profile: Profile, rules: RuleSet | None = None
) -> list[TextRelation]:
    """A revert title names the reverted PR; other references in titles are read as text."""
    rules = rules or default_rules()
    if not title:
        return []
    m = rules.revert_title.match(title)
    out: list[TextRelation] = []
    if m:
        inner = m.group("inner")
        for r in re.finditer(r"\(#(\d+)\)\s*$", inner):
            n = int(r.group(1))
            if n != number:
                out.append(TextRelation(number or 0, Reference(n, None, False), "reverts", "out",
                                        "title", title[:140], 0.9))
        return out
    # the squash-merge suffix "(#N)" is the PR itself; drop it before reading the title
    stripped = re.sub(r"\s*\(#\d+\)\s*$", "", title)
    return relations_in_text(
        stripped, number=number, title=title, where="title", profile=profile, rules=rules
    )


def relations_of_record(
    rec: dict[str, Any], profile: Profile, rules: RuleSet | None = None
) -> list[TextRelation]:
    """All text relations of one stored record (title, body, reviews, comments)."""
    rules = rules or default_rules()
    number = rec.get("number")
    title = rec.get("title") or ""
    out = relations_in_title(title, number=number, profile=profile, rules=rules)
    texts: list[tuple[str, str, str | None]] = [("body", rec.get("body") or "", None)]
    texts += [("review", r.get("body") or "", None) for r in rec.get("reviews") or []]
    texts += [("comment", c.get("body") or "", None) for c in rec.get("comments") or []]
    texts += [("review-comment", c.get("body") or "", str(c["path"]) if c.get("path") else None)
              for c in rec.get("review_comments") or []]
    for where, text, path in texts:
        out.extend(
            relations_in_text(
                text, number=number, title=title, where=where, profile=profile, rules=rules,
                path=path,
            )
        )
    return out
