"""``prkb demo``: the main job on the bundled data, offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from .collect.snapshot import import_jsonl
from .errors import PrkbError
from .paths import data_dir, default_db_path
from .profile import Profile, load_profile
from .progress import bar, warn
from .store import Store

SEED_PRS = (47144, 45149)


def run_demo(args: argparse.Namespace) -> int:
    profile = load_profile(getattr(args, "profile", None))
    db = default_db_path(getattr(args, "db", None))
    snaps = sorted((data_dir() / "snapshots").glob("*.jsonl"))
    if not snaps:
        raise PrkbError(f"no bundled snapshots under {data_dir() / 'snapshots'}")
    with Store(db) as store:
        total_new = 0
        for snap in snaps:
            with bar(f"import {snap.name}", quiet=args.quiet) as b:
                rep = import_jsonl(store, snap, profile, on_progress=lambda _n: b.advance())
            for err in rep.errors:
                warn(err)
            total_new += rep.new + rep.updated
            print(
                f"imported {snap.name}: {rep.lines} records "
                f"({rep.new} new, {rep.updated} updated, {rep.unchanged} unchanged)"
            )
        _post_import(store, profile, quiet=args.quiet)
        _summary(store)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        written = _reports(store, out)
    print(f"knowledge base: {db}")
    print(f"reports written to {out.resolve()}/:")
    for p in written:
        print(f"  {p.name}")
    print("next: prkb list | prkb show 47144 --json | prkb report 47144 --lang en")
    return 0


def _post_import(store: Store, profile: Profile, *, quiet: bool) -> None:
    """Derived stages after import: the typed relation graph."""
    from .graph import build_relations

    build_relations(store, profile)


def _summary(store: Store) -> None:
    c = store.conn
    n_prs = c.execute("SELECT count(*) FROM prs").fetchone()[0]
    n_changes = c.execute("SELECT count(*) FROM symbol_changes").fetchone()[0]
    n_classes = c.execute("SELECT count(DISTINCT class_name) FROM symbol_changes").fetchone()[0]
    n_find = c.execute("SELECT count(*) FROM findings").fetchone()[0]
    n_rel = c.execute("SELECT count(*) FROM relations").fetchone()[0]
    first, last = c.execute(
        "SELECT min(COALESCE(merged_at, created_at)), max(COALESCE(merged_at, created_at)) FROM prs"
    ).fetchone()
    print(
        f"{n_prs} PRs from {str(first)[:10]} to {str(last)[:10]}: {n_changes} declaration changes "
        f"on {n_classes} classes, {n_find} audit findings, {n_rel} relations"
    )
    rows = c.execute(
        "SELECT direction, count(*) FROM symbol_changes GROUP BY direction ORDER BY 2 DESC"
    ).fetchall()
    print("  changes by direction: " + ", ".join(f"{d} {n}" for d, n in rows))


def _reports(store: Store, out: Path) -> list[Path]:
    from .render.report import render_report

    written = []
    for number in SEED_PRS:
        if store.pr_row(number) is None:
            warn(f"seed PR #{number} is not in the bundled data; no report written")
            continue
        for lang in ("zh", "en"):
            path = out / f"pr-{number}.{lang}.md"
            path.write_text(render_report(store, number, lang=lang, fmt="md"), encoding="utf-8")
            written.append(path)
    return written
