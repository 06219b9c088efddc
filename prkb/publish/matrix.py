"""The support matrix: one row per metadata builder at a revision, and its history in the KB.

``matrix_at`` audits a revision of a git repository and ``matrix_rows`` turns an
:class:`~prkb.analyze.audit.AuditResult` into rows (optionally with the PR that last changed
each declaration, from the knowledge base); ``to_markdown`` renders them with the columns of
the project's own documentation table plus prkb's extras, so the output can replace that
table; ``matrix_history`` reads ``builder_levels`` (filled by the git collector) for the
site's matrix page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..analyze.audit import AuditResult, BuilderInfo, audit_revision, rule_column
from ..dates import parse_time, utc_stamp
from ..errors import InputError
from ..gitrepo import GitRepo
from ..profile import Profile
from ..store import Store


def backend_label(b: BuilderInfo) -> str:
    """The short backend name shown for a builder (its class name without the builder suffix)."""
    if b.backend_name:
        return b.backend_name
    short = b.class_name.rsplit(".", 1)[-1]
    for suffix in ("MetadataBuilder", "Builder"):
        if short.endswith(suffix) and len(short) > len(suffix):
            return short[: -len(suffix)]
    return short


def holder_title(profile: Profile) -> str:
    """The title of the matrix's class column: what the profile calls a class that holds its
    value (``[wording] holder``, e.g. "builder", "backend"; "class" when it says none), its
    first letter capitalised ("KV backend" stays "KV backend", not "Kv backend")."""
    word = profile.holder_en()
    return word[:1].upper() + word[1:]


def verdict_label(verdict: bool | None) -> str:
    """How the matrix shows what the audit rule reads of a class: it meets the rule (yes), it
    does not (no), the rule does not apply or nothing was read (n/a)."""
    return "yes" if verdict else "n/a" if verdict is None else "no"


def last_pr_for(
    store: Store, class_name: str, profile: Profile, reachable: set[str] | None = None,
    file: str | None = None,
) -> str | None:
    """The PR (or commit ref) that last changed the class's declaration (in ``file`` when
    given: a builder is its file and class), newest merge first.

    ``reachable``: the commits of the audited revision's history; then only a change merged by
    one of them counts (a PR merged after the revision, or in another repository, does not).
    """
    attrs = (*profile.family, *profile.methods)
    for pr in store.declaration_changers(class_name, attrs, file):
        if reachable is not None and pr.merge_commit_sha not in reachable:
            continue
        return f"#{pr.number}" if pr.number is not None else str(pr.ref)
    return None


def source_text(got: dict[str, Any]) -> str:
    """Where a builder's value in force comes from, as the matrix's comment says it (the state
    model's reading, :mod:`prkb.analyze.state`): nothing for the class's own declaration."""
    source = str(got.get("source") or "")
    kind, _, origin = source.partition(":")
    via = got.get("via")
    call = f", with {via}" if via and via != "__init__" else ""
    if kind == "init":
        return f"set in its __init__{call}"
    if kind == "inherited" and via:
        return f"set by the __init__ of {origin}{call}"
    if kind == "inherited":
        return f"inherited from {origin}"
    if kind == "default":
        return "the base's default"
    if kind == "absent":
        return "not set"
    if kind == "stale":
        return f"stale: declares {', '.join(got.get('stale') or [])}, which the code does not read"
    return ""


def matrix_rows(
    result: AuditResult,
    profile: Profile,
    store: Store | None = None,
    reachable: set[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per builder of the audit; the "last PR" column from ``store``, limited to the
    commits in ``reachable`` (the audited revision's history) when given."""
    rows = []
    for b in result.builders:
        comments = []
        got = (b.values or {}).get(profile.display) or {}
        if got.get("source") == "unknown":  # the state model cannot tell (analyze/state.py)
            comments.append(f"unknown: {got.get('reason') or '?'}")
        elif got:
            said = source_text(got)
            if said:
                comments.append(said)
        elif b.declared is None:
            comments.append(
                f"inherited from {b.declared_in}" if b.declared_in else "profile default"
            )
        if b.dynamic_reason:
            comments.append(b.dynamic_reason)
        rows.append(
            {
                "backend": backend_label(b),
                "backend_name": b.backend_name,
                "class": b.class_name,
                "file": b.file,
                "declared": b.declared,
                "effective": None if got.get("source") == "unknown" else b.effective,
                "levels": [] if got.get("source") == "unknown" else b.levels,
                "level_text": b.level_text() if b.dynamic else None,
                "declared_in": b.declared_in,
                "declared_attr": b.declared_attr,
                "dynamic": b.dynamic,
                "condition": b.condition,
                "dynamic_reason": b.dynamic_reason,
                "meets_rule": b.meets_rule,
                "rule_reason": b.rule_reason,
                "rule_reason_zh": b.rule_reason_zh,
                # each tracked value in force and where it comes from (analyze/state.py)
                "values": b.values,
                "comments": "; ".join(comments),
                "last_pr": last_pr_for(
                    store, b.class_name.rsplit(".", 1)[-1], profile, reachable, b.file
                )
                if store is not None
                else None,
            }
        )
    rows.sort(key=lambda r: (str(r["backend"]).lower(), str(r["class"])))
    return rows


def matrix_at(
    path: str | Path,
    rev: str,
    profile: Profile,
    store: Store | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """(resolved revision, :func:`matrix_rows`) of the git repository at ``path``: the audit
    of ``rev``; with a knowledge base, each builder's "last PR" is one merged at or before
    ``rev``, in this repository."""
    with GitRepo(path) as repo:
        result = audit_revision(repo, rev, profile, warn=warn)
        reachable = set(repo.git("rev-list", result.rev).split()) if store is not None else None
    return result.rev, matrix_rows(result, profile, store, reachable)


def _cell(text: str | None) -> str:
    if not text:
        return ""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str | None) -> str:
    if not text:
        return ""
    t = " ".join(text.split())
    return f"`{t}`".replace("|", "\\|")


def to_markdown(rows: list[dict[str, Any]], profile: Profile, rev: str = "") -> str:
    """The matrix rows as a Markdown table."""
    level_header = profile.display.lstrip("_")
    # the documentation table's own first column when the profile has one; the columns of
    # the dynamic-support methods and of the audit rule's verdict only where the profile has
    # them
    dynamic = bool(profile.methods)
    with_rule = any(r["meets_rule"] is not None for r in rows) or (
        bool(profile.rules) and not rows)
    first = "Attention Backend" if profile.docs.get("table_doc") else "Backend"
    holder = holder_title(profile)
    if holder.lower() == first.lower():  # holders called backends: two "Backend" columns
        holder += " class"
    head = [
        first, level_header,
        "Comments", holder, "File",
        "Declared",
        *(["Dynamic"] if dynamic else []), *([rule_column(profile.rules)] if with_rule else []),
        "Last PR",
    ]
    out = []
    if rev:
        out.append(f"<!-- generated by prkb matrix at {rev} -->")
    out.append("| " + " | ".join(head) + " |")
    out.append("| " + " | ".join(":---" for _ in head) + " |")
    for r in rows:
        if r["levels"] and (len(r["levels"]) == 1 or r["level_text"]):
            # one level, or the set a conditional value or an overriding method can give
            level = " / ".join(_code(lv) for lv in r["levels"])
        elif r["effective"] is None:
            level = "unknown"
        else:  # a bool is shown as its spelling and value: the profile maps it to no level
            level = _code(profile.value_text(r["effective"], r.get("declared_attr")))
        dyn = "yes" if r["dynamic"] else "no"
        if r["condition"]:
            dyn += f" (if {_cell(r['condition'])})"
        out.append(
            "| " + " | ".join([
                _cell(r["backend"]), level, _cell(r["comments"]), _code(r["class"]),
                _cell(r["file"]),
                _code(r["declared"] and profile.value_text(r["declared"], r.get("declared_attr")))
                or "(inherited)", *([dyn] if dynamic else []),
                *([verdict_label(r["meets_rule"])] if with_rule else []), _cell(r["last_pr"]),
            ]) + " |"
        )
    return "\n".join(out) + "\n"


def matrix_history(store: Store, repo: str | None = None) -> dict[str, Any]:
    """Per builder, its level at every collected commit (oldest first), for the site.

    ``{"commits": [{"sha", "committed_at", "pr_ref"}], "builders": [{"class", "file",
    "levels": [{"commit_sha", "committed_at", "pr_ref", "file", "declared", "effective",
    "dynamic", "meets_rule", "level_set", "level_text"}]}]}``, the builders by class then
    file: a builder is its file and class (two classes of one name in two files are two
    builders). ``level_set`` is the list of levels the builder could report (None for rows
    stored before prkb kept it), ``level_text`` the same with conditions when the level is
    dynamic.
    """
    commits: dict[str, dict[str, Any]] = {}
    builders: dict[tuple[str, str], dict[str, Any]] = {}
    for lv in store.level_readings(repo=repo):
        commits.setdefault(
            lv.commit_sha,
            {"sha": lv.commit_sha, "committed_at": lv.committed_at, "pr_ref": lv.pr_ref},
        )
        entry = builders.get((lv.class_name, lv.file))
        if entry is None:
            entry = builders[(lv.class_name, lv.file)] = {
                "class": lv.class_name, "file": lv.file, "levels": []}
        entry["levels"].append(
            {
                "commit_sha": lv.commit_sha,
                "committed_at": lv.committed_at,
                "pr_ref": lv.pr_ref,
                "file": lv.file,
                "declared": lv.declared,
                "effective": lv.effective,
                "dynamic": lv.dynamic,
                "meets_rule": lv.meets_rule,
                "level_set": lv.level_set,
                "level_text": lv.level_text,
            }
        )
    return {"commits": list(commits.values()),
            "builders": [builders[k] for k in sorted(builders)]}


def reading_text(lv: dict[str, Any], profile: Profile) -> str:
    """A stored reading as one line: the effective value (a bool as its spelling and value,
    :meth:`Profile.value_text`), or for a dynamic builder the levels it can report with their
    conditions, then the attribute's value (older rows without them: ``(dynamic)``)."""
    value = profile.value_text(str(lv["effective"]))
    if lv.get("dynamic"):
        if lv.get("level_text"):
            # what the override reports is in force; the attribute it shadows comes second
            return f"{lv['level_text']} (dynamic; the attribute reads {value})"
        return f"{value} (dynamic)"
    return value


def history_until(history: dict[str, Any], rev: str | None) -> str | None:
    """The cutoff time ``matrix --history --rev REV`` means: the commit time of the collected
    commit whose sha starts with REV, or the end of the day REV (``YYYY-MM-DD``) or the time
    REV (ISO); None for no REV or ``HEAD`` (everything). :class:`InputError` otherwise."""
    if not rev or rev == "HEAD":
        return None
    text = rev.strip()
    if re.fullmatch(r"[0-9a-fA-F]{4,40}", text):
        hits = {c["committed_at"] for c in history["commits"]
                if c["sha"].lower().startswith(text.lower())}
        if len(hits) == 1:
            return hits.pop()
        if len(hits) > 1:
            raise InputError(f"--rev {rev}: names more than one collected commit; give more of it")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) and parse_time(text) is not None:
        return f"{text}T23:59:59Z"
    when = parse_time(text) if "T" in text or " " in text else None
    if when is not None:
        return utc_stamp(when)
    raise InputError(
        f"--rev {rev}: not a commit the knowledge base holds readings for, nor a date "
        "(give a collected commit's sha, or YYYY-MM-DD)"
    )


def history_rows(history: dict[str, Any], *, until: str | None = None) -> list[dict[str, Any]]:
    """The rows of ``matrix --history``: one per change of a builder's reading, oldest first
    per builder. A builder is its file and class: two classes of one name in two files are two
    builders, never one alternating between them. ``until``: only readings at commits made at
    or before that time (:func:`history_until`)."""
    rows: list[dict[str, Any]] = []
    for entry in history["builders"]:  # by class, then file
        cls, file = entry["class"], entry["file"]
        last = None
        for lv in entry["levels"]:
            if until is not None and str(lv["committed_at"]) > until:
                continue
            cur = (lv["effective"], lv["dynamic"], lv.get("level_text"), lv["meets_rule"])
            if cur == last:
                continue
            last = cur
            rows.append({**lv, "class": cls, "file": file})
    return rows


def history_markdown(
    history: dict[str, Any], profile: Profile, *, until: str | None = None
) -> str:
    """``matrix --history`` as a Markdown table: one row per level change of a builder (file
    and class), oldest first; a level as the profile names it, a bool as its spelling and
    value."""
    rows = history_rows(history, until=until)
    out = []
    if until is not None:
        out.append(f"Readings of commits made at or before {until}.\n")
    # the audit rule's column only where the profile names a rule
    rule = [rule_column(profile.rules)] if profile.rules else []
    head = [holder_title(profile), "File", "Date",
            "Commit", "PR", "Level" if profile.has_levels else "Value", *rule]
    out.append("| " + " | ".join(head) + " |")
    out.append("| " + " | ".join("---" for _ in head) + " |")
    for lv in rows:
        pr = f"#{lv['pr_ref']}" if str(lv["pr_ref"] or "").isdigit() else (lv["pr_ref"] or "-")
        cells = [f"`{lv['class']}`", f"`{lv['file']}`", str(lv["committed_at"])[:10],
                 f"`{str(lv['commit_sha'])[:10]}`", pr, reading_text(lv, profile),
                 *([verdict_label(lv["meets_rule"])] if rule else [])]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if not rows:
        out.append("| " + " | ".join(["-"] * 5 + ["no readings"] + ["-"] * len(rule)) + " |")
    return "\n".join(out) + "\n"
