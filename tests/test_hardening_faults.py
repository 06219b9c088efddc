"""Faults: SIGKILL at random points during both collectors, disk full and read-only output.

A killed run restarted until done must leave the knowledge base a clean run leaves: the
canonical export (``prkb export -``) and every derived table are compared. The kill schedule
comes from a seeded RNG; the seed (fixture ``fault_seed``, see conftest) is printed and
shown on the summary line (``PRKB_FAULT_SEED=<n>`` replays it).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ghserver import FakeGitHub, fixture_repo
from githistory import history_with_level_changes
from gitrepo import GitRepoBuilder

# heavy: faults injected into many real collections and builds: not in the fast tier
pytestmark = pytest.mark.heavy

KILLS = 20
REPO = "vllm-project/vllm"
TOKEN = "ghp_" + "K1llT3st" * 5


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GH_TOKEN", "GITHUB_TOKEN", "PRKB_DB")}
    env.update(extra)
    return env


def _prkb(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "prkb", "--db", str(db), "-q", *args]


_TABLES = {
    "symbol_changes": "SELECT p.ref, s.seq, s.file, s.class_name, s.attr, s.before, s.after,"
                      " s.direction, s.before_attr"
                      " FROM symbol_changes s JOIN prs p ON p.id=s.pr_id",
    "findings": "SELECT p.ref, f.seq, f.rule, f.file, f.class_name, f.message_en, f.commit_sha"
                " FROM findings f JOIN prs p ON p.id=f.pr_id",
    "risk_tags": "SELECT p.ref, t.code FROM risk_tags t JOIN prs p ON p.id=t.pr_id",
    "files": "SELECT p.ref, f.seq, f.path, f.status, f.additions, f.deletions, f.patch"
             " FROM files f JOIN prs p ON p.id=f.pr_id",
    "relations": "SELECT source, target, type, evidence, confidence, origin FROM relations",
    "nodes": "SELECT key, kind, number, title, repo FROM nodes",
    "builder_levels": "SELECT * FROM builder_levels",
    "mined_commits": "SELECT * FROM mined_commits",
    "collect_state": "SELECT source, scope, key, value FROM collect_state",
}


def canonical(db: Path) -> dict[str, list[str]]:
    """``prkb export -`` plus every derived table, as sorted lines (no row ids)."""
    out = subprocess.run(_prkb(db, "export", "-"), capture_output=True, text=True, env=_env(),
                         check=True, timeout=60).stdout
    dump = {"export": out.splitlines()}
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for name, sql in _TABLES.items():
            dump[name] = sorted(json.dumps(list(r), ensure_ascii=False)
                                for r in conn.execute(sql))
    finally:
        conn.close()
    return dump


def _compare(clean: dict[str, list[str]], got: dict[str, list[str]], figures, seed: int,
             skip: tuple[str, ...] = ()) -> None:
    for name, rows in clean.items():
        if name in skip:
            continue
        assert got[name] == rows, f"{name} differs after kills (seed {seed})"
        assert len(set(got["export"])) == len(got["export"])  # nothing twice
        figures.add("faults", "records compared", len(rows))


def kill_loop(start: Callable[[], subprocess.Popen[bytes]],
              wait: Callable[[subprocess.Popen[bytes], random.Random], None],
              rng: random.Random, partial: Callable[[], int]) -> tuple[int, list[int]]:
    """Start, wait for a random point, SIGKILL; repeat until KILLS kills landed mid-run."""
    kills, progress = 0, []
    for _ in range(KILLS * 3):
        if kills == KILLS:
            break
        proc = start()
        try:
            wait(proc, rng)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        progress.append(partial())
    return kills, progress


def _count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # killed before the schema was written
        return 0
    finally:
        conn.close()


# --- collect git -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_history(tmp_path_factory: pytest.TempPathFactory) -> GitRepoBuilder:
    """The replayed vLLM-like history plus 60 level changes: a run of a few seconds."""
    return history_with_level_changes(tmp_path_factory.mktemp("kill") / "src", 60, 1000)


def test_sigkill_collect_git_resumes_to_the_clean_result(tmp_path: Path, big_history,
                                                         figures, fault_seed: int) -> None:
    rng = random.Random(fault_seed)
    clean_db = tmp_path / "clean.sqlite"
    t0 = time.monotonic()
    subprocess.run(_prkb(clean_db, "collect", "git", str(big_history.path)), check=True,
                   capture_output=True, env=_env(), timeout=120)
    full = time.monotonic() - t0
    clean = canonical(clean_db)
    assert len(clean["export"]) == 70

    db = tmp_path / "killed.sqlite"
    cmd = _prkb(db, "collect", "git", str(big_history.path))

    mined = "SELECT count(*) FROM mined_commits"

    def wait(proc: subprocess.Popen[bytes], r: random.Random) -> None:
        # a random number of commits further (0: still starting up), then a random instant
        target = _count(db, mined) + r.randint(0, 2)
        deadline = time.monotonic() + full + 10
        while _count(db, mined) < target and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(r.uniform(0, 0.06))

    kills, progress = kill_loop(
        lambda: subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL),
        wait, rng, lambda: _count(db, mined))
    figures.add("faults", "faults injected", kills)
    assert kills == KILLS, f"only {kills} kills landed mid-run (seed {fault_seed})"
    assert any(0 < p < 70 for p in progress), progress  # some kills stopped it part-way
    last = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=_env(),
                          timeout=120)
    assert last.returncode == 0, last.stderr[-2000:]
    _compare(clean, canonical(db), figures, fault_seed)


# --- collect github --------------------------------------------------------------------------

def test_sigkill_collect_github_resumes_to_the_clean_result(tmp_path: Path, figures,
                                                            fault_seed: int) -> None:
    rng = random.Random(fault_seed + 1)
    with FakeGitHub(fixture_repo(fillers=60), token=TOKEN) as srv:
        def cmd(db: Path, *more: str) -> list[str]:
            return _prkb(db, "collect", "github", REPO, "--api-url", srv.url, *more)

        clean_db = tmp_path / "clean.sqlite"
        subprocess.run(cmd(clean_db), check=True, capture_output=True,
                       env=_env(GH_TOKEN=TOKEN), timeout=120)
        clean = canonical(clean_db)
        total = srv.requests
        db = tmp_path / "killed.sqlite"

        def wait(proc: subprocess.Popen[bytes], r: random.Random) -> None:
            start, after = srv.requests, r.randint(1, max(2, total // (KILLS + 2)))
            deadline = time.monotonic() + 30
            while srv.requests - start < after and proc.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.001)
            time.sleep(r.uniform(0, 0.01))  # mid-request or mid-transaction

        kills, _ = kill_loop(
            lambda: subprocess.Popen(cmd(db), env=_env(GH_TOKEN=TOKEN),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            wait, rng, lambda: _count(db, "SELECT count(*) FROM prs"))
        figures.add("faults", "faults injected", kills)
        assert kills == KILLS, f"only {kills} kills landed mid-run (seed {fault_seed})"
        last = subprocess.run(cmd(db, "--json"), capture_output=True, text=True,
                              env=_env(GH_TOKEN=TOKEN), timeout=120)
        assert last.returncode == 0, last.stderr[-2000:]
        assert json.loads(last.stdout)["complete"] is True
    # the HTTP cache and cursors legitimately differ (timestamps, ETags): compare the data
    _compare(clean, canonical(db), figures, fault_seed, skip=("collect_state",))


def test_sigkill_collect_github_from_git_resumes_to_the_clean_result(tmp_path: Path, figures,
                                                                     fault_seed: int) -> None:
    """The git-assisted GraphQL path: kills between queries, REST checks and transactions."""
    import shutil

    from ghgraphql import require_schema
    from ghscale import World

    require_schema()
    rng = random.Random(fault_seed + 2)
    world = World(tmp_path / "w")
    with FakeGitHub(world.repo, token=TOKEN) as srv:
        def cmd(db: Path, *more: str) -> list[str]:
            return _prkb(db, "collect", "github", REPO, "--api-url", srv.url, *more)

        clean_db, db = tmp_path / "clean.sqlite", tmp_path / "killed.sqlite"
        shutil.copy(world.db, clean_db)
        shutil.copy(world.db, db)
        srv.reset_counters()
        subprocess.run(cmd(clean_db), check=True, capture_output=True,
                       env=_env(GH_TOKEN=TOKEN), timeout=120)
        clean = canonical(clean_db)
        total = srv.requests

        def wait(proc: subprocess.Popen[bytes], r: random.Random) -> None:
            start, after = srv.requests, r.randint(1, max(2, total // (KILLS // 2 + 2)))
            deadline = time.monotonic() + 30
            while srv.requests - start < after and proc.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.001)
            time.sleep(r.uniform(0, 0.01))

        kills, _ = kill_loop(
            lambda: subprocess.Popen(cmd(db), env=_env(GH_TOKEN=TOKEN),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            wait, rng, lambda: _count(db, "SELECT count(*) FROM prs WHERE source='git+github'"))
        figures.add("faults", "faults injected", kills)
        assert kills >= KILLS // 2, f"only {kills} kills landed mid-run (seed {fault_seed})"
        last = subprocess.run(cmd(db, "--json"), capture_output=True, text=True,
                              env=_env(GH_TOKEN=TOKEN), timeout=120)
        assert last.returncode == 0, last.stderr[-2000:]
        assert json.loads(last.stdout)["complete"] is True
    _compare(clean, canonical(db), figures, fault_seed, skip=("collect_state",))


# --- disk full and read-only output ----------------------------------------------------------

@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()}): needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _remount(path: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True)


def _fill(disk: Path) -> None:
    """Write until the disk is full (unbuffered: nothing left to flush on close)."""
    with (disk / "filler").open("wb", buffering=0) as fh:
        for chunk in (1 << 20, 4096):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * chunk)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


_BUILD = ("site", "build", "--no-search", "--lang", "en", "-o")


def _one_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prkb: error: "), lines
    for w in words:
        assert w in lines[0], (w, lines)


def test_disk_full_and_read_only_keep_the_previous_site(tmp_path: Path, figures) -> None:
    db = tmp_path / "kb.sqlite"
    data = Path(__file__).parent.parent / "data" / "snapshots"
    subprocess.run(_prkb(db, "import", str(data / "curated-seeds.jsonl")), check=True,
                   capture_output=True, env=_env())
    with tmpfs(tmp_path / "disk", "16m") as disk:
        site = disk / "site"
        ok = subprocess.run(_prkb(db, *_BUILD, str(site)),
                            capture_output=True, text=True, env=_env(), timeout=120)
        assert ok.returncode == 0, ok.stderr
        before = _tree(site)
        # more PRs, so every page changes and the build needs room
        subprocess.run(_prkb(db, "import", str(data / "vllm-git-history.jsonl")), check=True,
                       capture_output=True, env=_env())
        _fill(disk)
        faults = 0
        r = subprocess.run(_prkb(db, *_BUILD, str(site)),
                           capture_output=True, text=True, env=_env(), timeout=120)
        _one_error(r, "No space left on device", str(site))
        faults += 1
        r = subprocess.run(_prkb(db, "digest", "--week", "2026-W28", "--send-empty", "-o",
                                 str(disk / "d.eml")), capture_output=True, text=True,
                           env=_env(), timeout=60)
        _one_error(r, "No space left on device", "d.eml")
        faults += 1
        assert _tree(site) == before  # the previous site, byte for byte
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "site"]  # no leftovers
        (disk / "filler").unlink()

        _remount(disk, "ro")
        for args, word in (
            ((*_BUILD, str(site)), str(site)),
            (("digest", "--week", "2026-W28", "--send-empty", "-o", str(disk / "d.eml")),
             "d.eml"),
            (("export", str(disk / "x.jsonl")), "x.jsonl"),
        ):
            r = subprocess.run(_prkb(db, *args), capture_output=True, text=True, env=_env(),
                               timeout=120)
            _one_error(r, "Read-only file system", word)
            faults += 1
        assert _tree(site) == before
        _remount(disk, "rw")
        again = subprocess.run(_prkb(db, *_BUILD, str(site)),
                               capture_output=True, text=True, env=_env(), timeout=120)
        assert again.returncode == 0, again.stderr  # room again: the build goes through
        assert _tree(site) != before
    figures.add("faults", "faults injected", faults)
    figures.add("faults", "records compared", len(before))
