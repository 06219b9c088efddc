"""What a report quotes from a PR's description: purpose, test plan, test commands, mentions.

All excerpts are capped so a huge or hostile body cannot blow up a report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markdown import clean_text, one_line

EXCERPT_CHARS = 800      # per quoted section
MAX_SECTIONS = 3
MAX_COMMANDS = 5
COMMAND_CHARS = 300
MENTION_CONTEXT = 160
SCAN_CHARS = 200_000     # only this much of any text is scanned for structure

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_PURPOSE = re.compile(r"purpose|motivation|summary|description|why|背景|目的|动机", re.I)
_TEST = re.compile(r"test|验证|测试", re.I)
_MENTION = re.compile(r"(?<![\w/#&])#(\d{1,7})(?!\d)")


@dataclass
class Section:
    kind: str            # purpose, test_plan, text
    heading: str
    text: str            # plain, one paragraph per line, capped
    truncated: bool = False
    commands: list[str] = field(default_factory=list)


def strip_comments(text: str) -> str:
    return _COMMENT.sub("", text)


def _paragraphs(lines: list[str], skip: set[str]) -> tuple[str, bool]:
    """Prose of a section: one line per paragraph, markup stripped, capped."""
    paras: list[str] = []
    cur: list[str] = []
    in_fence = False
    for raw in lines:
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = raw.strip()
        if line.startswith(">"):
            quoted = line.lstrip("> ").strip()
            if quoted in skip:
                continue
            line = quoted
        if not line:
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        cur.append(re.sub(r"^([-*+]|\d+[.)])\s+", "", line))
    if cur:
        paras.append(" ".join(cur))
    text = "\n".join(one_line(p) for p in paras if p.strip())
    if len(text) > EXCERPT_CHARS:
        return text[: EXCERPT_CHARS - 1].rstrip() + "…", True
    return text, False


def _commands(lines: list[str]) -> list[str]:
    """Lines of fenced code blocks, and lines that run pytest, in order, capped."""
    out: list[str] = []
    in_fence = False
    for raw in lines:
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        line = one_line(raw, COMMAND_CHARS)
        if not line:
            continue
        if in_fence or re.match(r"^`*\s*(python3? -m )?pytest\b", line):
            out.append(line.strip("`").strip())
        if len(out) >= MAX_COMMANDS:
            break
    return out


def body_sections(body: str | None, skip: list[str] | tuple[str, ...] = ()) -> list[Section]:
    """Purpose and test-plan sections of a description (else its opening text)."""
    if not body:
        return []
    text = strip_comments(clean_text(body[:SCAN_CHARS]))
    groups: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            groups.append((one_line(m.group(2), 80), []))
        else:
            groups[-1][1].append(line)
    skip_set = {one_line(s) for s in skip}
    out: list[Section] = []
    for heading, lines in groups:
        kind = "text"
        if heading and _TEST.search(heading):
            kind = "test_plan"
        elif heading and _PURPOSE.search(heading):
            kind = "purpose"
        prose, cut = _paragraphs(lines, skip_set)
        cmds = _commands(lines) if kind == "test_plan" else []
        if not prose and not cmds:
            continue
        out.append(Section(kind, heading, prose, cut, cmds))
    named = [s for s in out if s.kind != "text"]
    chosen = named if named else out[:1]
    return chosen[:MAX_SECTIONS]


def test_commands(texts: list[str]) -> list[str]:
    """pytest commands named anywhere in the given texts (sorted, unique, capped)."""
    found: set[str] = set()
    for t in texts:
        text = strip_comments(clean_text(t[:SCAN_CHARS]))
        # a command's line holds "pytest" as written: collapsing whitespace, cutting and
        # stripping join no two characters, so a text or line without it is skipped unread
        if "pytest" not in text:
            continue
        for line in text.split("\n"):
            if "pytest" not in line:
                continue
            s = one_line(line, COMMAND_CHARS).strip("`").strip()
            if re.match(r"^(python3? -m )?pytest\b", s):
                found.add(s)
    return sorted(found)[:MAX_COMMANDS]


def mentions(text: str | None, own: int | None) -> dict[int, str]:
    """PR/issue numbers written ``#N`` in a text, each with the sentence that names it."""
    if not text:
        return {}
    clean = strip_comments(clean_text(text[:SCAN_CHARS]))
    out: dict[int, str] = {}
    for m in _MENTION.finditer(clean):
        n = int(m.group(1))
        if n == own or n in out:
            continue
        start = max(clean.rfind(". ", 0, m.start()), clean.rfind("\n", 0, m.start())) + 1
        end_dot = clean.find(". ", m.end())
        end_nl = clean.find("\n", m.end())
        ends = [e for e in (end_dot, end_nl) if e != -1]
        end = min(ends) + 1 if ends else len(clean)
        out[n] = one_line(clean[start:end], MENTION_CONTEXT)
    return out

