"""One PR's facts, read once (:class:`PrFacts`): what the report's sections are built from.

:func:`read_pr` reads the knowledge base once per PR: the stored facts and raw record, the
titles of the PRs it relates to or mentions, the consistency audit's readings at its commit,
and the clone it was collected from. What several sections say (each declaration change with
its direction and level ranks, the files with their roles and which of them a report lists,
the related calls, the risk tags) is derived here once; every section of
:mod:`prkb.render.sections` then builds its own small dataclass from a :class:`PrFacts` and
never reads the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..analyze.conditions import condition_shift
from ..analyze.risk import is_declaration_core, risk_tags_for
from ..analyze.state import after_sources
from ..evidence import is_inferred
from ..models import Finding, RiskTag, SymbolChange
from ..profile import Profile
from ..store import Store
from .body import Section, body_sections, mentions
from .patches import classes_touched, related_calls, related_names
from .readings import rule_readings
from .state_view import state_facts

KEY_FILES = 15  # at most this many files (and related lines) are listed for a big PR

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


@dataclass(frozen=True)
class PrFacts:
    """Everything the report knows of one PR, read from the knowledge base once.

    ``facts``: the store's facts (``Store.pr_row_and_facts``); ``record``: the raw record
    (GitHub's REST shape + ``prkb``); ``changes``: each declaration change as a dict with the
    report's fields (level ranks, ``conditional``, ``why``, ``core``, ``raises_to``,
    ``flag_level``); ``files``: every changed file with its ``role``, ``category``, ``type``
    and ``symbols``; ``shown``: the files a report lists (all, or the ones that matter to the
    symbol in a big PR), ``files_more``: what it leaves out (None: nothing); ``readings``:
    the consistency audit's readings of the raised classes (:func:`.readings.rule_readings`);
    ``clone``: the path of the clone the record's code comes from, when still there;
    ``state``: the code's state change as rows (:func:`.state_view.state_facts`).
    The caller must not change it.
    """

    profile: Profile
    facts: dict[str, Any]
    record: dict[str, Any]
    notes: list[str]
    body: str
    patches: dict[str, str | None]
    changes: list[dict[str, Any]]
    flag_levels: frozenset[str]
    calls: list[dict[str, Any]]
    files: list[dict[str, Any]]
    shown: list[dict[str, Any]]
    files_more: dict[str, int] | None
    body_sections: list[Section]
    relations: list[dict[str, Any]]
    mentions: list[dict[str, Any]]
    findings: list[Finding]
    symbol_changes: list[SymbolChange]
    readings: dict[str, Any]
    risk_tags: list[RiskTag]
    risk_why: dict[str, list[str]]
    levels_now: list[dict[str, Any]]
    clone: str | None
    state: dict[str, Any]

    @property
    def git_only(self) -> bool:
        return bool(self.facts["source"] == "git")

    @property
    def classes(self) -> list[str]:
        """The classes whose declaration changed, sorted."""
        return sorted({c["class"] for c in self.changes})

    @property
    def shown_paths(self) -> set[str]:
        return {f["path"] for f in self.shown}

    @property
    def risk_codes(self) -> set[str]:
        """The risk tags of this report and those stored with the PR."""
        return {t.code for t in self.risk_tags} | {t["code"] for t in self.facts["risk_tags"]}


def read_pr(
    store: Store, ref: str | int, profile: Profile,
    read: tuple[sqlite3.Row, dict[str, Any]] | None = None,
    titles: Mapping[int, str | None] | None = None,
) -> PrFacts:
    """The facts of PR ``ref`` (a number or a ref), read once. Raises NotFound. ``read``: its
    row and stored facts, already read (``Store.facts_from_rows``, for many PRs at once).
    ``titles``: PR titles already read (``Store.pr_titles``, in the same read snapshot), by
    number; the PRs it relates to or mentions that are not among them are read here."""
    row, facts = read if read is not None else store.pr_row_and_facts(ref)
    rec = store.raw_record(row)
    ext = rec.get("prkb") or {}
    notes = sorted({str(n) for n in ext.get("notes") or []})
    body = rec.get("body") or ""
    patches = {f["filename"]: f.get("patch") for f in rec.get("files") or []}
    flag_levels = frozenset(str(x) for x in profile.audit.get("flag_levels", []))
    after = after_sources(ext.get("state_changes"), profile.display)
    changes = [_change(c, profile, flag_levels, after) for c in facts["symbol_changes"]]
    calls: list[dict[str, Any]] = []
    for path in sorted(patches):
        calls.extend(related_calls(path, patches[path], profile))
    files = [_file(f, changes, calls, patches, profile) for f in facts["files"]]
    classes = sorted({c["class"] for c in changes})
    shown, files_more = _key_files(files, patches, classes, related_names(profile), profile)
    relations, mention_list = _related(store, facts, rec, body, titles)
    findings = [Finding.from_json(x) for x in facts["findings"]]
    symbol_changes = [SymbolChange.from_json(c) for c in facts["symbol_changes"]]
    has_dep = any(r["type"] == "depends-on" and r["direction"] == "out" for r in relations)
    tags, why = risk_tags_for(rec, symbol_changes, findings, profile, has_dependency=has_dep)
    return PrFacts(
        profile=profile, facts=facts, record=rec, notes=notes, body=body, patches=patches,
        changes=changes, flag_levels=flag_levels, calls=calls, files=files, shown=shown,
        files_more=files_more, body_sections=body_sections(body, skip=notes),
        relations=relations, mentions=mention_list, findings=findings,
        symbol_changes=symbol_changes,
        readings=rule_readings(store, facts, changes, profile),
        risk_tags=tags, risk_why=why, levels_now=ext.get("builder_levels") or [],
        clone=_clone_path(store, facts) if changes else None,
        state=state_facts(facts, profile),
    )


def _change(
    c: dict[str, Any], profile: Profile, flag_levels: frozenset[str],
    after: dict[tuple[str, str], str | None],
) -> dict[str, Any]:
    """A stored declaration change with what the report says of it; ``after``: where the value
    comes from at the PR's commit, by class (:func:`prkb.analyze.state.after_sources`), which
    tells whether a removed declaration leaves an inherited value, none, or no class at all."""
    sc = SymbolChange.from_json(c)
    # a conditional value whose test gained or lost an operand: raised where it changed?
    shift = condition_shift(c["before"], c["after"], profile) \
        if c["direction"] == "changed" else None
    raises_to = shift.after if shift is not None and (
        (profile.level_rank(shift.after) or 0) > (profile.level_rank(shift.before) or 0)
    ) else None
    return {
        **c,
        "before_rank": profile.level_rank(c["before"]),
        "after_rank": profile.level_rank(c["after"]),
        "conditional": any(" if " in (v or "") for v in (c["before"], c["after"])),
        "why": change_why(c, profile, after),
        "core": is_declaration_core(sc, profile),
        "raises_to": raises_to,  # the level a condition shift raises it to, or None
        # the level it reaches (there, for a condition shift) needs a growing threshold
        "flag_level": (raises_to or c["after"]) in flag_levels,
    }


def change_why(
    c: dict[str, Any], profile: Profile, after: dict[tuple[str, str], str | None],
) -> str:
    """The reason word of a change (:func:`why_in_a_word`); a removed declaration whose class
    the state model read as gone at the PR's commit is ``class-removed``, one that leaves no
    value anywhere in the class's bases ``nothing-inherited`` (else it falls back to the
    inherited value)."""
    key = (str(c["class"]), str(c["file"]))
    if c["direction"] == "removed" and key in after:
        if after[key] is None:
            return "class-removed"
        if after[key] == "absent":
            return "nothing-inherited"
    return why_in_a_word(c["direction"], profile)


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


def _file(
    f: dict[str, Any], changes: list[dict[str, Any]], calls: list[dict[str, Any]],
    patches: dict[str, str | None], profile: Profile,
) -> dict[str, Any]:
    """A changed file with its module, category, type, the symbols it touches and its role."""
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
    return {
        **f,
        "module": _module_of(path),
        "category": cat,
        "type": _file_type(path, cat, profile, bool(own)),
        "symbols": sorted(symbols),
        "role": role,
        "has_patch": bool(patches.get(path)),
    }


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


def _related(
    store: Store, facts: dict[str, Any], rec: dict[str, Any], body: str,
    known: Mapping[int, str | None] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The PR's relations (with the other PR's title, and whether each is inferred), and the
    PRs its texts mention (the first context each is mentioned in)."""
    mention_map: dict[int, str] = {}
    all_texts = [body]
    for key in ("reviews", "comments", "review_comments"):
        all_texts += [str(x.get("body") or "") for x in rec.get(key) or []]
    for t in all_texts:
        for n, ctx in mentions(t, facts["number"]).items():
            mention_map.setdefault(n, ctx)
    # the titles of the PRs related or mentioned, in one read (of those not known yet)
    numbers = [*(r["other"] for r in facts["relations"] if isinstance(r["other"], int)),
               *mention_map]
    if known is None:
        titles = store.pr_titles(numbers)
    else:
        titles = {n: known[n] for n in numbers if n in known}
        missing = [n for n in numbers if n not in titles]
        if missing:
            titles.update(store.pr_titles(missing))
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
    return relations, mention_list


def _clone_path(store: Store, facts: dict[str, Any]) -> str | None:
    """The clone the git collector read this PR's repository from (its ``clone`` cursor),
    when the record's code comes from git; else None."""
    if facts["source"] not in ("git", "git+github") or not facts.get("merge_commit_sha"):
        return None
    path = store.get_state("git", facts["repo"], "clone")
    return str(path) if path else None
