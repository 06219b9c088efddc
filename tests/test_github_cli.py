"""``prkb collect github`` in a subprocess: resume after SIGKILL, and the token never leaks."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from ghserver import FIXTURE_KEPT, FakeGitHub, Fault, fixture_repo

from prkb.collect.github import collect_github
from prkb.collect.snapshot import export_records
from prkb.profile import load_profile
from prkb.store import Store

REPO = "vllm-project/vllm"
TOKEN = "ghp_" + "S3cr3tT0k3n" * 4
# runs the CLI with every logger at DEBUG on stderr, so logs are checked too
RUNNER = (
    "import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
    "from prkb.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GH_TOKEN", "GITHUB_TOKEN", "PRKB_DB")}
    env.update(extra)
    return env


def _cmd(db: Path, url: str, *more: str, logs: bool = False) -> list[str]:
    head = [sys.executable, "-c", RUNNER] if logs else [sys.executable, "-m", "prkb.cli"]
    return [*head, "--db", str(db), "-q", "collect", "github", REPO, "--api-url", url, *more]


def _export(db: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "prkb.cli", "--db", str(db), "export", "-"],
        capture_output=True, text=True, check=True, env=_env(),
    )
    return out.stdout


def test_killed_runs_resume_to_the_clean_result(tmp_path: Path) -> None:
    with FakeGitHub(fixture_repo(fillers=80), token=TOKEN) as srv:
        clean_db = tmp_path / "clean.sqlite"
        with Store(clean_db) as store:  # the clean run, in-process (same library as the CLI)
            collect_github(store, REPO, load_profile(), token=TOKEN, api_url=srv.url)
        clean = _export(clean_db)
        total = srv.requests
        assert clean.count("\n") == len(FIXTURE_KEPT)

        db = tmp_path / "killed.sqlite"
        kills = 0
        partials = []
        for after in (4, total // 3, (2 * total) // 3):
            start = srv.requests
            proc = subprocess.Popen(_cmd(db, srv.url), env=_env(GH_TOKEN=TOKEN),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while srv.requests - start < after and proc.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.002)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait()
            with Store(db) as store:
                partials.append("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                                        for r in export_records(store)))
        assert kills >= 2
        assert partials[0] != clean  # the first kill stopped the collection part-way
        last = subprocess.run(_cmd(db, srv.url, "--json"), capture_output=True, text=True,
                              env=_env(GH_TOKEN=TOKEN), timeout=60)
        assert last.returncode == 0, last.stderr[-2000:]
        assert '"complete": true' in last.stdout
        assert '"skipped": 0' not in last.stdout  # it resumed: PRs examined before were skipped
        assert _export(db) == clean


def _grep_everywhere(token: str, *texts: str, files: list[Path]) -> None:
    for t in texts:
        assert token not in t
    for f in files:
        if f.exists():
            assert token.encode() not in f.read_bytes(), f


def test_token_never_leaks(tmp_path: Path) -> None:
    with FakeGitHub(fixture_repo(fillers=20), token=TOKEN) as srv:
        db = tmp_path / "kb.sqlite"
        srv.faults = [Fault("502", "/pulls/101/files"), Fault("secondary", "/pulls/102/files")]
        ok = subprocess.run(_cmd(db, srv.url, logs=True), capture_output=True, text=True,
                            env=_env(GH_TOKEN=TOKEN), timeout=60)
        assert ok.returncode == 0, ok.stderr[-2000:]
        assert all(r.authorized for r in srv.log)
        assert "DEBUG" in ok.stderr  # the logs were on, and are checked below
        files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
        _grep_everywhere(TOKEN, ok.stdout, ok.stderr, _export(db), files=files)

        # GITHUB_TOKEN is the fallback; a token the server rejects is an error, not a leak
        wrong = TOKEN[:-4] + "XXXX"
        bad = subprocess.run(_cmd(tmp_path / "bad.sqlite", srv.url, logs=True), capture_output=True,
                             text=True, env=_env(GITHUB_TOKEN=wrong), timeout=60)
        assert bad.returncode != 0
        assert "401" in bad.stderr and "Traceback" not in bad.stderr
        _grep_everywhere(wrong, bad.stdout, bad.stderr,
                         files=[tmp_path / "bad.sqlite", tmp_path / "bad.sqlite-wal"])

    # nothing listens there any more: a connection error, with the token still hidden
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = subprocess.run(_cmd(tmp_path / "gone.sqlite", f"http://127.0.0.1:{port}", logs=True),
                          capture_output=True, text=True, env=_env(GH_TOKEN=TOKEN), timeout=30)
    assert gone.returncode != 0 and "unreachable" in gone.stderr
    # one short line: why, not the HTTP library's wrappers (it was 340 characters)
    error = [ln for ln in gone.stderr.splitlines() if ln.startswith("prkb: error:")]
    assert len(error) == 1 and error[0].endswith(" unreachable: connection refused")
    assert len(error[0]) < 120 and "Max retries" not in gone.stderr.split("prkb: error:")[-1]
    _grep_everywhere(TOKEN, gone.stdout, gone.stderr, files=[tmp_path / "gone.sqlite"])


def test_unauthenticated_warns_once(tmp_path: Path) -> None:
    with FakeGitHub(fixture_repo(fillers=5), token=TOKEN) as srv:
        run = subprocess.run(
            [sys.executable, "-m", "prkb.cli", "--db", str(tmp_path / "kb.sqlite"), "collect",
             "github", REPO, "--api-url", srv.url, "--max", "3", "--json"],
            capture_output=True, text=True, env=_env(), timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert run.stderr.count("running unauthenticated") == 1
        # the new knowledge base is announced (collect may create one, and says so)
        assert f"created a new knowledge base at {tmp_path / 'kb.sqlite'}" in run.stderr
        assert '"examined": 3' in run.stdout and '"authenticated": false' in run.stdout
        assert not any(r.authorized for r in srv.log)
