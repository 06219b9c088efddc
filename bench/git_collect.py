#!/usr/bin/env python3
"""Benchmark: a full ``prkb collect git`` against git's bare pickaxe on the same repository.

    python3 bench/git_collect.py REPO [--branch main] [--runs 1]

Times, in the same run, (1) ``git log -G<the profile's regex> BRANCH -- '*.py'`` (the baseline:
the search alone, nothing parsed or stored), (2) a full ``prkb collect git`` into a fresh
knowledge base (search, per-commit parsing, audit, blame, storage), (3) a rerun with nothing
new. Prints seconds and the ratios full/pickaxe (target <= 1.3) and rerun/full (target < 2%).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prkb.profile import load_profile


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("--branch", default="main")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--runs", type=int, default=1, help="repeat and keep the best of each")
    args = ap.parse_args()
    profile = load_profile(args.profile)
    regex = profile.git_pickaxe_regex()
    pick_cmd = [
        "git",
        "-C",
        args.repo,
        "log",
        "--format=%H",
        f"-G{regex}",
        args.branch,
        "--",
        "*.py",
    ]
    best_pick = best_full = best_rerun = float("inf")
    for _ in range(args.runs):
        best_pick = min(best_pick, timed(pick_cmd))
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "bench.sqlite")
            prkb = [
                sys.executable,
                "-m",
                "prkb",
                "--db",
                db,
                "collect",
                "git",
                args.repo,
                "--branch",
                args.branch,
                "--quiet",
            ]
            if args.profile:
                prkb += ["--profile", args.profile]
            best_full = min(best_full, timed(prkb))
            best_rerun = min(best_rerun, timed(prkb))
    print(f"bare pickaxe (git log -G ... -- '*.py'): {best_pick:8.2f} s")
    print(f"prkb collect git, full run:             {best_full:8.2f} s")
    print(f"prkb collect git, rerun (nothing new):  {best_rerun:8.2f} s")
    print(f"ratio full / pickaxe:  {best_full / best_pick:6.2f}x   (target <= 1.30x)")
    print(f"ratio rerun / full:    {100 * best_rerun / best_full:6.2f}%   (target < 2%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
