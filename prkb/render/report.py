"""PR reports: one analysis (``report_context``), rendered per language and format.

``report_context`` gathers only facts from the knowledge base and the profile (codes, names,
values, excerpts); every sentence a reader sees comes from the templates under
``templates/report/`` and the message catalogs. One template, ``report/report.j2``, makes
every format through the formatter of :mod:`.formats`: ``md`` (Markdown), ``txt`` (plain
text for e-mail) and, with :func:`render_context`, an HTML fragment (the site's PR pages).
``prkb report --format html`` is a standalone page made from the Markdown by ``to_html``.
Output is deterministic: the same knowledge base gives byte-identical reports.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from typing import Any

import jinja2

from ..analyze.conditions import condition_shift
from ..analyze.excerpt import Excerpt, changed_lines, excerpt_from_patch, excerpt_from_source
from ..analyze.risk import is_declaration_core, platform_split, risk_tags_for
from ..analyze.scope import Scope, priors, scope_of
from ..analyze.topics import synthesize
from ..errors import InputError
from ..evidence import is_inferred
from ..gitobj import GitError, GitRepo
from ..models import Finding, SymbolChange
from ..profile import Profile, load_profile
from ..store import Store
from .body import body_sections, mentions, test_commands
from .formats import FORMATTERS, FormatConstants, drop_marks, filters_of
from .i18n import (
    LANGS,
    ConstantMessages,
    cjk_spaced,
    escaping_gettext,
    html_env,
    jinja_env,
    language_cache,
    rules_key,
    sentence_macros,
    subject_catalog,
)
from .jinja_calls import plain_call
from .markdown import to_html
from .patches import classes_touched, key_hunks, rebuilt, related_calls, related_names

FORMATS = ("md", "txt", "html")
_TAG_ORDER = (
    "core-path", "missing-tests", "platform-specific", "level-raised", "level-lowered",
    "declaration-removed", "dynamic-support", "depends-on-pr", "audit-finding",
    "patch-unavailable", "revert", "small-change",
)
# Tags whose reasons from risk_tags_for are identifiers (shown verbatim as code).
_VERBATIM_REASONS = (
    "level-raised", "level-lowered", "declaration-removed", "dynamic-support", "audit-finding",
    "patch-unavailable",
)
TEXT_ORIGIN = {"github": "description", "git+github": "description", "git": "commit",
               "curated": "paraphrase"}
WHY_IN_A_WORD = {
    "lowered": "correctness-fix",
    "raised": "performance",
    "added": "new-declaration",
    "removed": "inherited",
    "dynamic-added": "run-time",
    "dynamic-removed": "static",
    "dynamic-changed": "run-time",
    "renamed": "rename",
    "moved": "move",
    "changed": "changed",
}


def why_in_a_word(direction: str, profile: Profile) -> str:
    """The reason word of a change's direction (:data:`WHY_IN_A_WORD`); a raise or a lowering
    means a performance change or a fix only for a profile of ordered levels (kind ``enum``):
    of an int it is a change."""
    if not profile.has_levels and direction in ("raised", "lowered"):
        return "changed"
    return WHY_IN_A_WORD.get(direction, "changed")


def _module_of(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    mod = path[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def _file_type(path: str, category: str, profile: Profile, declares: bool) -> str:
    if category != "source":
        return category
    if declares or profile.is_core_path(path):
        return "core-logic"
    if "config" in path.rsplit("/", 1)[-1]:
        return "config"
    return "supporting"


def _meaning(profile: Profile, lang: str, value: str | None) -> str | None:
    if not value:
        return None
    return profile.level_meaning.get(lang, {}).get(profile.normalize_level(value))


def _recommend(
    changes: list[dict[str, Any]], findings: list[Any], missing_tests: bool,
    spec_state: str | None, flag_levels: set[str], profile: Profile,
) -> str:
    """The recommended-action code (templates word it). ``spec_state``: the consistency
    audit's reading of the raised classes (see ``_spec_readiness``). A first declaration
    counts as a raise only above the profile's default level (as in ``analyze/scope.py``)."""
    dirs = {c["direction"] for c in changes}
    if findings:
        return "resolve-findings"
    if not profile.has_levels:  # no level: a raise or a lowering is no fix nor speed-up
        return "other" if changes else "no-change"
    if "lowered" in dirs:
        return "lowered-add-test" if missing_tests else "lowered"
    default = profile.level_rank(profile.default_level) or 0

    def raises(c: dict[str, Any]) -> bool:
        if c["direction"] == "raised" or c.get("raises_to"):  # (a condition shift: there)
            return True
        rank = profile.level_rank(c["after"]) if c["direction"] == "added" else None
        return rank is not None and rank > default

    raised = [c for c in changes if raises(c)]
    if raised:
        if any((c.get("raises_to") or c["after"]) in flag_levels for c in raised):
            if spec_state == "not-ready":
                return "raised-check"
            if spec_state == "unchecked":
                return "raised-unchecked"
            if spec_state == "ready":
                return "raised-consistent"
        return "raised-add-test" if missing_tests else "raised"
    if dirs & {"dynamic-added", "dynamic-removed", "dynamic-changed"}:
        return "dynamic"
    if "removed" in dirs:
        return "removed"
    if not changes:
        return "no-change"
    return "other"


def _same_class(a: str | None, b: str | None) -> bool:
    """Two spellings of one class: equal, or equal in their last dotted component."""
    if not a or not b:
        return False
    return a == b or a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]


# the order in which readings of several classes combine into one for the PR
_SPEC_ORDER = ("not-ready", "unchecked", "ready", "not-applicable")


def _spec_readiness(
    store: Store, facts: dict[str, Any], changes: list[dict[str, Any]], profile: Profile,
) -> dict[str, Any]:
    """Whether the classes this PR raises to a flagged level can take speculative decoding,
    as the consistency audit judged it (never judged again here).

    The judgement comes from the audit's stored results only: the PR's findings of the
    profile's rule, and the ``builder_levels`` rows (one per builder class, with
    ``spec_ready``) that the git collector stored for the PR's commit. Per class: a finding,
    or a reading with spec_ready false, is ``not-ready``; a reading with spec_ready true is
    ``ready``; a reading with no value is ``not-applicable`` (the builder reorders no batch by
    a decode threshold, so the rule does not apply); no reading at all is ``unchecked`` (a
    GitHub-only or curated record, or a collection without the audit). The lines of the patch
    that name related calls stay facts of their own (``calls``); nothing is concluded here
    from them.
    """
    rule = str(profile.audit.get("rule") or "")
    raised = [c for c in changes
              if c["flag_level"] and (c["direction"] in ("raised", "added") or c["raises_to"])]
    sha = facts.get("merge_commit_sha")
    rows = store.builder_readings(facts["repo"], sha) if raised and sha else []
    classes: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for c in raised:
        key = (c["class"], c["file"])
        if key in seen:
            continue
        seen.add(key)
        # a builder is its file and class: the finding and the reading of this file's class
        finding = any(
            (not rule or f["rule"] == rule) and _same_class(f["class"], c["class"])
            and (not f.get("file") or f["file"] == c["file"])
            for f in facts["findings"]
        )
        reading = [r for r in rows if r["file"] == c["file"]
                   and _same_class(r["class_name"], c["class"])]
        reading = ([r for r in reading if r["class_name"] == c["class"]] or reading)
        if finding:
            state, source = "not-ready", "finding"
        elif not reading:
            state, source = "unchecked", None
        elif reading[0]["spec_ready"] is None:
            state, source = "not-applicable", "reading"
        else:
            state = "ready" if reading[0]["spec_ready"] else "not-ready"
            source = "reading"
        levels = sorted(
            {x["raises_to"] or x["after"] for x in raised
             if x["class"] == c["class"] and x["file"] == c["file"]},
            key=lambda v: (profile.level_rank(v) or 0, v),
        )
        classes.append({"class": c["class"], "file": c["file"], "state": state,
                         "source": source, "levels": levels})
    groups = []
    for state in _SPEC_ORDER:
        members = [x for x in classes if x["state"] == state]
        if members:
            levels = sorted({lv for x in members for lv in x["levels"]},
                            key=lambda v: (profile.level_rank(v) or 0, v))
            groups.append({"state": state, "classes": sorted({x["class"] for x in members}),
                           "levels": levels})
    return {
        "state": groups[0]["state"] if groups else None,
        "commit": sha,
        "checked": bool(rows),
        "classes": classes,
        "groups": groups,
    }


KEY_FILES = 15  # at most this many files (and related lines) are listed for a big PR


def _key_files(
    files: list[dict[str, Any]], patches: dict[str, str | None], classes: list[str],
    rel_names: list[str], profile: Profile,
) -> tuple[list[dict[str, Any]], dict[str, int] | None]:
    """The files a report lists, and what it leaves out (None: nothing).

    A PR of at most ``KEY_FILES`` files shows them all. A bigger one (a repository-wide
    reformat touches hundreds) shows, up to ``KEY_FILES``, the files that matter to the
    symbol, in this order: declaration changes, related calls, core paths, files whose patch
    names the symbol family or a related call, test files whose patch names one of those or a
    changed class; the others are counted with their changed lines.
    """
    if len(files) <= KEY_FILES:
        return files, None
    names = [*rel_names, *classes]

    def names_symbol(path: str) -> bool:
        patch = patches.get(path) or ""
        return bool(patch) and (profile.mentions_family(patch) or any(n in patch for n in names))

    def rank(f: dict[str, Any]) -> int | None:
        if f["role"] == "declaration":
            return 0
        if f["role"] == "related-call":
            return 1
        if profile.is_core_path(f["path"]):
            return 2
        if f["category"] == "source" and names_symbol(f["path"]):
            return 3
        if f["category"] == "test" and names_symbol(f["path"]):
            return 4
        return None

    ranked = [(r, i) for i, f in enumerate(files) if (r := rank(f)) is not None]
    keep = sorted(i for _r, i in sorted(ranked)[:KEY_FILES])
    shown = [files[i] for i in keep]
    kept = set(keep)
    rest = [f for i, f in enumerate(files) if i not in kept]
    lines = sum(int(f.get("additions") or 0) + int(f.get("deletions") or 0) for f in rest)
    return shown, {"count": len(rest), "lines": lines}


def _clone(store: Store, facts: dict[str, Any]) -> GitRepo | None:
    """The clone the git collector read this PR's repository from (its ``clone`` cursor),
    when the record's code comes from git and the clone is still there; else None."""
    if facts["source"] not in ("git", "git+github") or not facts.get("merge_commit_sha"):
        return None
    path = store.get_state("git", facts["repo"], "clone")
    if not path:
        return None
    try:
        return GitRepo(path)
    except (GitError, InputError):  # the clone moved or is gone: the patch is read instead
        return None


def _excerpts(
    path: str, patch: str | None, changes: list[dict[str, Any]], profile: Profile,
    blob: tuple[GitRepo, str] | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """The explained excerpt of each class whose declaration this PR changed in ``path``: the
    class as it reads after the change, changed lines marked. From the file at the merge
    commit when ``blob`` (the clone and the commit) is given and the clone has it, else from
    the stored patch. Also whether the clone was asked and lacked the file's blob."""
    text: str | None = None
    if blob is not None:
        git, sha = blob
        try:
            text = git.read_text(f"{sha}:{path}")
        except GitError:
            text = None
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in changes:
        if c["file"] != path or c["class"] in seen or c["direction"] in ("removed",):
            continue
        seen.add(c["class"])
        ex = None
        if text is not None:
            ex = excerpt_from_source(text, path, c["class"], c["attr"], profile,
                                     changed=changed_lines(patch) if patch else frozenset())
        if ex is None and patch:
            ex = excerpt_from_patch(patch, path, c["class"], c["attr"], profile,
                                    level=c["after"] if c["after"] != "overridden" else None)
        if ex is not None and ex.blocks:
            out.append(_excerpt(ex, c))
    return out, blob is not None and text is None


def _excerpt(ex: Excerpt, change: dict[str, Any]) -> dict[str, Any]:
    """An excerpt as the template reads it: numbered lines, ``+`` on the changed ones, and
    its notes as codes and values (worded by the template)."""
    width = max(len(str(ln.number or "")) for b in ex.blocks for ln in b.lines)
    rows: list[str] = []
    for i, b in enumerate(ex.blocks):
        if i:
            rows.append(" " * width + "   ...")
        for ln in b.lines:
            mark = "+" if ln.changed else " "
            rows.append(f"{ln.number or '':>{width}} {mark} {ln.text}")
    return {"class": ex.class_name, "attr": ex.attr, "file": ex.file, "source": ex.source,
            "commit": None,
            "text": "\n".join(rows), "truncated": ex.truncated,
            "changed": sum(ln.changed for b in ex.blocks for ln in b.lines),
            "before": change["before"], "after": change["after"],
            "direction": change["direction"],
            "notes": [{"code": n.code, **n.args} for n in ex.notes]}


def _topic(t: Any) -> dict[str, Any]:
    q = t.decisive
    return {
        "kind": t.kind, "outcome": t.outcome, "evidence": t.evidence,
        "participants": [vars(p) for p in t.participants], "opener": t.opener,
        "comments": t.comments, "path": t.path, "line": t.line,
        "decisive": vars(q) if q is not None else None,
    }


# effect bases whose levels are the builder's effective ones at both revisions
READ_FROM_STATE = ("inherited", "now-inherits", "new-builder", "stale", "restored", "state",
                   "base-changed")


def state_side(c: dict[str, Any], side: str) -> dict[str, Any]:
    """One side of a state change for the template: ``kind`` (``no-builder`` for a class
    that is no builder there, else the source's kind), the class it comes from, its value."""
    source = c.get(f"{side}_source")
    if source is None:
        return {"kind": "no-builder"}
    kind, _, origin = str(source).partition(":")
    return {"kind": kind, "from": origin or None, "value": c.get(side),
            "written": c.get(f"{side}_written"), "origin_file": c.get(f"{side}_origin_file"),
            "stale": [s.rsplit(".", 1)[-1] for s in c.get(f"{side}_stale") or []],
            "raises": _raises(c.get(f"{side}_raises")), "reason": c.get(f"{side}_reason"),
            "via": c.get(f"{side}_via")}


def state_row(c: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """A stored state change as the report and the digest say it: both sides
    (:func:`state_side`), and ``outside``: the builder's file is none of ``paths`` (the files
    the change touched), it inherits what changed or is left on an unread spelling."""
    return {"class": c["class"], "file": c["file"], "value": c["value"],
            "previous_file": c.get("previous_file"), "before": state_side(c, "before"),
            "after": state_side(c, "after"), "outside": c["file"] not in paths}


def _raises(items: list[str] | None) -> list[list[str]]:
    """Where the ``__init__`` that sets a value raises first (``E when <test>``, as the state
    model keeps them) as [error, condition] pairs."""
    return [list(r.partition(" when ")[::2]) for r in items or []]


def _threshold_from_state(
    ex: dict[str, Any], levels: list[dict[str, Any]], profile: Profile,
) -> list[dict[str, Any]]:
    """An excerpt's notes, its ``threshold-none`` (the class sets no threshold itself) told
    where the threshold comes from at the PR's commit (the state model's reading stored with
    the builder's row): ``from`` (a class, ``default`` or ``absent``), ``value`` and ``file``;
    for the root builder base itself, code ``threshold-root``. Without a reading the note
    says only what the class shows."""
    attr = str(profile.audit.get("threshold_attr") or "")
    roots = profile.builder_bases
    row = next((b for b in levels if b.get("class") == ex["class"]
                and b.get("file") == ex["file"]), None)
    got = (row or {}).get("values", {}).get(attr) if attr else None
    out = []
    own = isinstance(got, dict) and got.get("source") in ("init", "declared")
    if own and any(n["code"] == "threshold-assign" for n in ex["notes"]):
        # what the class's own settings leave, as the state model reads them (a ``+=`` on the
        # value before it, the raises before it), in place of each statement read alone
        assert isinstance(got, dict)
        ready = (row or {}).get("spec_ready")
        value = str(got.get("value") or "")
        out.append({"code": "threshold-state", "attr": attr, "value": got.get("value"),
                    "where": got.get("source"),
                    # a constant does not change with the speculative tokens, whatever it is
                    "constant": int(value) if value.isdigit() else None,
                    "grows": "yes" if ready is True else "no" if ready is False else "",
                    "raises": _raises(got.get("raises"))})
    for note in ex["notes"]:
        if note["code"] == "threshold-assign" and out and out[0]["code"] == "threshold-state":
            continue
        if note["code"] == "threshold-none" and ex["class"].rsplit(".", 1)[-1] in roots:
            note = {"code": "threshold-root"}
        elif note["code"] == "threshold-none" and isinstance(got, dict) and str(
                got.get("source") or "").startswith(("inherited:", "default", "absent")):
            kind, _, origin = str(got.get("source") or "").partition(":")
            note = {**note, "from": origin if kind == "inherited" else kind,
                    "value": got.get("value"), "origin_file": got.get("origin_file")}
        out.append(note)
    return out


def state_facts(facts: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """The code's state change of the PR (:mod:`prkb.analyze.state`) as the report says it:
    ``known`` (False: ``reason`` says why, ``no-audit`` or ``no-clone``), and each changed
    tracked value of each builder, the profile's symbol first, then by file and class.
    ``outside``: how many of them are builders in files the PR did not change (they inherit
    what it changed, or are left on a spelling it stopped reading)."""
    got = facts.get("state_changes")
    if got is None:  # from git without the audit, or from elsewhere: no clone was read
        reason = "no-audit" if facts["source"] in ("git", "git+github") else "no-clone"
        return {"known": False, "reason": reason, "changes": [], "outside": 0, "framework": [],
                "framework_files": []}
    # a renamed file's previous path is a file the PR changed too (a class removed with the
    # rename is filed there)
    paths = {p for f in facts["files"] for p in (f["path"], f.get("previous_path")) if p}
    rows = [state_row(c, paths) for c in got]
    rows.sort(key=lambda r: (r["value"] != profile.display, r["file"], r["class"], r["value"]))
    framework = _framework(facts, rows, profile)
    return {"known": True, "reason": None, "changes": rows,
            "outside": sum(r["outside"] for r in rows), "framework": framework,
            "framework_files": [x["file"] for x in framework if x["kind"] == "file"]}


def _framework(facts: dict[str, Any], rows: list[dict[str, Any]], profile: Profile,
               ) -> list[dict[str, Any]]:
    """What the PR changes of the mechanism itself: which spelling of the symbol the code
    reads (``reads``: the spellings read at the reading sites at the parent and at the
    commit), and the root builder base declaring another spelling, with the builders the
    state change leaves on a spelling the code no longer reads and the later PR that puts
    each back. ``read``: the spelling the code reads after the commit and where (``None``
    when no reading site was found: the base's declaration is then taken as read, and the
    sentence says so)."""
    roots = profile.builder_bases
    left = sorted({r["class"] for r in rows if r["value"] == profile.display
                   and r["after"].get("kind") == "stale"
                   and r["before"].get("kind") not in ("stale", "no-builder")})
    # the later PR that puts each one back (graph/stale.py: a fixes-regression-from to this
    # PR with a stale-restored item of that class)
    restored: dict[str, str] = {}
    for rel in facts["relations"]:
        if rel["type"] == "fixes-regression-from" and rel["direction"] == "in":
            for it in rel["evidence"]:
                if it.get("kind") == "stale-restored" and it.get("class") in left:
                    restored.setdefault(str(it["class"]), str(it.get("pr") or ""))
    reads = facts.get("reads") or {}
    before, after = dict(reads.get("before") or {}), dict(reads.get("after") or {})
    known = bool(before) and bool(after)
    now = list(after)[-1] if after else None
    out: list[dict[str, Any]] = []
    for c in facts["symbol_changes"]:
        if c["class"].rsplit(".", 1)[-1] in roots and c.get("before_attr") \
                and c["before_attr"] != c["attr"]:
            out.append({"kind": "base-spelling", "class": c["class"], "file": c["file"],
                        "old": c["before_attr"], "new": c["attr"],
                        "read": ({"attr": now, "where": after[now]} if known and now else None)})
    if known and set(before) != set(after) and not any(
            o["read"] and o["read"]["attr"] == o["new"] for o in out):
        out.insert(0, {"kind": "read-spelling", "old": list(before)[-1], "new": now,
                       "where": after[str(now)]})
    elif reads and not before and now is not None and not out:
        # the mechanism arrives: nothing read the symbol at the parent
        out.append({"kind": "read-start", "new": now, "where": after[now]})
    # the enum's levels and the mechanism's files (profile [[framework]]) it changed
    mech = facts.get("framework") or {}
    levels = mech.get("levels") or {}
    was, now_lv = levels.get("before"), levels.get("after")
    if was is None and now_lv:
        out.append({"kind": "enum-added", "enum": profile.enum, "names": now_lv})
    elif was and now_lv is None:
        out.append({"kind": "enum-removed", "enum": profile.enum, "names": was})
    elif was and now_lv:
        gone = [x for x in was if x not in now_lv]
        new = [x for x in now_lv if x not in was]
        # an old name the profile knows as an alias of a new one: a level renamed
        renamed = [(old, profile.level_aliases[old]) for old in gone
                   if profile.level_aliases.get(old) in new]
        gone = [x for x in gone if x not in dict(renamed)]
        new = [x for x in new if x not in dict(renamed).values()]
        for kind, names in (("levels-renamed", [f"{a} → {b}" for a, b in renamed]),
                            ("levels-added", new), ("levels-removed", gone)):
            if names:
                out.append({"kind": kind, "enum": profile.enum, "names": names, "pairs":
                            [list(p) for p in renamed] if kind == "levels-renamed" else []})
    counts = {f["path"]: (f.get("additions"), f.get("deletions")) for f in facts["files"]}
    for path in mech.get("files") or []:
        if path in profile.framework:
            add, dele = counts.get(path, (None, None))
            out.append({"kind": "file", "file": path, "what": profile.framework[path],
                        "additions": add, "deletions": dele})
    # the builders left stale, and who restores each, are said once: with the first item
    for i, o in enumerate(out):
        o["left"] = left if i == 0 else []
        o["restored"] = [{"class": cls, "by": restored.get(cls)} for cls in o["left"]]
    return out


def _builders(
    scope: Scope, changes: list[dict[str, Any]], spec: dict[str, Any], profile: Profile,
    read_none: set[tuple[str, str]],
) -> list[dict[str, Any]]:
    """The changed builders, each once (class and file), with the effects of its changes;
    ``platforms`` are codes (``localize`` labels them). An effect's values are shown as the
    profile says (a bool, no level, as its spelling and value: ``Profile.value_text``)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for b in scope.builders:
        key = (b.class_name, b.file)
        if key not in out:
            out[key] = {"class_name": b.class_name, "file": b.file,
                        "platforms": list(b.platforms), "effects": []}
    # builders the audit read at the PR's commit and found reordering no batch (``read_none``:
    # a ``builder_levels`` row whose spec_ready is null)
    outside = {(c["class"], c["file"]) for c in spec["classes"]
               if c["state"] == "not-applicable"} | read_none
    for e in scope.effects:  # each to the builder of its file and class
        ch = next((c for c in changes if c["class"] == e.builder and c["file"] == e.file), None)
        item = {**vars(e), **{k: profile.value_text(ch[k], ch["attr"])
                              if ch and ch[k] is not None else None
                              for k in ("before", "after")}}
        if e.when is not None or e.basis in READ_FROM_STATE:
            # a conditional value read where it changed, or the effective levels at both
            # revisions: those levels
            item["before"], item["after"] = e.level_before, e.level_after
        if item["audit"] == "not-checked" and (e.builder, e.file) in outside:
            item["audit"] = "not-applicable"  # the audit read it: the rule does not apply
        for (cls, file), entry in out.items():
            if cls == e.builder and file == e.file and item not in entry["effects"]:
                entry["effects"].append(item)
                break
    return list(out.values())


def report_context(
    store: Store, ref: str | int, lang: str, *, profile: Profile | None = None
) -> dict[str, Any]:
    """Everything a report says, as facts (no sentences). Raises NotFound."""
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    profile = profile or load_profile()
    return localize(report_facts(store, ref, profile), lang, profile)


def _platform_label(profile: Profile, code: str, lang: str) -> str:
    return next((getattr(p, lang) for p in profile.platforms if p.code == code), code)


def localize(base: dict[str, Any], lang: str, profile: Profile) -> dict[str, Any]:
    """The report context of ``lang`` from the language-independent ``report_facts``.

    Only what differs by language is built anew (level meanings, the profile's wording,
    platform labels, finding messages, profile title, core-rule reason); the rest is shared
    with ``base``, which is left unchanged (a cache may hand the same ``base`` to both
    languages).
    """
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    changes = [
        {**c, "before_meaning": _meaning(profile, lang, c["before"]),
         "after_meaning": _meaning(profile, lang, c["after"])}
        for c in base["changes"]
    ]
    risks = base["risks"]
    plat_labels = [getattr(p, lang) for p in risks["platforms"]]
    tags = [
        {"code": t["code"], "details": plat_labels} if t["code"] == "platform-specific" else t
        for t in risks["tags"]
    ]
    findings = [
        {"rule": x["rule"], "file": x["file"], "class": x["class"],
         "message": x["message_zh"] if lang == "zh" else x["message_en"],
         "commit": x["commit"], "fixed_by": x.get("fixed_by")}
        for x in risks["findings"]
    ]
    return {
        **base,
        "lang": lang,
        "profile": {**base["profile"],
                    "title": profile.title_zh if lang == "zh" else profile.title_en,
                    "meanings": profile.level_meaning.get(lang, {}),
                    "wording": profile.words(lang)},
        "changes": changes,
        "risks": {
            **risks,
            "tags": tags,
            "core_rule": {**risks["core_rule"],
                          "why": str(profile.core_rule.get(lang)
                                     or profile.core_rule.get("en") or "")},
            "platforms": plat_labels,
            "portable": getattr(risks["portable"], lang) if risks["portable"] else None,
            "title_platforms": [getattr(p, lang) for p in risks["title_platforms"]],
            "features": [{**f, "label": profile.feature_label(f["name"], lang)}
                         for f in risks["features"]],
            "builders": [{**b, "platforms": [_platform_label(profile, code, lang)
                                             for code in b["platforms"]]}
                         for b in risks["builders"]],
            "findings": findings,
        },
    }


def report_facts(store: Store, ref: str | int, profile: Profile) -> dict[str, Any]:
    """What every language's report of PR ``ref`` shares (``localize`` adds the rest).

    The caller must not change the result. Raises NotFound.
    """
    row, facts = store.pr_row_and_facts(ref)
    rec = store.raw_record(row)
    ext = rec.get("prkb") or {}
    notes = sorted({str(n) for n in ext.get("notes") or []})
    body = rec.get("body") or ""
    git_only = facts["source"] == "git"
    number = facts["number"]
    patches = {f["filename"]: f.get("patch") for f in rec.get("files") or []}

    # declaration changes, with level meanings from the profile
    flag_levels = {str(x) for x in profile.audit.get("flag_levels", [])}
    flag_order = sorted(flag_levels, key=lambda v: (profile.level_rank(v) or 0, v))
    changes = []
    for c in facts["symbol_changes"]:
        sc = SymbolChange.from_json(c)
        # a conditional value whose test gained or lost an operand: raised where it changed?
        shift = condition_shift(c["before"], c["after"], profile) \
            if c["direction"] == "changed" else None
        raises_to = shift.after if shift is not None and (
            (profile.level_rank(shift.after) or 0) > (profile.level_rank(shift.before) or 0)
        ) else None
        changes.append(
            {
                **c,
                "before_rank": profile.level_rank(c["before"]),
                "after_rank": profile.level_rank(c["after"]),
                "conditional": any(" if " in (v or "") for v in (c["before"], c["after"])),
                "why": why_in_a_word(c["direction"], profile),
                "core": is_declaration_core(sc, profile),
                "raises_to": raises_to,  # the level a condition shift raises it to, or None
                # the level it reaches (there, for a condition shift) needs a growing threshold
                "flag_level": (raises_to or c["after"]) in flag_levels,
            }
        )
    classes = sorted({c["class"] for c in changes})

    # related calls in the same PR (e.g. the reorder-threshold call)
    calls: list[dict[str, Any]] = []
    for path in sorted(patches):
        calls.extend(related_calls(path, patches[path], profile))
    reorder = str(profile.audit.get("reorder_call") or "")
    flag = str(profile.audit.get("reorder_flag") or "")
    qattr = str(profile.audit.get("query_len_attr") or "")
    spec = _spec_readiness(store, facts, changes, profile)

    # files: every file of a normal PR; of a big one, the files that matter to the symbol
    # (capped) and one line for the rest
    rel_names = related_names(profile)
    files = []
    for f in facts["files"]:
        path = f["path"]
        cat = profile.category(path)
        own = [c for c in changes if c["file"] == path]
        symbols = {f"{c['class']}.{c['attr']}" for c in own}
        symbols |= {
            f"{c['class']}: {c['name']}" if c["class"] else c["name"]
            for c in calls
            if c["file"] == path
        }
        touched = set(classes_touched(patches.get(path)))
        symbols |= {t for t in touched if not any(s.startswith(t + ".") for s in symbols)}
        role = (
            "declaration" if own
            else "test" if cat == "test"
            else "docs" if cat == "docs"
            else "build" if cat == "build"
            else "core" if profile.is_core_path(path)
            else "related-call" if any(c["file"] == path for c in calls)
            else "other"
        )
        files.append(
            {
                **f,
                "module": _module_of(path),
                "category": cat,
                "type": _file_type(path, cat, profile, bool(own)),
                "symbols": sorted(symbols),
                "role": role,
                "has_patch": bool(patches.get(path)),
            }
        )
    shown, files_more = _key_files(files, patches, classes, rel_names, profile)
    shown_paths = {f["path"] for f in shown}
    calls_shown = [c for c in calls if c["file"] in shown_paths][:KEY_FILES]
    calls_more = len(calls) - len(calls_shown)

    # key code: patch hunks that matter, else rebuilt from the recorded change (of the files
    # shown; a big PR's other files are only counted)
    code = []
    code_more = 0
    # the changed classes from the files at the merge commit, when the clone is known
    git = _clone(store, facts) if changes else None
    try:
        for path in sorted({f["path"] for f in files} | {c["file"] for c in changes}):
            hunks, cut = key_hunks(patches.get(path), profile)
            if path not in shown_paths and not any(c["file"] == path for c in changes):
                code_more += bool(hunks)
                continue
            blob = (git, str(facts["merge_commit_sha"])) if git is not None else None
            explained, missing = _excerpts(path, patches.get(path), changes, profile, blob)
            for x in explained:
                x["commit"] = facts["merge_commit_sha"] if x["source"] == "blob" else None
                x["notes"] = _threshold_from_state(x, ext.get("builder_levels") or [], profile)
            if explained:
                code.append({"file": path, "kind": "excerpt", "excerpts": explained,
                             "hunks": [], "cut": any(x["truncated"] for x in explained),
                             "blob_missing": missing})
                continue
            if hunks:
                code.append({"file": path, "kind": "patch", "hunks": hunks, "cut": cut,
                             "blob_missing": missing})
                continue
            own = [c for c in changes if c["file"] == path]
            if own:
                code.append({"file": path, "kind": "rebuilt",
                             "hunks": [rebuilt(c, profile) for c in own], "cut": False,
                             "blob_missing": missing})
    finally:
        if git is not None:
            git.close()

    # tests
    sections = body_sections(body, skip=notes)
    commands: list[str] = []
    for s in sections:
        commands.extend(x for x in s.commands if x not in commands)
    texts = [body] + [str(c.get("body") or "") for c in rec.get("comments") or []]
    commands.extend(x for x in test_commands(texts) if x not in commands)

    # review: the discussion as topics (analyze/topics.py)
    discussion = synthesize(rec)

    # relations, else mentions in the text
    mention_map: dict[int, str] = {}
    all_texts = [body]
    for key in ("reviews", "comments", "review_comments"):
        all_texts += [str(x.get("body") or "") for x in rec.get(key) or []]
    for t in all_texts:
        for n, ctx in mentions(t, number).items():
            mention_map.setdefault(n, ctx)
    # the titles of the PRs related or mentioned, in one read
    titles = store.pr_titles([*(r["other"] for r in facts["relations"]
                                if isinstance(r["other"], int)), *mention_map])
    relations = []
    for r in facts["relations"]:
        other = r["other"]
        relations.append(
            {
                **r,
                "number": other if isinstance(other, int) else None,
                "title": titles[other] if isinstance(other, int) else None,
                "inferred": is_inferred(r.get("origin"), r.get("confidence")),
            }
        )
    relations.sort(key=lambda r: (r["type"], str(r["other"]), r["direction"]))
    mention_list = [
        {"number": n, "title": titles[n], "context": mention_map[n]}
        for n in sorted(mention_map)
    ]

    # risks: tags with reasons, core rule, platforms, features, findings
    has_dep = any(r["type"] == "depends-on" and r["direction"] == "out" for r in relations)
    findings_m = [Finding.from_json(x) for x in facts["findings"]]
    symbol_changes = [SymbolChange.from_json(c) for c in facts["symbol_changes"]]
    tags, why = risk_tags_for(rec, symbol_changes, findings_m, profile, has_dependency=has_dep)
    codes = {t.code for t in tags} | {t["code"] for t in facts["risk_tags"]}
    decl_core = sorted({c["file"] for c in changes if c["core"]})
    plats = platform_split([f["filename"] for f in rec.get("files") or []],
                           facts["title"] or "", profile)
    risk_tags = []
    for code_ in sorted(codes, key=lambda c: (_TAG_ORDER.index(c) if c in _TAG_ORDER else 99, c)):
        if code_ == "core-path":
            details = sorted(set(facts["core_paths"]) | set(decl_core))
        elif code_ == "platform-specific":
            details = []  # labels of the language: localize()
        elif code_ == "depends-on-pr":
            details = [f"#{r['other']}" for r in relations if r["type"] == "depends-on"]
        elif code_ in _VERBATIM_REASONS:
            details = list(why.get(code_, []))
        else:
            details = []
        risk_tags.append({"code": code_, "details": details})
    missing_tests = "missing-tests" in codes
    # the test files of the key files first (those that name the symbol), then the others
    tests_touched = sorted(facts["tests_touched"], key=lambda p: (p not in shown_paths, p))
    findings = facts["findings"]  # messages of the language: localize()
    # the audit's reading at the PR's commit of every builder (those it changed and those the
    # state change reaches through a base), the changed ones as the spec reading says
    levels_now = ext.get("builder_levels") or []
    ready: dict[tuple[str, str], bool | None] = {
        (str(b.get("class")), str(b.get("file"))): b.get("spec_ready") for b in levels_now}
    ready.update({(c["class"], c["file"]): (None if c["state"] in ("unchecked", "not-applicable")
                                            else c["state"] == "ready")
                  for c in spec["classes"]})
    scope = scope_of(rec, symbol_changes, findings_m, profile, ready,
                     priors(facts.get("state_changes"), symbol_changes, profile.display,
                            {(str(b.get("class")), str(b.get("file"))) for b in levels_now}))

    return {
        "profile": {
            "name": profile.name,
            "rules": profile.rules,  # "" when the profile has no audit rule module
            "display": profile.display,
            "kind": profile.kind,  # what the value is: enum (levels), int, bool, str, expr
            "enum": profile.enum,
            "reorder_call": reorder,
            "reorder_flag": flag,
            "query_len_attr": qattr,
            "related_names": related_names(profile),
            "flag_levels": flag_order,
        },
        "pr": {
            "repo": facts["repo"],
            "ref": facts["ref"],
            "number": number,
            "title": facts["title"],
            "state": facts["state"],
            "author": facts["author"],
            "created_at": facts["created_at"],
            "merged_at": facts["merged_at"],
            "closed_at": facts["closed_at"],
            "url": facts["url"],
            # a commit without a PR: headed "commit <short sha> on <the repository where it
            # is reachable>" (its page's repository; a fork's own commit is there)
            "commit": _commit_name(facts),
            "source": facts["source"],
            "labels": sorted(facts["labels"]),
            "merge_commit_sha": facts["merge_commit_sha"],
            "git_only": git_only,
            # where the description text comes from: the PR's own description (quoted), the
            # commit message (git), or a paraphrase of public information (curated)
            "text": TEXT_ORIGIN.get(facts["source"], "description"),
        },
        "notes": notes,
        "summary": {
            "classes": classes,
            "action": _recommend(changes, findings, missing_tests, spec["state"], flag_levels,
                                 profile),
        },
        "motivation": {
            "has_body": bool(body.strip()),
            "sections": [vars(s) for s in sections],
        },
        "changes": changes,
        "state": state_facts(facts, profile),
        "calls": calls_shown,
        "calls_more": calls_more,
        "spec": spec,
        "tests": {"touched": tests_touched[:KEY_FILES],
                  "touched_more": len(tests_touched[KEY_FILES:]), "commands": commands},
        "files": shown,
        "files_more": files_more,
        "code": code,
        "code_more": code_more,
        "review": {"collected": not git_only, "status": discussion.status,
                   "author": discussion.author,
                   "topics": [_topic(t) for t in discussion.topics]},
        "risks": {
            "tags": risk_tags,
            "directions": sorted({c["direction"] for c in changes}),
            "core_rule": {
                "applies": bool(decl_core),
                "files": decl_core,
                "prefixes": sorted(profile.core_rule.get("declaration_paths", [])),
            },
            "core_paths": sorted(facts["core_paths"]),
            # platforms of the changed code, portable code (not a restriction), platforms
            # only the title names: Platform objects, labelled per language by localize()
            "platforms": plats.code,
            "portable": plats.portable,
            "title_platforms": plats.title_only,
            "features": [{"name": f.name, "where": list(f.where)} for f in scope.features],
            # each changed builder once, with its effects (who gains, who pays, why)
            "builders": _builders(scope, changes, spec, profile, {
                (str(b.get("class")), str(b.get("file"))) for b in levels_now
                if b.get("spec_ready") is None}),
            "findings": findings,
            "flag_raise": any(c["flag_level"] and c["direction"] in ("raised", "added")
                              for c in changes),
            # the levels this PR actually declares among those that need a growing threshold
            "flag_raise_levels": sorted(
                {c["after"] for c in changes
                 if c["flag_level"] and c["direction"] in ("raised", "added")},
                key=lambda v: (profile.level_rank(v) or 0, v),
            ),
        },
        "related": {"relations": relations, "mentions": mention_list},
    }


# --- rendering ----------------------------------------------------------------------------


REPORT = "report/report.j2"


@lru_cache(maxsize=16)
def _report_env(lang: str, fmt: str, subject: str = "", rules: str = "") -> jinja2.Environment:
    """The environment of one language and format, cached (templates compile once): the
    report template with the formatter ``F`` of ``fmt`` (:mod:`.formats`) and its filters.
    ``html`` autoescapes (:func:`.i18n.html_env`); ``md`` and ``txt`` do not. ``subject``
    ``commit``: a report of a commit without a PR, its messages worded so where the catalog
    has them (``msgctxt "commit"``). ``rules``: the profile's audit rule module, whose own
    wording of the generic audit messages comes first (:class:`.i18n.SubjectCatalog`)."""
    if fmt == "html":
        env = html_env(lang, "report.html")
        # one template for every format: here every template escapes, whatever its name
        env.autoescape = True
        if subject or rules:
            env.globals["gettext"] = env.globals["_"] = escaping_gettext(lang, subject, rules)
    else:
        env = jinja_env(lang, autoescape=False)
        catalog = subject_catalog(lang, subject, rules)
        lookup = lru_cache(maxsize=4096)(catalog.gettext)
        zh = lang == "zh"

        @plain_call
        def gettext(msgid: str, **variables: Any) -> str:
            # what the i18n extension's newstyle gettext does without autoescape, cached
            text = str(lookup(msgid))
            return text % (cjk_spaced(text, variables) if zh else variables)

        env.globals["gettext"] = env.globals["_"] = gettext
        # its messages without variables compiled in as text (the bytecode cache that keeps
        # them apart per language is set below, for every format)
        env.add_extension(ConstantMessages)
    formatter = FORMATTERS[fmt]
    # the formatter's structure strings are compiled into the template as text: compiled
    # templates of this format are kept apart from those of other formats
    env.extend(report_format=formatter)
    env.add_extension(FormatConstants)
    # one language's messages and one format's strings are compiled in: kept apart
    own = "".join(f"-{x}" for x in (subject, rules_key(rules)) if x)
    env.bytecode_cache = language_cache(f"report-{fmt}{own}", lang)
    env.filters.update(filters_of(formatter))
    env.globals.update(F=formatter, codes=formatter.codes, num=formatter.num)
    # the label tables (report/_labels.j2) depend only on the language: built once
    env.globals["L"] = env.get_template("report/_labels.j2").make_module()
    env.globals["sentences"] = sentence_macros(env)  # last: the macros see every global
    return env


def warm_up(lang: str, fmt: str = "html", rules: str = "") -> None:
    """Make the report environment and load its template (before worker processes fork);
    ``rules``: the profile's audit rule module."""
    _report_env(lang, fmt, "", rules).get_template(REPORT)


def render_context(ctx: dict[str, Any], fmt: str) -> str:
    """The report of one language from its ``report_context``: ``md``, ``txt``, or ``html``
    (a fragment for a page: headings, lists, paragraphs; every value escaped)."""
    subject = "commit" if ctx["pr"].get("commit") else ""
    rules = ctx["profile"]["rules"]
    out = _report_env(ctx["lang"], fmt, subject, rules).get_template(REPORT).render(ctx)
    return out if fmt == "html" else _tidy(out)


def _tidy(text: str) -> str:
    """At most one blank line in a row, no trailing spaces, one final newline; the
    formatter's structure marks go, with their line when nothing else is on it."""
    out: list[str] = []
    fence: str | None = None
    for raw in text.split("\n"):
        kept = drop_marks(raw)
        if kept is None:  # a line of HTML structure only (formats.DROP)
            continue
        ln = kept.rstrip()
        stripped = ln.strip()
        if fence is None and stripped.startswith("```"):
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        elif fence is not None and stripped == fence:
            fence = None
        if fence is None and not ln and out and not out[-1]:
            continue
        out.append(ln)
    return "\n".join(out).strip("\n") + "\n"


_STYLE = (
    "body{font:16px/1.6 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
    "color:#1b1b1b}pre{background:#f5f5f5;padding:.75rem;overflow-x:auto}"
    "code{font-family:ui-monospace,monospace;font-size:.9em}"
    "blockquote{border-left:3px solid #ccc;margin-left:0;padding-left:1rem;color:#444}"
    "section+section{border-top:2px solid #ddd;margin-top:3rem}"
)


@lru_cache(maxsize=4)
def _page_env(lang: str) -> jinja2.Environment:
    return jinja_env(lang, autoescape=True)


def _page(parts: list[tuple[str, str]], title: str) -> str:
    """A standalone page: sanitized body per language, strict CSP, no scripts."""
    style_hash = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
    env = _page_env(parts[0][0])
    return env.get_template("report/page.html.j2").render(
        sections=[{"lang": lang, "html": html} for lang, html in parts],
        title=title,
        style=_STYLE,
        csp=(
            "default-src 'none'; img-src https:; "
            f"style-src 'sha256-{style_hash}'; base-uri 'none'; form-action 'none'"
        ),
        html_lang="zh-CN" if parts[0][0] == "zh" and len(parts) == 1 else (
            "en" if len(parts) == 1 else "mul"
        ),
    )


def _check(lang: str, fmt: str) -> None:
    if lang not in LANGS:
        raise InputError(f"unknown language {lang!r}: use zh or en")
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def render_report(
    store: Store, ref: str | int, *, lang: str = "zh", fmt: str = "md",
    profile: Profile | None = None,
) -> str:
    """One report of PR ``ref`` in ``lang`` (zh, en) and ``fmt`` (md, txt, html)."""
    _check(lang, fmt)
    ctx = report_context(store, ref, lang, profile=profile)
    if fmt != "html":
        return render_context(ctx, fmt)
    md = render_context(ctx, "md")
    return _page([(lang, to_html(md))], _page_title(ctx))


def render_reports(
    store: Store, ref: str | int, langs: tuple[str, ...], *, fmt: str = "md",
    profile: Profile | None = None,
) -> str:
    """Several languages one after the other (html: one page with a section per language)."""
    for lang in langs:
        _check(lang, fmt)
    ctxs = [report_context(store, ref, lang, profile=profile) for lang in langs]
    if fmt == "html":
        return _page([(c["lang"], to_html(render_context(c, "md"))) for c in ctxs],
                     _page_title(ctxs[0]))
    sep = "\n---\n\n" if fmt == "md" else "\n" + "=" * 60 + "\n\n"
    return sep.join(render_context(c, fmt) for c in ctxs)


def _commit_name(facts: dict[str, Any]) -> dict[str, str] | None:
    """For a record of a commit without a PR number: its short sha and the repository where
    it is reachable (the one its commit page is on, else the record's); None for a PR."""
    if facts["number"] is not None or not facts.get("merge_commit_sha"):
        return None
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/commit/", str(facts.get("url") or ""))
    return {"sha": str(facts["merge_commit_sha"])[:12],
            "repo": m.group(1) if m else str(facts["repo"])}


def _page_title(ctx: dict[str, Any]) -> str:
    pr = ctx["pr"]
    commit = pr.get("commit")
    head = (f"PR #{pr['number']}" if pr["number"] is not None
            else f"commit {commit['sha']} on {commit['repo']}" if commit else pr["ref"])
    return f"{head} {pr['title']}"[:300]
