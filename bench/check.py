"""Benchmark of ``prkb check`` (a pull request: base against head) against ``prkb audit`` at one
revision, in the same run, on a real clone (e.g. the fork's bare mirror).

    python3 bench/check.py MIRROR [--pr 42885] [--base REV --head REV] [--runs 3]

By default the pair is the commit whose subject ends in ``(#PR)`` on ``main`` and its first
parent. Both commands run as the CI runs them, ``python3 -m prkb.cli ...`` in a new process
(interpreter start and imports included); the best of ``--runs`` is kept. Prints the two times,
their ratio and the check's exit code. Target: under 3 s per check.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 3.0


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def _time(argv: list[str], runs: int) -> tuple[float, int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best, rc, out = float("inf"), 0, ""
    for _ in range(runs):
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "prkb.cli", *argv], env=env,
                             capture_output=True, text=True)
        best = min(best, time.perf_counter() - t0)
        rc, out = res.returncode, res.stdout
        if rc not in (0, 1):
            sys.exit(f"prkb {argv[0]} failed ({rc}): {res.stderr.strip()}")
    return best, rc, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mirror")
    ap.add_argument("--pr", type=int, default=42885)
    ap.add_argument("--branch", default="main")
    ap.add_argument("--base")
    ap.add_argument("--head")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    head = args.head
    if head is None:
        hits = _git(args.mirror, "log", "--format=%H", f"--grep=(#{args.pr})", "--fixed-strings",
                    args.branch).split()
        if not hits:
            sys.exit(f"no commit of #{args.pr} on {args.branch}")
        head = hits[0]
    base = args.base or _git(args.mirror, "rev-parse", f"{head}^")
    check_s, rc, out = _time(["check", args.mirror, "--base", base, "--head", head], args.runs)
    audit_s, _, _ = _time(["audit", args.mirror, "--rev", head], args.runs)
    summary = next((ln for ln in out.splitlines() if ln.startswith("new findings")), "")
    print(f"pair: {base[:12]}..{head[:12]}  ({summary}; exit {rc})")
    print(f"prkb check  {check_s:6.2f} s  (best of {args.runs}; target < {TARGET_S:.0f} s: "
          f"{'met' if check_s < TARGET_S else 'MISSED'})")
    print(f"prkb audit  {audit_s:6.2f} s  (one revision)")
    print(f"check / audit = {check_s / audit_s:.2f}x")
    return 0 if check_s < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
