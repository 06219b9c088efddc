"""The snapshot record: one PR in the shape of GitHub's REST API, validated.

Every source (git, GitHub, curated JSONL, a collector plug-in) produces this shape;
``normalize_record`` checks it and returns a clean copy, or raises :class:`InputError` naming
the field that is wrong.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from .dates import parse_when, utc_stamp
from .errors import InputError
from .progress import BIDI_CONTROLS

# where a record comes from: the bundled collectors write github, git, git+github (one PR from
# both) and curated; a collector plug-in names its own (prkb.collect.plugin)
SOURCE_NAME = re.compile(r"[a-z][a-z0-9]*(?:[+._-][a-z0-9]+)*")
MAX_SOURCE = 40
# a review comment's keys kept besides user, path, diff_hunk, body, created_at (GitHub's ids, so
# threads can be rebuilt from in_reply_to_id, and the lines and commits it was made on)
REVIEW_COMMENT_INTS = ("id", "in_reply_to_id", "line", "original_line", "position")
REVIEW_COMMENT_SHAS = ("commit_id", "original_commit_id")
STATES = ("open", "closed", "merged")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
MAX_TEXT = 1_000_000  # characters kept of any one free-text field
MAX_INT = 2**63 - 1


def _s(v: Any, field: str, *, required: bool = False, maxlen: int = MAX_TEXT) -> str | None:
    if v is None:
        if required:
            raise InputError(f"{field!r} is missing")
        return None
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        raise InputError(f"{field!r} must be a string, got {type(v).__name__}")
    text = str(v)
    # lone surrogates cannot be stored as UTF-8: replace them
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = text.replace("\x00", "")
    if len(text) > maxlen:
        text = text[:maxlen]
    return text


def _int(v: Any, field: str, *, required: bool = False, default: int | None = None) -> int | None:
    if v is None or v == "":
        if required:
            raise InputError(f"{field!r} is missing")
        return default
    if isinstance(v, bool):
        raise InputError(f"{field!r} must be an integer, got a boolean")
    n: int | None = None
    if isinstance(v, int):
        n = v
    elif isinstance(v, float) and v.is_integer():
        n = int(v)
    elif isinstance(v, str):
        digits = v.strip().lstrip("#")
        if digits.isascii() and digits.isdigit():
            n = int(digits)
    if n is None:
        raise InputError(f"{field!r} must be an integer, got {v!r:.40}")
    if abs(n) > MAX_INT:  # SQLite stores 64-bit integers
        raise InputError(f"{field!r} is out of range: {str(n)[:40]}")
    return n


def _date(v: Any, field: str) -> str | None:
    """An ISO date as stored: an aware time in UTC (``YYYY-MM-DDTHH:MM:SSZ``), so dates sort
    as text; a time without a zone stays without one (``YYYY-MM-DDTHH:MM:SS``: its zone is
    unknown, and reports say so rather than call it UTC); a date alone stays a date.
    """
    s = _s(v, field)
    if s is None or s == "":
        return None
    if not _DATE.match(s):
        raise InputError(f"{field!r} is not an ISO date: {s!r:.40}")
    when = parse_when(s)
    if when is None:
        raise InputError(f"{field!r} is not a valid date: {s!r:.40}")
    if not isinstance(when, datetime):  # YYYY-MM-DD: a day, no time of day
        return when.isoformat()
    if when.tzinfo is None:
        return when.strftime("%Y-%m-%dT%H:%M:%S")
    return utc_stamp(when)


def _login(v: Any, field: str) -> dict[str, str] | None:
    if v is None:
        return None  # deleted account (GitHub sends user: null)
    if isinstance(v, str):
        return {"login": _s(v, field) or ""}
    if not isinstance(v, dict):
        raise InputError(f"{field!r} must be an object with a login, got {type(v).__name__}")
    login = _s(v.get("login"), f"{field}.login")
    return {"login": login} if login is not None else None


def _commit(v: Any, field: str) -> str | None:
    sha = _s(v, field)
    if sha is None:
        return None
    sha = sha.strip().lower()
    if sha and not _SHA.match(sha):
        raise InputError(f"{field!r} is not a commit id: {sha!r:.50}")
    return sha or None


def _list(v: Any, field: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError(f"{field!r} must be a list, got {type(v).__name__}")
    return v


# C0 and C1 controls, and the bidi controls a terminal must not get raw either
_TITLE_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def one_line_title(text: str) -> str:
    """A title as every output shows it: one line, without control characters (an ESC or a
    right-to-left override in a PR title reaches no page, terminal or email)."""
    return " ".join(_TITLE_CONTROLS.sub(" ", text).split())


def _obj(v: Any, field: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise InputError(f"{field} must be an object, got {type(v).__name__}")
    return v


def normalize_record(obj: Any) -> dict[str, Any]:
    """A validated copy of one snapshot record (unknown keys are dropped)."""
    rec = _obj(obj, "the record")
    source = _s(rec.get("source"), "source") or "github"
    if len(source) > MAX_SOURCE or not SOURCE_NAME.fullmatch(source):
        raise InputError(
            "'source' must be a lowercase name such as github, git, git+github, curated or "
            f"gitlab (letters, digits and + . _ - between them), got {source!r:.40}")
    number = _int(rec.get("number"), "number")
    if number is not None and number <= 0:
        raise InputError(f"'number' must be positive, got {number}")
    sha = _commit(rec.get("merge_commit_sha"), "merge_commit_sha")
    if number is None and not sha:
        raise InputError("a record needs a 'number' or a 'merge_commit_sha'")
    state = (_s(rec.get("state"), "state") or "").lower() or None
    merged_at = _date(rec.get("merged_at"), "merged_at")
    if state is None:
        state = "merged" if merged_at else "open"
    if state not in STATES:
        raise InputError(f"'state' must be open, closed or merged, got {state!r:.40}")
    if state == "closed" and merged_at:
        state = "merged"
    out: dict[str, Any] = {
        "number": number,
        "title": one_line_title(_s(rec.get("title"), "title", maxlen=2000) or ""),
        "body": _s(rec.get("body"), "body"),
        "state": state,
        "created_at": _date(rec.get("created_at"), "created_at"),
        "updated_at": _date(rec.get("updated_at"), "updated_at"),
        "closed_at": _date(rec.get("closed_at"), "closed_at"),
        "merged_at": merged_at,
        "merge_commit_sha": sha,
        "html_url": _s(rec.get("html_url"), "html_url", maxlen=2000),
        "user": _login(rec.get("user"), "user"),
        "labels": [],
        "base": None,
        "files": [],
        "reviews": [],
        "comments": [],
        "review_comments": [],
        "source": source,
    }
    for i, lab in enumerate(_list(rec.get("labels"), "labels")):
        name = lab.get("name") if isinstance(lab, dict) else lab
        out["labels"].append({"name": _s(name, f"labels[{i}].name", maxlen=200) or ""})
    for side in ("base", "head"):
        ref = rec.get(side)
        if ref is None:
            continue
        ref = _obj(ref, f"'{side}'")
        out[side] = {"ref": _s(ref.get("ref"), f"{side}.ref", maxlen=500)}
        if ref.get("sha") is not None:
            out[side]["sha"] = _commit(ref.get("sha"), f"{side}.sha")
    for i, f in enumerate(_list(rec.get("files"), "files")):
        f = _obj(f, f"files[{i}]")
        path = _s(f.get("filename"), f"files[{i}].filename", required=True, maxlen=4096)
        assert path is not None
        if not path.strip():
            raise InputError(f"'files[{i}].filename' is empty")
        out["files"].append(
            {
                "filename": path,
                "status": _s(f.get("status"), f"files[{i}].status", maxlen=40) or "modified",
                "additions": _int(f.get("additions"), f"files[{i}].additions", default=0),
                "deletions": _int(f.get("deletions"), f"files[{i}].deletions", default=0),
                "patch": _s(f.get("patch"), f"files[{i}].patch", maxlen=20_000_000),
                "previous_filename": _s(
                    f.get("previous_filename"), f"files[{i}].previous_filename"
                ),
            }
        )
    for i, r in enumerate(_list(rec.get("reviews"), "reviews")):
        r = _obj(r, f"reviews[{i}]")
        out["reviews"].append(
            {
                "user": _login(r.get("user"), f"reviews[{i}].user"),
                "state": _s(r.get("state"), f"reviews[{i}].state", maxlen=40) or "COMMENTED",
                "body": _s(r.get("body"), f"reviews[{i}].body") or "",
                "submitted_at": _date(r.get("submitted_at"), f"reviews[{i}].submitted_at"),
            }
        )
    for i, c in enumerate(_list(rec.get("comments"), "comments")):
        c = _obj(c, f"comments[{i}]")
        out["comments"].append(
            {
                "user": _login(c.get("user"), f"comments[{i}].user"),
                "body": _s(c.get("body"), f"comments[{i}].body") or "",
                "created_at": _date(c.get("created_at"), f"comments[{i}].created_at"),
            }
        )
    for i, c in enumerate(_list(rec.get("review_comments"), "review_comments")):
        c = _obj(c, f"review_comments[{i}]")
        out["review_comments"].append(
            {
                "user": _login(c.get("user"), f"review_comments[{i}].user"),
                "path": _s(c.get("path"), f"review_comments[{i}].path", maxlen=4096),
                "diff_hunk": _s(c.get("diff_hunk"), f"review_comments[{i}].diff_hunk"),
                "body": _s(c.get("body"), f"review_comments[{i}].body") or "",
                "created_at": _date(c.get("created_at"), f"review_comments[{i}].created_at"),
            }
        )
        kept = out["review_comments"][-1]
        for key in REVIEW_COMMENT_INTS:
            if c.get(key) is not None:
                kept[key] = _int(c.get(key), f"review_comments[{i}].{key}")
        for key in REVIEW_COMMENT_SHAS:
            if c.get(key) is not None:
                kept[key] = _commit(c.get(key), f"review_comments[{i}].{key}")
    ext = rec.get("prkb")
    if ext is not None:
        ext = _obj(ext, "'prkb'")
        clean: dict[str, Any] = {}
        if "repo" in ext:
            clean["repo"] = _s(ext.get("repo"), "prkb.repo", maxlen=200)
        if "parent" in ext:
            clean["parent"] = _s(ext.get("parent"), "prkb.parent", maxlen=64)
        for key in (
            "symbol_changes",
            "findings",
            "builder_levels",
            "notes",
            "relations",
            "lineage",
            "findings_fixed",
        ):
            if key in ext:
                items = _list(ext.get(key), f"prkb.{key}")
                clean[key] = [
                    _ext_item(key, j, it) if key != "notes" else _scrub(it, f"prkb.notes[{j}]")
                    for j, it in enumerate(items)
                ]
        if "state_changes" in ext:  # null: the collector did not read the code's state
            raw_state = ext.get("state_changes")
            clean["state_changes"] = None if raw_state is None else [
                _ext_item("state_changes", j, it)
                for j, it in enumerate(_list(raw_state, "prkb.state_changes"))
            ]
        if "reads" in ext:  # null: not read
            clean["reads"] = _reads(ext.get("reads"))
        if "framework" in ext:
            clean["framework"] = _framework(ext.get("framework"))
        out["prkb"] = clean
    return out


def _names(v: Any, field: str) -> list[str]:
    return [str(_s(x, field, required=True, maxlen=1000)) for x in _list(v, field)]


def _framework(v: Any) -> dict[str, Any]:
    """``prkb.framework``: ``{"files": [path], "levels": {"before": [name] | null, "after":
    [name] | null}}`` (levels only when the audit read both revisions)."""
    fw = _obj(v or {}, "'prkb.framework'")
    out: dict[str, Any] = {"files": _names(fw.get("files"), "prkb.framework.files")}
    if fw.get("levels") is not None:
        lv = _obj(fw["levels"], "'prkb.framework.levels'")
        out["levels"] = {side: None if lv.get(side) is None
                         else _names(lv[side], f"prkb.framework.levels.{side}")
                         for side in ("before", "after")}
    return out


def _reads(v: Any) -> dict[str, dict[str, str]] | None:
    """``prkb.reads``: ``{"before": {spelling: "path:line"}, "after": {...}}`` or null."""
    if v is None:
        return None
    obj = _obj(v, "'prkb.reads'")
    out: dict[str, dict[str, str]] = {}
    for side in ("before", "after"):
        got = _obj(obj.get(side) or {}, f"'prkb.reads.{side}'")
        out[side] = {str(_s(k, f"prkb.reads.{side}", required=True, maxlen=200)):
                     str(_s(w, f"prkb.reads.{side}.{k}", required=True, maxlen=1000))
                     for k, w in got.items()}
    return out


# per collector-fact list: the keys an item must have, and the type each known key must have
_STR, _OPT_STR, _NUM, _ANY = "a string", "a string or null", "a number", "any"
_EXT_FIELDS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "symbol_changes": (
        ("file", "attr"),
        {"file": _STR, "class": _OPT_STR, "class_name": _OPT_STR, "attr": _STR,
         "before": _OPT_STR, "after": _OPT_STR, "direction": _OPT_STR, "before_attr": _OPT_STR,
         "before_file": _OPT_STR},
    ),
    "findings": (
        ("rule",),
        {"rule": _STR, "file": _OPT_STR, "class": _OPT_STR, "class_name": _OPT_STR,
         "message_en": _OPT_STR, "message_zh": _OPT_STR, "commit": _OPT_STR,
         "severity": _OPT_STR},
    ),
    "builder_levels": (
        ("class", "file"),
        {"class": _STR, "file": _STR, "declared": _OPT_STR, "effective": _OPT_STR,
         "dynamic": _ANY, "meets_rule": _ANY, "levels": _ANY, "level_text": _OPT_STR},
    ),
    "relations": (
        (),
        {"type": _OPT_STR, "direction": _OPT_STR, "evidence": _OPT_STR, "confidence": _NUM},
    ),
    "lineage": ((), {"commit": _OPT_STR, "file": _OPT_STR, "lines": _NUM}),
    "findings_fixed": (("rule", "class"), {"rule": _STR, "file": _OPT_STR, "class": _STR}),
    "state_changes": (
        ("file", "class", "value"),
        {"file": _STR, "class": _STR, "value": _STR, "before": _OPT_STR, "after": _OPT_STR,
         "before_source": _OPT_STR, "after_source": _OPT_STR, "previous_file": _OPT_STR},
    ),
}


def _scrub(v: Any, field: str, depth: int = 0) -> Any:
    """A JSON value with every string made storable (no lone surrogates, no NUL)."""
    if depth > 20:
        raise InputError(f"{field!r} is nested too deeply")
    if isinstance(v, str):
        return _s(v, field)
    if isinstance(v, list):
        return [_scrub(x, field, depth + 1) for x in v]
    if isinstance(v, dict):
        return {_s(str(k), field): _scrub(x, field, depth + 1) for k, x in v.items()}
    return v


def _ext_item(key: str, j: int, item: Any) -> dict[str, Any]:
    """One item of a collector-fact list (``prkb.symbol_changes[j]``...), checked and scrubbed."""
    where = f"prkb.{key}[{j}]"
    it: dict[str, Any] = _scrub(_obj(item, where), where)
    required, types = _EXT_FIELDS[key]
    if key == "builder_levels" and "spec_ready" in it:
        # the name of the rule's reading in records written before store migration 0009
        it.setdefault("meets_rule", it["spec_ready"])
        del it["spec_ready"]
    if key == "symbol_changes" and it.get("class") is None and it.get("class_name") is None:
        raise InputError(f"{where!r} needs a 'class'")
    for name in required:
        if it.get(name) in (None, ""):
            raise InputError(f"'{where}.{name}' is missing")
    for name, want in types.items():
        v = it.get(name)
        if v is None or want == _ANY:
            continue
        ok = (
            isinstance(v, str) if want in (_STR, _OPT_STR)
            else isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= MAX_INT
        )
        if not ok:
            raise InputError(f"'{where}.{name}' must be {want}, got {type(v).__name__}")
    if key == "relations":
        target = it.get("target", it.get("other"))
        if isinstance(target, bool) or not isinstance(target, int | str | None):
            raise InputError(f"'{where}.target' must be a PR number or a node key")
        if isinstance(target, str) and target.lstrip("#").isdigit():
            _int(target, f"{where}.target")
        if isinstance(target, int):
            _int(target, f"{where}.target")
    return it


def record_ref(rec: dict[str, Any]) -> str:
    if rec.get("number") is not None:
        return str(rec["number"])
    return f"sha:{rec['merge_commit_sha']}"


# --- one PR from two sources -------------------------------------------------------------------

# what GitHub knows better than history: the discussion and the PR's own dates and names
DISCUSSION = (
    "number", "title", "body", "created_at", "updated_at", "closed_at", "merged_at",
    "html_url", "user", "labels", "base", "head", "reviews", "comments", "review_comments",
)


def merge_sources(code: dict[str, Any], talk: dict[str, Any]) -> dict[str, Any]:
    """One record of a PR collected from git (``code``: files, patches, merge commit and the
    ``prkb`` facts) and from GitHub (``talk``: title, body, author, labels, dates, reviews and
    comments); ``source`` is ``git+github``. Both are normalized records of the same PR.

    State: GitHub's when it says merged; when it does not (a PR closed on GitHub whose commit
    reached history anyway), history's ``merged`` stays and a note says what GitHub said.
    """
    out = dict(code)
    for key in DISCUSSION:
        if key in talk:
            out[key] = talk[key]
    out["source"] = "git+github"
    if talk.get("state") != "merged":
        out["merged_at"] = code.get("merged_at")
        ext = dict(out.get("prkb") or {})
        note = (f"GitHub reports this PR as {talk.get('state')}, but its commit is in the "
                "history read by collect git")
        ext["notes"] = [*[n for n in ext.get("notes") or [] if n != note], note]
        out["prkb"] = ext
    return out


def merge_stored(stored: dict[str, Any] | None, incoming: dict[str, Any]) -> dict[str, Any]:
    """The record to store when ``incoming`` arrives for a PR already stored as ``stored``
    (both normalized): a git record and a GitHub one become one (:func:`merge_sources`),
    whichever came first; anything else replaces the stored record."""
    if stored is None:
        return incoming
    have, new = stored.get("source"), incoming.get("source")
    if new == "github" and have in ("git", "git+github"):
        return merge_sources(stored, incoming)
    if new == "git" and have in ("github", "git+github"):
        return merge_sources(incoming, stored)
    return incoming
