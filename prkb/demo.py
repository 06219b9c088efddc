"""``prkb demo``: the main job on the bundled data, offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from .atomic import write_atomic
from .collect.snapshot import import_snapshots
from .errors import PrkbError
from .paths import data_dir, default_db_path
from .profile import load_profile
from .progress import warn
from .store import Store

SEED_PRS = (47144, 45149)


def run_demo(args: argparse.Namespace) -> int:
    profile = load_profile(getattr(args, "profile", None))
    db = default_db_path(getattr(args, "db", None))
    snaps = sorted((data_dir() / "snapshots").glob("*.jsonl"))
    if not snaps:
        raise PrkbError(f"no bundled snapshots under {data_dir() / 'snapshots'}")
    with Store(db) as store:
        reports = import_snapshots(store, snaps, profile, quiet=args.quiet)
        for snap, rep in zip(snaps, reports, strict=True):
            for err in rep.errors:
                warn(err)
            print(
                f"imported {snap.name}: {rep.lines} records "
                f"({rep.new} new, {rep.updated} updated, {rep.unchanged} unchanged)"
            )
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


def _summary(store: Store) -> None:
    kb = store.kb_summary()
    print(
        f"{kb.prs} PRs from {str(kb.first)[:10]} to {str(kb.last)[:10]}: {kb.changes} "
        f"declaration changes on {kb.classes} classes, {kb.findings} audit findings, "
        f"{kb.relations} relations"
    )
    print("  changes by direction: " + ", ".join(f"{d} {n}" for d, n in kb.by_direction))


def _reports(store: Store, out: Path) -> list[Path]:
    from .render.report import render_report

    written = []
    for number in SEED_PRS:
        if store.pr_row(number) is None:
            warn(f"seed PR #{number} is not in the bundled data; no report written")
            continue
        for lang in ("zh", "en"):
            path = out / f"pr-{number}.{lang}.md"
            write_atomic(path, render_report(store, number, lang=lang, fmt="md"))
            written.append(path)
    return written
