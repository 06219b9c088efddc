"""The code's effective-state change of a PR as outputs say it (the report's implementation
section and the digest): the stored ``state_changes`` of :mod:`prkb.analyze.state` as rows
with both sides, and what the PR changed of the mechanism itself (``framework``).
"""

from __future__ import annotations

from typing import Any

from ..profile import Profile


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
            "raises": raises_pairs(c.get(f"{side}_raises")), "reason": c.get(f"{side}_reason"),
            "via": c.get(f"{side}_via")}


def state_row(c: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """A stored state change as the report and the digest say it: both sides
    (:func:`state_side`), and ``outside``: the builder's file is none of ``paths`` (the files
    the change touched), it inherits what changed or is left on an unread spelling."""
    return {"class": c["class"], "file": c["file"], "value": c["value"],
            "previous_file": c.get("previous_file"), "before": state_side(c, "before"),
            "after": state_side(c, "after"), "outside": c["file"] not in paths}


def raises_pairs(items: list[str] | None) -> list[list[str]]:
    """Where the ``__init__`` that sets a value raises first (``E when <test>``, as the state
    model keeps them) as [error, condition] pairs."""
    return [list(r.partition(" when ")[::2]) for r in items or []]


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
