"""Two prkb processes on one knowledge base: both finish (or one says clearly it waited in
vain), nothing is lost or doubled, and ``PRAGMA integrity_check`` stays ok."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from githistory import history_with_level_changes
from gitrepo import GitRepoBuilder

from prkb.store import Store

# heavy: concurrent processes on one knowledge base: not in the fast tier
pytestmark = pytest.mark.heavy

BUSY = "the knowledge base is busy"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PRKB_DB"}


def _prkb(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "prkb", "--db", str(db), "-q", *args]


def _record(n: int, updated: str = "2026-03-02T08:30:00Z", title: str | None = None) -> str:
    return json.dumps({
        "number": n, "title": title or f"[Perf] change {n}", "state": "merged",
        "body": f"Follow-up to #{max(1, n - 1)}; see also #{n + 7}.",
        "created_at": "2026-03-01T08:00:00Z", "updated_at": updated,
        "merged_at": "2026-03-02T08:30:00Z", "merge_commit_sha": f"{n:040x}",
        "user": {"login": f"dev{n % 7}"}, "source": "curated",
        "files": [{
            "filename": f"vllm/v1/attention/backends/b{n % 13}.py", "status": "modified",
            "additions": 1, "deletions": 1,
            "patch": (f"@@ -10,2 +10,2 @@ class B{n % 13}MetadataBuilder(Base):\n"
                      "-    _cudagraph_support = AttentionCGSupport.NEVER\n"
                      "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n"),
        }],
    })


def _finished(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    if proc.returncode != 0:  # allowed only as the clear busy message
        assert proc.returncode == 3 and err.startswith(f"prkb: error: knowledge base: {BUSY}")
    return proc.returncode, err


def _rows(db: Path) -> dict[str, str]:
    with Store(db) as store:
        assert store.integrity_ok()
        return {r["ref"]: r["title"] for r in store.conn.execute("SELECT ref, title FROM prs")}


def test_two_imports_at_once(tmp_path: Path, figures) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    # overlapping PR numbers: b has newer versions of 200..399
    a.write_text("\n".join(_record(n) for n in range(1, 400)) + "\n")
    b.write_text("\n".join(_record(n, "2026-04-01T00:00:00Z", f"newer {n}")
                           for n in range(200, 600)) + "\n")
    db = tmp_path / "kb.sqlite"
    Store(db).close()  # schema first: both processes then only write records
    procs = [subprocess.Popen(_prkb(db, "import", str(f)), env=_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in (a, b)]
    results = [_finished(p) for p in procs]
    figures.add("concurrency", "concurrent runs", 2)
    for (rc, _), f in zip(results, (a, b), strict=True):
        if rc != 0:  # it gave up waiting: running it again completes it
            assert subprocess.run(_prkb(db, "import", str(f)), env=_env()).returncode == 0
    rows = _rows(db)
    assert set(rows) == {str(n) for n in range(1, 600)}  # nothing lost, nothing twice
    assert all(rows[str(n)] == f"newer {n}" for n in range(200, 600))  # newer wins either way
    figures.add("concurrency", "records compared", len(rows))


def test_same_file_imported_three_times_at_once(tmp_path: Path, figures) -> None:
    """Each PR is new in exactly one process: the others see it stored (a race between the
    look-up and the write used to end in 'UNIQUE constraint failed')."""
    f = tmp_path / "same.jsonl"
    f.write_text("\n".join(_record(n) for n in range(1, 300)) + "\n")
    db = tmp_path / "kb.sqlite"
    Store(db).close()
    procs = [subprocess.Popen(_prkb(db, "import", "--json", str(f)), env=_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    counts = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and "Traceback" not in err, err
        counts.append(json.loads(out))
    figures.add("concurrency", "concurrent runs", 3)
    assert sum(c["new"] for c in counts) == 299  # nothing twice
    assert all(c["new"] + c["unchanged"] == 299 and not c["errors"] for c in counts)
    assert set(_rows(db)) == {str(n) for n in range(1, 300)}
    figures.add("concurrency", "records compared", 299)


def test_migration_race_on_a_new_file(tmp_path: Path, figures) -> None:
    """Several processes open a knowledge base that does not exist yet."""
    db = tmp_path / "fresh.sqlite"
    f = tmp_path / "one.jsonl"
    f.write_text(_record(1) + "\n")
    procs = [subprocess.Popen(_prkb(db, "import", str(f)), env=_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    for p in procs:
        rc, err = _finished(p)
        assert rc == 0, err
    figures.add("concurrency", "concurrent runs", 4)
    with Store(db) as store:
        assert store.integrity_ok()
        names = store.applied_migrations()
        assert len(names) == len(set(names))
        assert store.conn.execute("SELECT count(*) FROM prs").fetchone()[0] == 1


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> GitRepoBuilder:
    return history_with_level_changes(tmp_path_factory.mktemp("conc") / "src", 10, 2000)


def test_collect_while_site_builds_read(tmp_path: Path, history: GitRepoBuilder,
                                        figures) -> None:
    db = tmp_path / "kb.sqlite"
    seeds = Path(__file__).parent.parent / "data" / "snapshots" / "curated-seeds.jsonl"
    subprocess.run(_prkb(db, "import", str(seeds)), check=True, capture_output=True, env=_env())
    collect = subprocess.Popen(_prkb(db, "collect", "git", str(history.path)), env=_env(),
                               text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    builds = 0
    while collect.poll() is None or builds == 0:
        site = subprocess.run(_prkb(db, "site", "build", "-o", str(tmp_path / "site"),
                                    "--no-search", "--lang", "en"),
                              capture_output=True, text=True, env=_env(), timeout=120)
        assert site.returncode == 0 and "Traceback" not in site.stderr, site.stderr
        builds += 1
    rc, err = _finished(collect)
    assert rc == 0, err
    figures.add("concurrency", "concurrent runs", builds + 1)
    # the result equals the same collect without a reader next to it
    alone = tmp_path / "alone.sqlite"
    subprocess.run(_prkb(alone, "import", str(seeds)), check=True, capture_output=True,
                   env=_env())
    subprocess.run(_prkb(alone, "collect", "git", str(history.path)), check=True,
                   capture_output=True, env=_env())
    export = [subprocess.run(_prkb(d, "export", "-"), capture_output=True, text=True,
                             env=_env(), check=True).stdout for d in (db, alone)]
    assert export[0] == export[1]
    assert _rows(db) == _rows(alone)
    figures.add("concurrency", "records compared", export[0].count("\n"))


def test_a_writer_holding_the_lock_gives_a_clear_message(tmp_path: Path, figures) -> None:
    """A write lock held longer than the busy timeout: one clear line, exit code 3."""
    db = tmp_path / "kb.sqlite"
    Store(db).close()
    f = tmp_path / "one.jsonl"
    f.write_text(_record(1) + "\n")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        code = (
            "import sys; from prkb.store import Store; import prkb.commands as c; "
            "c.open_store = lambda args, **kw: Store(args.db, timeout=0.5); "
            "from prkb.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-c", code, "--db", str(db), "-q", "import", str(f)],
                           capture_output=True, text=True, env=_env(), timeout=60)
        assert time.monotonic() - t0 < 30
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    figures.add("concurrency", "concurrent runs", 2)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert BUSY in r.stderr
    assert _rows(db) == {}
    assert subprocess.run(_prkb(db, "import", str(f)), env=_env(),
                          capture_output=True).returncode == 0
    assert _rows(db) == {"1": "[Perf] change 1"}
