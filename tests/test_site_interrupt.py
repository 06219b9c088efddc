"""Ctrl-C during a site build's pooled render: the build stops at once with the CLI's one
line, the workers say nothing, no temporary tree is left, and the site already there is the
same file for file, byte for byte."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prkb.store import Store

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _populate(path: Path, n: int) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import site_build  # the bench's generator of synthetic PRs

        with Store(path) as store:
            site_build.populate(store, n)
    finally:
        sys.path.remove(str(BENCH))


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _build(kb: Path, out: Path, *more: str) -> subprocess.Popen[str]:
    # a session of its own (Ctrl-C reaches its process group, as from a terminal) and the
    # default SIGINT handling (a test runner's children may start with it ignored)
    return subprocess.Popen(
        [sys.executable, "-m", "prkb.cli", "--db", str(kb), "site", "build", "-o", str(out),
         "--no-search", *more],
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the render pool needs two cores")
def test_ctrl_c_during_the_pooled_render_keeps_the_site(tmp_path: Path) -> None:
    kb, out = tmp_path / "kb.sqlite", tmp_path / "site"
    _populate(kb, 500)  # 1,000 PR pages: rendered by a pool of workers
    first = _build(kb, out)
    assert first.wait(timeout=300) == 0, first.communicate()[1]
    before = _tree(out)
    assert len(before) > 1000
    # another base URL: every page is made again, into a temporary tree beside the site
    build = _build(kb, out, "--base-url", "https://example.org/prkb/")
    deadline = time.monotonic() + 120
    pages = 0
    while pages < 40 and build.poll() is None and time.monotonic() < deadline:
        pages = sum(len(list(t.glob("*/pr/*.html"))) for t in tmp_path.glob(".site.building-*"))
        time.sleep(0.05)
    assert build.poll() is None, "the build ended before it could be interrupted"
    assert pages >= 40  # the workers are rendering
    os.killpg(build.pid, signal.SIGINT)
    _, err = build.communicate(timeout=30)
    assert build.returncode == 130, err
    assert "interrupted" in err
    assert "ForkPoolWorker" not in err and "Traceback" not in err, err
    assert not list(tmp_path.glob(".site.building-*"))
    assert _tree(out) == before
