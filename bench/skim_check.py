#!/usr/bin/env python3
"""Check and time the audit's skimmed parse against a full parse on a real history.

    python3 bench/skim_check.py REPO [--branch main] [--profile FILE] [--limit N]

Every distinct version (blob) of every file under the profile's scan paths that the audit
would parse is read twice: parsed whole, and parsed skimmed (prkb/analyze/skim.py, the
bodies of functions the audit never reads left empty). The class facts and imports of both
must be equal; the script prints the number of blobs, how many were skimmed, how many fell
back to a full parse, every mismatch (exit 1 if any), and the parse-time ratio skimmed/full
measured in the same run.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prkb.analyze.audit import _relevance_regex, module_facts, skim_words
from prkb.analyze.skim import skim
from prkb.analyze.symbols import SourceError, parse_source
from prkb.profile import load_profile


def blobs(repo: str, branch: str, scan: list[str], glob: str) -> dict[str, str]:
    """blob sha -> a path it had, for every version of the scanned files on the branch."""
    out = subprocess.run(
        ["git", "-C", repo, "log", "--format=", "--raw", "--no-abbrev", "--no-renames",
         branch, "--", *scan], capture_output=True, text=True, check=True).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        if not line.startswith(":"):
            continue
        meta, path = line.split("\t", 1)
        new = meta.split()[3]
        if set(new) != {"0"} and fnmatch.fnmatch(path.rsplit("/", 1)[-1], glob):
            found.setdefault(new, path)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("--branch", default="main")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--limit", type=int, default=0, help="read at most N blobs (0: all)")
    args = ap.parse_args()
    profile = load_profile(args.profile)
    audit = profile.audit
    scan = [str(p) for p in audit.get("scan_paths", [])] or ["."]
    glob = str(profile.raw["profile"].get("python_glob", "*.py"))
    relevant = _relevance_regex(profile)
    words, keep, guarded = skim_words(profile)
    found = blobs(args.repo, args.branch, scan, glob)
    items = sorted(found.items())[: args.limit or None]
    cat = subprocess.Popen(["git", "-C", args.repo, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert cat.stdin is not None and cat.stdout is not None
    n = skimmed = fallback = missing = 0
    t_full = t_skim = 0.0
    bad: list[str] = []
    for sha, path in items:
        cat.stdin.write(f"{sha}\n".encode())
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            missing += 1
            continue
        data = cat.stdout.read(int(header[2]) + 1)[:-1]
        text = data.decode("utf-8", errors="replace")
        if relevant is not None and not relevant.search(text):
            continue
        t0 = time.perf_counter()
        try:
            full = parse_source(text, path)
        except SourceError:
            continue
        t1 = time.perf_counter()
        lean = skim(text, words, keep, guarded)
        try:
            tree = parse_source(lean, path) if lean is not text else full
        except SourceError:
            fallback += 1
            tree = full
        t2 = time.perf_counter()
        t_full += t1 - t0
        t_skim += t2 - t1 if lean is not text else t1 - t0
        n += 1
        skimmed += lean is not text
        a = module_facts(text, path, profile, full)
        b = module_facts(text, path, profile, tree)
        if a != b:
            diff = sorted(k for k in set(a.classes) | set(b.classes)
                          if a.classes.get(k) != b.classes.get(k))
            bad.append(f"{path} @ {sha[:12]}: {', '.join(diff) or 'imports'}")
    cat.stdin.close()
    cat.wait()
    print(f"blobs read: {n} (missing from the clone: {missing})")
    print(f"skimmed: {skimmed}, skimmed text not parsable (read whole): {fallback}")
    print(f"mismatches (facts of skimmed parse != full parse): {len(bad)}")
    for line in bad[:20]:
        print("  " + line)
    if t_full:
        print(f"parse time full {t_full:6.2f} s, skimmed {t_skim:6.2f} s: "
              f"ratio {t_skim / t_full:.2f}x")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
