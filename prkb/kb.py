"""The knowledge base's library API: ingest a record, read a PR back as facts.

``ingest`` is the one door every collector goes through: validate, analyse, write the PR and
everything derived from it in one transaction. Re-ingesting identical content changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .analyze.diff import changes_from_patch
from .analyze.risk import analyse
from .analyze.symbols import SourceError, diff_declarations, parse_classes
from .records import normalize_record, record_ref
from .errors import NotFound
from .glossary import risk_tag
from .models import Analysis, Finding, SymbolChange
from .profile import Profile
from .store import Store, canonical_json, content_hash


@dataclass
class IngestResult:
    ref: str
    outcome: str  # new, updated, unchanged, older
    pr_id: int | None = None
    notes: tuple[str, ...] = ()


def symbol_changes_for(
    rec: dict[str, Any],
    profile: Profile,
    contents: dict[str, tuple[str | None, str | None]] | None = None,
) -> tuple[list[SymbolChange], list[Finding], list[str]]:
    """Declaration changes of one record: collector facts, else whole files, else patches."""
    notes: list[str] = []
    ext = rec.get("prkb") or {}
    findings = [Finding.from_json(f) for f in ext.get("findings", [])]
    if "symbol_changes" in ext:
        return [SymbolChange.from_json(c) for c in ext["symbol_changes"]], findings, notes
    changes: list[SymbolChange] = []
    contents = contents or {}
    for f in rec.get("files", []):
        path = f["filename"]
        if not path.endswith(".py"):
            continue
        if path in contents:
            before_src, after_src = contents[path]
            try:
                before = parse_classes(before_src, profile, filename=path) if before_src else None
                after = parse_classes(after_src, profile, filename=path) if after_src else None
            except SourceError as e:
                notes.append(f"{path}: {e}; read from the patch instead")
            else:
                changes.extend(diff_declarations(path, before, after, profile))
                continue
        patch = f.get("patch")
        if patch:
            changes.extend(changes_from_patch(path, patch, profile))
    return changes, findings, notes


def ingest(
    store: Store,
    raw: Any,
    profile: Profile,
    *,
    contents: dict[str, tuple[str | None, str | None]] | None = None,
    extra_findings: list[Finding] | None = None,
    on_write: Callable[[sqlite3.Connection], None] | None = None,
) -> IngestResult:
    """Validate, analyse and store one record (one transaction). Raises InputError.

    ``on_write`` runs inside that transaction (collectors record their cursor there), and
    also when the record was unchanged, so a collector's bookkeeping never lags its data.
    """
    rec = normalize_record(raw)
    repo = (rec.get("prkb") or {}).get("repo") or profile.repo
    ref = record_ref(rec)
    digest = content_hash(rec)
    existing = _stored(store.conn, repo, ref)
    kept = _kept(existing, digest, rec)
    if kept is not None:
        if on_write is not None:
            with store.transaction() as conn:
                on_write(conn)
        return IngestResult(ref, kept, existing["id"] if existing is not None else None)
    changes, findings, notes = symbol_changes_for(rec, profile, contents)
    findings.extend(extra_findings or [])
    analysis = analyse(rec, changes, findings, profile)
    # what the collector said of the record (why it was kept, what it could not read)
    analysis.notes = [*notes, *[str(n) for n in (rec.get("prkb") or {}).get("notes") or []]]
    with store.transaction() as conn:
        # another process may have written this PR since the look above: look again
        existing = _stored(conn, repo, ref)
        kept = _kept(existing, digest, rec)
        if kept is not None and existing is not None:
            if on_write is not None:
                on_write(conn)
            return IngestResult(ref, kept, existing["id"])
        pr_id = _write(conn, repo, ref, rec, digest, analysis, existing)
        levels = (rec.get("prkb") or {}).get("builder_levels") or []
        _write_levels(conn, repo, ref, rec, levels)
        if on_write is not None:
            on_write(conn)
    return IngestResult(ref, "new" if existing is None else "updated", pr_id, tuple(notes))


def _stored(conn: sqlite3.Connection, repo: str, ref: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT id, raw_hash, updated_at FROM prs WHERE repo=? AND ref=?", (repo, ref)
    ).fetchone()
    return row


def _kept(existing: sqlite3.Row | None, digest: str, rec: dict[str, Any]) -> str | None:
    """"unchanged" or "older" when the stored record stays as it is; None to write."""
    if existing is None:
        return None
    if existing["raw_hash"] == digest:
        return "unchanged"
    if existing["updated_at"] and rec.get("updated_at") and rec["updated_at"] < existing[
        "updated_at"
    ]:
        return "older"
    return None


def _write(
    conn: sqlite3.Connection,
    repo: str,
    ref: str,
    rec: dict[str, Any],
    digest: str,
    analysis: Analysis,
    existing: sqlite3.Row | None,
) -> int:
    cols = {
        "repo": repo,
        "ref": ref,
        "number": rec.get("number"),
        "title": rec.get("title") or "",
        "body": rec.get("body"),
        "state": rec["state"],
        "author": (rec.get("user") or {}).get("login"),
        "created_at": rec.get("created_at"),
        "updated_at": rec.get("updated_at"),
        "closed_at": rec.get("closed_at"),
        "merged_at": rec.get("merged_at"),
        "merge_commit_sha": rec.get("merge_commit_sha"),
        "url": rec.get("html_url"),
        "base_ref": (rec.get("base") or {}).get("ref"),
        "labels": json.dumps([lab["name"] for lab in rec.get("labels", [])], ensure_ascii=False),
        "source": rec["source"],
        "raw": canonical_json(rec),
        "raw_hash": digest,
        "analysis": canonical_json(
            {
                "tests_touched": analysis.tests_touched,
                "platforms": analysis.platforms,
                "core_paths": analysis.core_paths,
                "notes": analysis.notes,
            }
        ),
    }
    if existing is None:
        names = ", ".join(cols)
        marks = ", ".join("?" for _ in cols)
        cur = conn.execute(f"INSERT INTO prs ({names}) VALUES ({marks})", tuple(cols.values()))
        pr_id = int(cur.lastrowid or 0)
    else:
        pr_id = int(existing["id"])
        sets = ", ".join(f"{k}=?" for k in cols)
        conn.execute(f"UPDATE prs SET {sets} WHERE id=?", (*cols.values(), pr_id))
        for table in ("files", "symbol_changes", "risk_tags", "findings"):
            conn.execute(f"DELETE FROM {table} WHERE pr_id=?", (pr_id,))
    conn.executemany(
        "INSERT INTO files(pr_id, seq, path, status, additions, deletions, patch, previous_path)"
        " VALUES (?,?,?,?,?,?,?,?)",
        [
            (
                pr_id,
                i,
                f["filename"],
                f["status"],
                f["additions"],
                f["deletions"],
                f.get("patch"),
                f.get("previous_filename"),
            )
            for i, f in enumerate(rec.get("files", []))
        ],
    )
    conn.executemany(
        "INSERT INTO symbol_changes(pr_id, seq, file, class_name, attr, before, after,"
        " direction, before_attr, before_file) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (pr_id, i, c.file, c.class_name, c.attr, c.before, c.after, c.direction, c.before_attr,
             c.before_file)
            for i, c in enumerate(analysis.symbol_changes)
        ],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO risk_tags(pr_id, code) VALUES (?, ?)",
        [(pr_id, t.code) for t in analysis.risk_tags],
    )
    conn.executemany(
        "INSERT INTO findings(pr_id, seq, rule, file, class_name, message_en, message_zh,"
        " commit_sha, severity) VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (
                pr_id,
                i,
                f.rule,
                f.file,
                f.class_name,
                f.message_en,
                f.message_zh,
                f.commit,
                f.severity,
            )
            for i, f in enumerate(analysis.findings)
        ],
    )
    if rec.get("number") is not None:
        conn.execute(
            "INSERT INTO nodes(key, kind, number, title, repo) VALUES (?, 'pr', ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET kind='pr', title=excluded.title, repo=excluded.repo"
            " WHERE kind IS NOT 'pr' OR title IS NOT excluded.title OR repo IS NOT excluded.repo",
            (f"pr:{rec['number']}", rec["number"], rec.get("title"), repo),
        )
    return pr_id


def _level_list(value: Any) -> str | None:
    """The stored form of a row's ``levels``: a JSON list of strings (None when absent)."""
    if not isinstance(value, list):
        return None
    return json.dumps([str(v) for v in value], ensure_ascii=False)


def _write_levels(
    conn: sqlite3.Connection, repo: str, ref: str, rec: dict[str, Any], levels: list[Any]
) -> None:
    sha = rec.get("merge_commit_sha")
    if not sha or not levels:
        return
    when = rec.get("merged_at") or rec.get("created_at") or ""
    conn.execute("DELETE FROM builder_levels WHERE repo=? AND commit_sha=?", (repo, sha))
    conn.executemany(
        "INSERT OR REPLACE INTO builder_levels(repo, commit_sha, committed_at, pr_ref, class_name,"
        " file, declared, effective, dynamic, spec_ready, levels, level_text)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                repo,
                sha,
                when,
                ref,
                str(b.get("class")),
                str(b.get("file")),
                b.get("declared"),
                b.get("effective"),
                int(bool(b.get("dynamic"))),
                None if b.get("spec_ready") is None else int(bool(b.get("spec_ready"))),
                _level_list(b.get("levels")),
                None if b.get("level_text") is None else str(b.get("level_text")),
            )
            for b in levels
        ],
    )


# --- reading back --------------------------------------------------------------------------


def pr_facts(store: Store, ref: str | int, repo: str | None = None) -> dict[str, Any]:
    """The facts of one PR in the shape ``prkb show --json`` prints."""
    row = store.pr_row(ref, repo)
    if row is None:
        raise NotFound(f"no PR {str(ref).lstrip('#')} in the knowledge base {store.path}")
    return facts_from_row(store, row)


def facts_from_row(store: Store, row: sqlite3.Row) -> dict[str, Any]:
    pr_id = row["id"]
    conn = store.conn
    analysis = json.loads(row["analysis"] or "{}")
    files = [
        {
            "path": r["path"],
            "status": r["status"],
            "additions": r["additions"],
            "deletions": r["deletions"],
            "previous_path": r["previous_path"],
        }
        for r in conn.execute("SELECT * FROM files WHERE pr_id=? ORDER BY seq", (pr_id,))
    ]
    changes = [
        {
            "file": r["file"],
            "class": r["class_name"],
            "attr": r["attr"],
            "before": r["before"],
            "after": r["after"],
            "direction": r["direction"],
            "before_attr": r["before_attr"],
            "before_file": r["before_file"],
        }
        for r in conn.execute("SELECT * FROM symbol_changes WHERE pr_id=? ORDER BY seq", (pr_id,))
    ]
    tags = [
        risk_tag(r["code"]).to_json()
        for r in conn.execute("SELECT code FROM risk_tags WHERE pr_id=? ORDER BY rowid", (pr_id,))
    ]
    findings = [
        finding_json(r)
        for r in conn.execute("SELECT * FROM findings WHERE pr_id=? ORDER BY seq", (pr_id,))
    ]
    key = (
        f"pr:{row['number']}" if row["number"] is not None else f"commit:{row['merge_commit_sha']}"
    )
    relations = []
    for r in conn.execute(
        "SELECT * FROM relations WHERE source=? OR target=? ORDER BY type, source, target",
        (key, key),
    ):
        out = r["source"] == key
        other = r["target"] if out else r["source"]
        relations.append(
            {
                "type": r["type"],
                "other": _other(other),
                "direction": "out" if out else "in",
                "evidence": r["evidence"],
                "confidence": r["confidence"],
                "origin": r["origin"],
            }
        )
    return {
        "repo": row["repo"],
        "ref": row["ref"],
        "number": row["number"],
        "title": row["title"],
        "state": row["state"],
        "author": row["author"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "closed_at": row["closed_at"],
        "merged_at": row["merged_at"],
        "merge_commit_sha": row["merge_commit_sha"],
        "url": row["url"],
        "source": row["source"],
        "labels": json.loads(row["labels"] or "[]"),
        "files": files,
        "symbol_changes": changes,
        "tests_touched": analysis.get("tests_touched", []),
        "platforms": analysis.get("platforms", []),
        "core_paths": analysis.get("core_paths", []),
        "notes": analysis.get("notes", []),
        "risk_tags": tags,
        "findings": findings,
        "relations": relations,
    }


def finding_json(r: sqlite3.Row) -> dict[str, Any]:
    """A ``findings`` row in the shape of ``prkb show --json``."""
    return {
        "rule": r["rule"],
        "file": r["file"],
        "class": r["class_name"],
        "message_en": r["message_en"],
        "message_zh": r["message_zh"],
        "commit": r["commit_sha"],
    }


def _other(key: str) -> int | str:
    if key.startswith("pr:") and key[3:].isdigit():
        return int(key[3:])
    return key


def raw_record(store: Store, row: sqlite3.Row) -> dict[str, Any]:
    rec: dict[str, Any] = json.loads(row["raw"])
    return rec
