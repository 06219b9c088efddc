"""Stage 1 of the site build: one pass over the knowledge base into plain data.

Bulk queries (one per table), no per-PR round trips, and no PR bodies or patches: those
are read later, only for the pages that have to be rendered again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..models import record_label
from ..profile import Profile
from ..publish.matrix import matrix_history
from ..store import Store
from ..store.site_queries import SiteRelationRow

SHA_SLUG = 12


def pr_slug(number: int | None, ref: str) -> str:
    """The file stem of a PR's page: its number, or ``c<sha12>`` for a commit without a PR."""
    if number is not None:
        return str(number)
    sha = ref[4:] if ref.startswith("sha:") else ref
    return "c" + re.sub(r"[^0-9a-f]", "", sha.lower())[:SHA_SLUG]


def builder_slug(file: str, cls: str) -> str:
    """The file stem of a builder's page: its class name made safe, ``-`` and 8 hex digits of
    its file's hash. A builder is its file and class (a V0 and a V1 class of one name are two
    builders); the stem depends on nothing else, so it stays the same from build to build."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", cls)[:200] or "_"
    digest = hashlib.blake2b(file.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{safe}-{digest}"


@dataclass
class SiteData:
    """Everything the pages need, as plain lists and dicts."""

    prs: list[dict[str, Any]] = field(default_factory=list)  # newest first
    by_id: dict[int, dict[str, Any]] = field(default_factory=dict)
    by_node: dict[str, dict[str, Any]] = field(default_factory=dict)  # "pr:N" -> pr
    # (source, target, type, evidence, confidence, origin)
    relations: list[tuple[str, str, str, str, float, str]] = field(default_factory=list)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # graph nodes that are not PRs
    levels: list[dict[str, Any]] = field(default_factory=list)  # builder_levels, oldest first
    # builder slug (builder_slug: its file and class) -> history, by class then file
    builders: dict[str, dict[str, Any]] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    # (rule, file, class) -> ids of the stored PRs whose commit made that finding no longer
    # hold, oldest first (a full read only: the audit page is built from a full read)
    finding_fixes: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)


def attach_relations(data: SiteData, rows: list[SiteRelationRow]) -> None:
    """The relations ``rows`` (``Store.site_relations``, sorted here) into ``data.relations``,
    and each into the ``relations`` list of the PRs at its ends (``data.by_node``) as
    (type, direction, other, evidence, confidence, origin)."""
    by_node, relations = data.by_node, data.relations
    rows.sort(key=lambda r: (r[2], r[0], r[1]))  # cheaper here than SQLite's temporary B-tree
    for rel in rows:
        relations.append(rel)
        source, target, type_, evidence, confidence, origin = rel
        pr = by_node.get(source)
        if pr is not None:
            pr["relations"].append((type_, "out", target, evidence, confidence, origin))
        pr = by_node.get(target)
        if pr is not None:
            pr["relations"].append((type_, "in", source, evidence, confidence, origin))


def gather(
    store: Store,
    profile: Profile,
    only: Collection[int] | None = None,
    builders: dict[str, dict[str, Any]] | None = None,
) -> SiteData:
    """Everything the pages need, in a few bulk reads (call inside one read snapshot).

    ``only``: a partial read (the one-PR rebuild, :mod:`prkb.site.partial`): those PRs, every
    relation with an end among them and the graph nodes at the other ends; the builders'
    histories are not read but taken from ``builders`` (slug -> a history without its
    ``prs``, as a previous build kept it), each with those of its PRs that were read.
    """
    data = SiteData()
    parsed: dict[str, Any] = {}  # many PRs share the same analysis and labels text

    def loads(text: str | None, empty: str) -> Any:
        text = text or empty
        value = parsed.get(text)
        if value is None:
            value = parsed[text] = json.loads(text)
        return value

    by_id = data.by_id
    by_node = data.by_node
    pr: dict[str, Any] | None
    for (pr_id, repo, ref, number, title, state, author, created_at, closed_at, merged_at,
         sha, url, labels, raw_hash, analysis_text, source) in store.site_prs(only):
        analysis = loads(analysis_text, "{}")
        node = f"pr:{number}" if number is not None else f"commit:{sha}"
        pr = {
            "id": pr_id,
            "repo": repo,
            "ref": ref,
            "number": number,
            "slug": pr_slug(number, ref),
            "label": record_label(number, ref),
            "title": title or "",
            "state": state,
            "author": author,
            "date": str(merged_at or closed_at or created_at or ""),
            "created_at": created_at,
            "source": source,
            "merged_at": merged_at,
            "closed_at": closed_at,
            "sha": sha,
            "url": url,
            "labels": list(loads(labels, "[]")),
            "raw_hash": raw_hash,
            "platforms": list(analysis.get("platforms", [])),
            "tests_touched": list(analysis.get("tests_touched", [])),
            "changes": [],
            "directions": [],
            "tags": [],
            "findings": [],
            "relations": [],
            "node": node,
        }
        by_id[pr_id] = pr
        by_node[node] = pr
    data.prs = sorted(by_id.values(), key=lambda p: (p["date"], p["number"] or 0), reverse=True)
    slugs: dict[tuple[str, str], str] = {}
    for pr_id, file, cls, attr, before, after, direction in store.site_symbol_changes(only):
        pr = by_id.get(pr_id)
        if pr is None:
            continue
        slug = slugs.get((file, cls))
        if slug is None:
            slug = slugs[(file, cls)] = builder_slug(file, cls)
        # a value as shown: a bool as its spelling and value (it is no level)
        pr["changes"].append({"file": file, "class": cls, "slug": slug, "attr": attr,
                              "before": before, "after": after, "direction": direction,
                              "before_text": before and profile.value_text(before, attr),
                              "after_text": after and profile.value_text(after, attr)})
        if direction not in pr["directions"]:
            pr["directions"].append(direction)
    for pr_id, code in store.site_risk_tags(only):
        pr = by_id.get(pr_id)
        if pr is not None:
            pr["tags"].append(code)
    for pr_id, rule, file, cls, message_en, message_zh, commit, severity in (
        store.site_findings(only)
    ):
        pr = by_id.get(pr_id)
        if pr is None:
            continue
        # a finding as ``prkb show --json`` shows it (Store.finding_json), with its severity
        f = {"rule": rule, "file": file, "class": cls, "message_en": message_en,
             "message_zh": message_zh, "commit": commit, "severity": severity, "pr": pr["id"],
             "slug": builder_slug(file, cls)}
        pr["findings"].append(f)
        data.findings.append(f)
    if only is None:
        data.finding_fixes = {k: [p.id for p in prs]
                              for k, prs in store.finding_fixes().items()}
    # relations as tuples (cheap to make, there are many): data.relations holds
    # (source, target, type, evidence, confidence, origin), a PR's list holds
    # (type, direction, other, evidence, confidence, origin)
    rows = store.site_relations(None if only is None else list(by_node))
    ends = None if only is None else {k for r in rows for k in r[:2] if k not in by_node}
    for key, kind, node_number, node_title, node_repo in store.site_nodes(ends):
        if key in by_node:  # a PR of the site: its own row says more
            continue
        data.nodes[key] = {"key": key, "kind": kind, "number": node_number,
                           "title": node_title, "repo": node_repo}
    attach_relations(data, rows)
    if builders is not None:
        data.builders = _kept_builders(data, builders)
        return data
    history = matrix_history(store)
    data.levels = [
        {**lv, "class_name": entry["class"]}
        for entry in history["builders"]
        for lv in entry["levels"]
    ]
    data.levels.sort(key=lambda lv: (lv["committed_at"] or "", lv["commit_sha"]))
    data.builders = builder_histories(data, profile)
    return data


def _kept_builders(data: SiteData, kept: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The builders' histories a previous build kept, each with its PRs that were read (a
    history's ``ids``: its PRs, oldest first; ``h``: the hash of the rest), in the order
    builder_histories gives them."""
    by_id = data.by_id
    return {slug: {**{k: v for k, v in b.items() if k not in ("ids", "h")},
                   "prs": [by_id[i] for i in b["ids"] if i in by_id]}
            for slug, b in kept.items()}


def _pr_by_ref(data: SiteData) -> dict[str, dict[str, Any]]:
    return {p["ref"]: p for p in data.prs}


def level_rank(profile: Profile, value: str | None) -> int | None:
    """Rank of a level; for an expression, the lowest level it names (None when none)."""
    if value is None:
        return None
    rank = profile.level_rank(value.split(".")[-1].strip())
    if rank is not None:
        return rank
    names = re.findall(r"[A-Z][A-Z_]+", value)
    ranks = [r for r in (profile.level_rank(n) for n in names) if r is not None]
    return min(ranks) if ranks else None


def level_name(profile: Profile, value: str | None) -> str | None:
    """The plain level name of a value, or None when it is an expression."""
    if value is None:
        return None
    name = profile.normalize_level(value.split(".")[-1].strip())
    return name if name in profile.levels else None


def builder_histories(data: SiteData, profile: Profile) -> dict[str, dict[str, Any]]:
    """Per builder (its file and class, keyed by :func:`builder_slug`): runs of one reading
    (from builder_levels) and the PRs that touched it.

    A run starts at the commit where the reading changed; its PR is the one that changed it.
    A class missing from a later snapshot keeps its last reading (the collector may only read
    the classes a commit touched). Two classes of one name in two files are two builders.
    """
    by_ref = _pr_by_ref(data)
    out: dict[str, dict[str, Any]] = {}

    def entry(file: str, cls: str, slug: str | None = None) -> dict[str, Any]:
        slug = slug or builder_slug(file, cls)
        if slug not in out:
            out[slug] = {"class": cls, "file": file, "slug": slug, "runs": [],
                         "prs": [], "source": "declared", "_ids": set()}
        return out[slug]

    for lv in data.levels:
        b = entry(str(lv["file"]), lv["class_name"])
        b["source"] = "collected"
        value = lv["effective"] if lv["effective"] is not None else lv["declared"]
        text = lv.get("level_text") if lv["dynamic"] else None
        if lv["dynamic"] and lv.get("level_set"):
            # an override decides: what it can report is in force, not the attribute it
            # shadows (``prkb matrix``'s level column says the same); one level is that
            # level, several are the conditional text
            levels = lv["level_set"]
            value = levels[0] if len(levels) == 1 else text or value
        reading = (value, bool(lv["dynamic"]), text)
        last = b["runs"][-1] if b["runs"] else None
        if last is not None and (last["value"], last["dynamic"], last["level_text"]) == reading:
            continue
        pr = by_ref.get(lv["pr_ref"] or "")
        b["runs"].append(_run(profile, value, bool(lv["dynamic"]), lv["declared"],
                              lv["committed_at"], lv["commit_sha"], pr, text))
    collected_shas = {lv["commit_sha"] for lv in data.levels}
    # PRs that changed a declaration of each class (oldest first); the fallback history
    for pr in reversed(data.prs):
        for c in pr["changes"]:
            b = entry(c["file"], c["class"], c["slug"])
            if pr["id"] not in b["_ids"]:
                b["_ids"].add(pr["id"])
                b["prs"].append(pr)
            # declaration changes merged after the last collected commit (e.g. curated PRs
            # newer than the mined history) still move the class's reading
            later = (
                b["source"] == "collected"
                and bool(b["runs"])
                and pr["date"] > b["runs"][-1]["at"]
                and pr["sha"] not in collected_shas
                and c["after"] is not None
            )
            if (b["source"] == "declared" or later) and pr["state"] == "merged":
                prev = b["runs"][-1] if b["runs"] else None
                dyn_prev = prev["dynamic"] if prev else False
                text = prev["level_text"] if prev else None
                declared = c["after"]
                if c["direction"] in ("dynamic-added", "dynamic-changed"):
                    # the override's returns, when its body was read (not a bare marker)
                    value, dyn = (prev["value"] if prev else None), True
                    text = c["after"] if c["after"] != "overridden" else None
                    declared = prev["declared"] if prev else None
                elif c["direction"] == "dynamic-removed":
                    value, dyn, text = (prev["value"] if prev else None), False, None
                    declared = prev["declared"] if prev else None
                else:
                    value, dyn = c["after"], dyn_prev
                b["runs"].append(_run(profile, value, dyn, declared, pr["date"], pr["sha"], pr,
                                      text, c["attr"]))
    for b in out.values():
        b["current"] = b["runs"][-1] if b["runs"] else None
        del b["_ids"]
    return dict(sorted(out.items(), key=lambda kv: (kv[1]["class"], kv[1]["file"])))


def _run(
    profile: Profile,
    value: str | None,
    dynamic: bool,
    declared: str | None,
    when: str,
    sha: str | None,
    pr: dict[str, Any] | None,
    level_text: str | None = None,
    attr: str | None = None,
) -> dict[str, Any]:
    return {
        "value": value,
        # the value as shown: a bool (no level, Profile.value_text) as its spelling and value
        "text": profile.value_text(value, attr) if value is not None else None,
        "bool": profile.is_bool_value(value),
        "level": level_name(profile, value),
        "rank": level_rank(profile, value),
        "dynamic": dynamic,
        # what a dynamic builder can report, with conditions (None: not known)
        "level_text": level_text if dynamic else None,
        "declared": declared,
        "at": when or "",
        "sha": sha,
        "pr": pr["slug"] if pr else None,
        "pr_label": pr["label"] if pr else None,
    }
