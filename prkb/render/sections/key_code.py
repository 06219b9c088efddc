"""The key code: per file, the changed classes as they read after the PR (from the file at
the merge commit when the clone has it, else from the stored patch), else the patch hunks that
touch the symbol, else the declaration change rebuilt; with the audit's inputs and readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analyze.excerpt import Excerpt, changed_lines, excerpt_from_patch, excerpt_from_source
from ...analyze.rules import rule_inputs
from ...errors import InputError
from ...gitrepo import GitError, GitRepo
from ...profile import Profile
from ..patches import key_hunks, rebuilt
from ..prfacts import PrFacts
from ..state_view import raises_pairs


@dataclass(frozen=True)
class KeyCode:
    """``blocks``: one per file (``kind`` excerpt, patch or rebuilt; its ``excerpts`` or
    ``hunks``; ``cut``; ``blob_missing``: the clone lacked the file at the commit);
    ``more``: how many other files have matching hunks not shown; ``readings``: the audit's
    reading of each raised class (:func:`prkb.render.readings.rule_readings` ``classes``)."""

    blocks: list[dict[str, Any]]
    more: int
    readings: list[dict[str, Any]]


def build(f: PrFacts) -> KeyCode:
    shown = f.shown_paths
    changes = f.changes
    sha = f.facts["merge_commit_sha"]
    blocks: list[dict[str, Any]] = []
    more = 0
    git = _open(f.clone)
    try:
        for path in sorted({x["path"] for x in f.files} | {c["file"] for c in changes}):
            patch = f.patches.get(path)
            hunks, cut = key_hunks(patch, f.profile)
            own = [c for c in changes if c["file"] == path]
            if path not in shown and not own:
                more += bool(hunks)  # a big PR's other files are only counted
                continue
            blob = (git, str(sha)) if git is not None else None
            explained, missing = _excerpts(path, patch, changes, f.profile, blob)
            for x in explained:
                x["commit"] = sha if x["source"] == "blob" else None
                x["notes"] = _input_notes(x, f.levels_now, f.profile)
            block = {"file": path, "blob_missing": missing}
            if explained:
                blocks.append({**block, "kind": "excerpt", "excerpts": explained, "hunks": [],
                               "cut": any(x["truncated"] for x in explained)})
            elif hunks:
                blocks.append({**block, "kind": "patch", "hunks": hunks, "cut": cut})
            elif own:
                blocks.append({**block, "kind": "rebuilt",
                               "hunks": [rebuilt(c, f.profile) for c in own], "cut": False})
    finally:
        if git is not None:
            git.close()
    return KeyCode(blocks=blocks, more=more, readings=f.readings["classes"])


def _open(path: str | None) -> GitRepo | None:
    """The clone at ``path``; None when there is none or it moved or is gone (the patch is
    read instead)."""
    if not path:
        return None
    try:
        return GitRepo(path)
    except (GitError, InputError):
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


def _input_notes(
    ex: dict[str, Any], levels: list[dict[str, Any]], profile: Profile,
) -> list[dict[str, Any]]:
    """An excerpt's notes, its rule inputs told what the state model read at the PR's commit
    (the rule module's ``INPUTS.state_notes``, from the builder's stored row); the notes as
    the excerpt has them for a profile whose rule shows no inputs."""
    inputs = rule_inputs(profile.rules)
    if inputs is None:
        return list(ex["notes"])
    row = next((b for b in levels if b.get("class") == ex["class"]
                and b.get("file") == ex["file"]), None)
    return [{**n, "raises": raises_pairs(n["raises"])} if "raises" in n else n
            for n in inputs.state_notes(ex, row, profile)]
