"""Compare a knowledge base collected from the vLLM fork with an independent reading of its diffs.

Usage::

    prkb --db /tmp/fork.sqlite collect git /path/to/vllm --fork local-inference-lab/vllm
    python3 bench/accuracy_fork.py /tmp/fork.sqlite [bench/fork_truth.json] [--json]

``fork_truth.json`` was written by reading every commit's diff by hand (plain ``git show``), not
from prkb's output: for each first-parent commit that changes a CUDA graph support declaration
(or only reformats one), the per-class changes a reader sees. The script prints, per commit,
what prkb stored against what the reading says, and the totals: commits, class-level changes,
changes right, missed, extra, and formatting-only commits that carry a change or a relation.
Values are compared as levels (a conditional value by its set of levels and its condition's
text without spaces); renames by their spellings.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LEVELS = ("NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS")
ALIASES = {"PURE_DECODE_ONLY": "UNIFORM_SINGLE_TOKEN_DECODE"}
_NAME = re.compile(r"[A-Z_]{4,}")
_MOVE = re.compile(r"\bmove[sd]?\b", re.IGNORECASE)


def norm_value(v: Any) -> Any:
    """A comparable form of a value from either side."""
    if v is None:
        return None
    if isinstance(v, dict):
        if "levels" in v:
            levels = tuple(sorted({ALIASES.get(str(x), str(x)) for x in v["levels"]}))
            cond = "".join(str(v.get("condition") or "").split())
            if set(levels) <= {"True", "False"}:
                return cond  # a boolean expression: its text
            return ("cond", levels, cond)
        if "returns" in v:
            return "dynamic"
        return json.dumps(v, sort_keys=True)
    text = str(v)
    if text in ("overridden",) or text.startswith(("dynamic", "returns")):
        return "dynamic"
    text = ALIASES.get(text, text)
    if text in LEVELS or text in ("True", "False"):
        return text
    # an expression: its levels and the condition between `if` and `else`
    levels = tuple(sorted({ALIASES.get(m, m) for m in _NAME.findall(text)} & set(LEVELS)))
    m = re.search(r"\bif\b(.*?)\belse\b", text)
    cond = "".join(m.group(1).split()) if m else ""
    return ("cond", levels, cond) if levels else "".join(text.split())


def _is_move(change: dict[str, Any]) -> bool:
    note = str(change.get("note") or "")
    return bool(_MOVE.search(note)) and "not a move" not in note


def change_key(c: dict[str, Any]) -> tuple[Any, ...]:
    attr = str(c.get("attr"))
    dynamic = attr.startswith("get_")
    return (
        str(c.get("file")),
        str(c.get("class")).rsplit(".", 1)[-1],
        attr,
        None if dynamic else c.get("before_attr"),
        "dynamic" if dynamic else norm_value(c.get("before")),
        "dynamic" if dynamic else norm_value(c.get("after")),
    )


def stored(db: Path) -> dict[str, dict[str, Any]]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    out: dict[str, dict[str, Any]] = {}
    for p in con.execute("SELECT * FROM prs"):
        sha = str(p["merge_commit_sha"] or "")
        changes = [
            {"file": r["file"], "class": r["class_name"], "attr": r["attr"],
             "before_attr": r["before_attr"], "before": r["before"], "after": r["after"],
             "direction": r["direction"]}
            for r in con.execute("SELECT * FROM symbol_changes WHERE pr_id=?", (p["id"],))
        ]
        key = f"pr:{p['number']}" if p["number"] is not None else f"commit:{sha}"
        rels = con.execute(
            "SELECT count(*) FROM relations WHERE (source=? OR target=?) AND origin != 'text'",
            (key, key),
        ).fetchone()[0]
        out[sha] = {"ref": p["ref"], "changes": changes, "relations": rels}
    con.close()
    return out


def compare(db: Path, truth_path: Path) -> dict[str, Any]:
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    got = stored(db)
    rows = []
    totals = {"commits": 0, "changes": 0, "right": 0, "missed": 0, "extra": 0,
              "formatting_commits": 0, "formatting_with_change_or_relation": 0,
              "commits_missing": 0, "move_entries": 0}
    seen: set[str] = set()
    for c in truth["commits"]:
        sha = c["sha"]
        seen.add(sha)
        rec = got.get(sha)
        # the reading writes a move as removed here + added there; prkb as one "moved" entry in
        # the new file, its value on both sides
        moves = [x for x in c.get("changes", []) if _is_move(x)]
        want = {change_key(x) for x in c.get("changes", []) if x not in moves}
        want |= {
            change_key({**x, "before": x.get("after")})
            for x in moves
            if x.get("direction") in ("added", "dynamic-added")
        }
        have = {change_key(x) for x in (rec or {}).get("changes", [])}
        totals["commits"] += 1
        totals["changes"] += len(want)
        totals["move_entries"] += len(moves)
        totals["right"] += len(want & have)
        totals["missed"] += len(want - have)
        totals["extra"] += len(have - want)
        if want and rec is None:
            totals["commits_missing"] += 1
        if c.get("formatting_only"):
            totals["formatting_commits"] += 1
            if have or (rec or {}).get("relations"):
                totals["formatting_with_change_or_relation"] += 1
        if want != have:
            rows.append({"sha": sha[:12], "pr": c.get("pr"),
                         "missed": sorted(map(str, want - have)),
                         "extra": sorted(map(str, have - want))})
    # records with changes the reading does not list at all
    for sha, rec in got.items():
        if sha not in seen and rec["changes"]:
            totals["extra"] += len(rec["changes"])
            rows.append({"sha": sha[:12], "pr": rec["ref"], "missed": [],
                         "extra": [str(change_key(x)) for x in rec["changes"]],
                         "note": "not in the reading"})
    return {"totals": totals, "differences": rows}


WARNINGS = {"en": "cannot grow under speculative decoding", "zh": "无法增大"}


def report_check(db: Path) -> dict[str, Any]:
    """Every report of the knowledge base, in both languages, against the audit's own reading:
    a report may warn that a builder's decode threshold cannot grow only when the audit stored a
    finding for the PR or read that builder as not ready at the PR's commit."""
    from prkb.profile import load_profile
    from prkb.render.report import render_report
    from prkb.store import Store

    profile = load_profile()
    out: dict[str, Any] = {"reports": 0, "warnings": 0, "contradicted": []}
    with Store(db) as st:
        for row in st.conn.execute("SELECT id, ref, merge_commit_sha, repo FROM prs").fetchall():
            pinned = {
                r[0] for r in st.conn.execute(
                    "SELECT class_name FROM findings WHERE pr_id=?", (row["id"],))
            } | {
                r[0] for r in st.conn.execute(
                    "SELECT b.class_name FROM builder_levels b JOIN symbol_changes s"
                    " ON s.class_name = b.class_name AND s.pr_id = ?"
                    " WHERE b.commit_sha = ? AND b.meets_rule = 0"
                    " AND s.direction IN ('added', 'raised', 'changed', 'dynamic-added',"
                    " 'dynamic-changed')",
                    (row["id"], row["merge_commit_sha"]))
            }
            for lang, phrase in WARNINGS.items():
                text = render_report(st, row["ref"], lang=lang, fmt="md", profile=profile)
                out["reports"] += 1
                warned = phrase in text
                out["warnings"] += warned
                if warned and not pinned:
                    out["contradicted"].append(f"{row['ref']} ({lang})")
    return out


def state_truth(db: Path, truth_path: Path) -> dict[str, Any]:
    """The stored ``state_changes`` against ``fork_state_truth.json`` (PRs read by hand):
    each listed change must be stored with the same two values and sources; a PR marked
    ``no_state_change`` must have none."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    con = sqlite3.connect(db)
    out: dict[str, Any] = {"prs": 0, "changes": 0, "right": 0, "wrong": []}
    keys = ("before", "after", "before_source", "after_source")
    for entry in truth["prs"]:
        row = con.execute("SELECT raw FROM prs WHERE merge_commit_sha = ?",
                          (entry["sha"],)).fetchone()
        out["prs"] += 1
        if row is None:
            out["wrong"].append(f"#{entry['pr']}: not collected")
            continue
        got = (json.loads(row[0]).get("prkb") or {}).get("state_changes")
        if got is None:
            out["wrong"].append(f"#{entry['pr']}: no state change read")
            continue
        if entry.get("no_state_change"):
            out["changes"] += 1
            if got:
                out["wrong"].append(f"#{entry['pr']}: {len(got)} state changes, want none")
            else:
                out["right"] += 1
        for want in entry.get("changes", []):
            out["changes"] += 1
            hits = [c for c in got if c["class"] == want["class"] and c["value"] == want["value"]]
            if len(hits) == 1 and all(hits[0].get(k) == want[k] for k in keys):
                out["right"] += 1
            else:
                out["wrong"].append(f"#{entry['pr']} {want['class']}.{want['value']}: "
                                    f"stored {[{k: h.get(k) for k in keys} for h in hits]}")
    con.close()
    return out


def state_check(db: Path, clone: Path) -> dict[str, Any]:
    """Every collected PR's ``state_changes`` against the difference of two independent
    audits (``prkb matrix --rev <parent>`` and ``--rev <commit>``, each from its own tree
    listing): one model, so they must be equal."""
    from prkb.analyze.audit import AuditCache, audit_revision
    from prkb.analyze.state import changes_json, state_changes
    from prkb.gitrepo import GitRepo
    from prkb.profile import load_profile
    from prkb.store import Store

    profile = load_profile()
    out: dict[str, Any] = {"prs": 0, "changes": 0, "unknown": [], "differ": []}
    cache = AuditCache()
    with Store(db) as st, GitRepo(clone) as repo:
        for row in st.conn.execute("SELECT id, ref, raw FROM prs").fetchall():
            ext = json.loads(row["raw"]).get("prkb") or {}
            got = ext.get("state_changes")
            if got is None:
                out["unknown"].append(row["ref"])
                continue
            sha = json.loads(row["raw"])["merge_commit_sha"]
            parent = ext.get("parent")
            after = audit_revision(repo, sha, profile, cache=cache).builders
            before = audit_revision(repo, parent, profile, cache=cache).builders \
                if parent else None
            renamed = {}
            for line in repo.git("diff", "--name-status", "-M", f"{parent}", sha).splitlines() \
                    if parent else []:
                parts = line.split("\t")
                if parts[0].startswith("R") and len(parts) == 3:
                    renamed[parts[1]] = parts[2]
            want = changes_json(state_changes(before, after, renamed))
            out["prs"] += 1
            out["changes"] += len(got)
            key = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
            if sorted(map(key, got)) != sorted(map(key, want)):
                out["differ"].append(row["ref"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("truth", nargs="?", default=str(HERE / "fork_truth.json"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clone", help="the fork's clone: check every PR's state_changes against "
                    "two independent audits of its parent and its commit")
    args = ap.parse_args()
    res = compare(Path(args.db), Path(args.truth))
    res["reports"] = report_check(Path(args.db))
    res["state_truth"] = state_truth(Path(args.db), HERE / "fork_state_truth.json")
    if args.clone:
        res["state"] = state_check(Path(args.db), Path(args.clone))
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    for r in res["differences"]:
        print(f"{r['sha']} #{r['pr']}: missed {r['missed']} extra {r['extra']}"
              + (f" ({r['note']})" if r.get("note") else ""))
    t = res["totals"]
    print(
        f"commits in the reading: {t['commits']}; class-level changes: {t['changes']}; "
        f"right: {t['right']}, missed: {t['missed']}, extra: {t['extra']}; "
        f"commits with changes not collected: {t['commits_missing']}; formatting-only commits: "
        f"{t['formatting_commits']}, of which with a change or a code relation: "
        f"{t['formatting_with_change_or_relation']}; entries of the reading that are halves of a "
        f"move (compared as one moved entry each): {t['move_entries']}"
    )
    r = res["reports"]
    print(
        f"reports rendered: {r['reports']} (zh and en); with the threshold warning: "
        f"{r['warnings']}; warnings the audit's reading does not support: "
        f"{len(r['contradicted'])} {r['contradicted']}"
    )
    s = res.get("state")
    if s is not None:
        print(f"state changes: {s['changes']} in {s['prs']} PRs; equal to the difference of two "
              f"independent audits except in: {s['differ'] or 'none'}; not read: "
              f"{s['unknown'] or 'none'}")
    t = res["state_truth"]
    print(f"state changes read by hand (bench/fork_state_truth.json): {t['right']} of "
          f"{t['changes']} right in {t['prs']} PRs; wrong: {t['wrong'] or 'none'}")
    bad_state = bool(s and (s["differ"] or s["unknown"])) or bool(t["wrong"])
    return 0 if not res["differences"] and not res["reports"]["contradicted"] \
        and not bad_state else 1


if __name__ == "__main__":
    sys.exit(main())
