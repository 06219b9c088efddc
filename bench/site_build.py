"""Benchmark of ``prkb site build``: a full build of N synthetic PRs, then an incremental one.

    python3 bench/site_build.py [-n 10000] [--no-search] [--keep DIR]

Generates N synthetic PRs (declaration changes on 40 builders, builder readings, findings,
relations, Chinese and English text) into a temporary knowledge base through ``prkb.ingest.ingest``,
builds the site in both languages (search indexing timed separately), changes one PR, and
builds again (after flushing the full build's writes to disk). Prints pages per second, ms
per page and the incremental/full ratio.
Targets: < 3 ms per page for the full build, < 2 s for the incremental one.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site.build import build_site
from prkb.store import Store

LEVELS = ["NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS"]
PLATFORMS = ["rocm_", "xpu_", "flashinfer_", "triton_", "cpu_attn_", "flash_attn_"]
WORDS_EN = ["graph", "capture", "decode", "speculative", "batch", "kernel", "threshold",
            "backend", "regression", "latency", "throughput", "metadata"]
WORDS_ZH = ["图捕获", "推测解码", "批次", "回退", "性能", "正确性", "后端", "阈值", "内核", "修复"]


def synthetic_record(i: int, n: int, rng: random.Random, levels: dict[str, str]) -> dict[str, Any]:
    b = rng.randrange(40)
    cls = f"Synth{b}MetadataBuilder"
    path = f"vllm/v1/attention/backends/{PLATFORMS[b % len(PLATFORMS)]}synth{b}.py"
    number = 20000 + i
    before = levels.get(cls)
    after = rng.choice([lv for lv in LEVELS if lv != before])
    day = 1 + i * 700 // max(n, 1)
    when = f"2024-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}T{i % 24:02d}:00:00Z"
    when = f"{2024 + day // 336}{when[4:]}"
    state = rng.choices(["merged", "open", "closed"], [8, 1, 1])[0]
    direction = "added" if before is None else (
        "raised" if LEVELS.index(after) > LEVELS.index(before) else "lowered")
    if state == "merged":
        levels[cls] = after
    sha = f"{rng.getrandbits(160):040x}"
    words = " ".join(rng.choice(WORDS_EN) for _ in range(40))
    zh = "".join(rng.choice(WORDS_ZH) for _ in range(20))
    body = (f"## Purpose\n\nSet `{cls}` to `{after}`. {words}\n\n{zh}\n\n"
            + (f"Follow-up to #{number - 1 - rng.randrange(min(i, 50))}.\n" if i else ""))
    rec: dict[str, Any] = {
        "number": number,
        "title": f"[Attention] {cls}: {after} ({rng.choice(WORDS_EN)} {rng.choice(WORDS_ZH)})",
        "body": body,
        "state": state,
        "created_at": when,
        "updated_at": when,
        "merged_at": when if state == "merged" else None,
        "closed_at": when if state != "open" else None,
        "merge_commit_sha": sha if state == "merged" else None,
        "html_url": f"https://github.com/vllm-project/vllm/pull/{number}",
        "user": {"login": f"dev{rng.randrange(200)}"},
        "labels": [{"name": "synthetic"}],
        "files": [{"filename": path, "status": "modified", "additions": 1, "deletions": 1,
                   "patch": f"@@ -10,1 +10,1 @@\n-    _cudagraph_support = {before}\n"
                            f"+    _cudagraph_support = {after}\n"}],
        "comments": [{"user": {"login": "reviewer"}, "body": f"LGTM {zh[:6]}",
                      "created_at": when}],
        "source": "curated",
        "prkb": {
            "repo": "vllm-project/vllm",
            "symbol_changes": [{"file": path, "class": cls, "attr": "_cudagraph_support",
                                "before": before, "after": after, "direction": direction}],
            "builder_levels": [{"class": cls, "file": path, "declared": after,
                                "effective": after, "dynamic": b % 7 == 0,
                                "spec_ready": after != "UNIFORM_BATCH"}]
            if state == "merged" else [],
            "findings": [{"rule": "cg-uniform-without-spec-decode", "file": path, "class": cls,
                          "message_en": f"{cls} declares {after} without spec-decode support",
                          "message_zh": f"{cls} 声明 {after} 但不支持推测解码"}]
            if i % 97 == 0 else [],
        },
    }
    return rec


def populate(store: Store, n: int, seed: int = 1) -> None:
    profile = load_profile(None)
    rng = random.Random(seed)
    levels: dict[str, str] = {}
    for i in range(n):
        ingest(store, synthetic_record(i, n, rng, levels), profile)
    try:
        from prkb.graph import build_relations
    except ImportError:
        return
    build_relations(store, profile)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="synthetic PRs (default 10000)")
    ap.add_argument("--no-search", action="store_true", help="skip the Pagefind index")
    ap.add_argument("--keep", type=Path, default=None, help="keep the KB and site in DIR")
    ap.add_argument("--reuse-kb", action="store_true",
                    help="with --keep: use DIR/kb.sqlite as it is if it exists (no generation)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="prkb-bench-site-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    profile = load_profile(None)
    try:
        t = time.perf_counter()
        if args.reuse_kb and (work / "kb.sqlite").exists():
            print(f"using the knowledge base in {work}", flush=True)
        else:
            for name in ("kb.sqlite", "kb.sqlite-wal", "kb.sqlite-shm"):
                (work / name).unlink(missing_ok=True)
            with Store(work / "kb.sqlite") as store:
                populate(store, args.n)
            print(f"generated {args.n} PRs in {time.perf_counter() - t:.1f}s", flush=True)
        out = work / "site"
        if out.exists():
            shutil.rmtree(out)
        with Store(work / "kb.sqlite") as store:
            full = build_site(store, out, profile, search=not args.no_search)
        t_full = full.seconds["total"] - full.seconds.get("search", 0.0)
        print(f"full build: {full.pages} pages in {t_full:.2f}s = "
              f"{full.pages / t_full:.0f} pages/s, {1000 * t_full / full.pages:.2f} ms/page "
              f"(target < 3 ms/page)")
        print("  stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in full.seconds.items()))
        if "search" in full.seconds:
            print(f"  search index: {full.search_pages} pages in {full.seconds['search']:.2f}s")
        # the full build's files reach the disk before the incremental build is timed (its
        # write-back would otherwise land on the next seconds, whatever runs then)
        os.sync()
        with Store(work / "kb.sqlite") as store:
            rng = random.Random(7)
            rec = synthetic_record(args.n // 2, args.n, rng, {})
            rec["title"] = rec["title"] + f" (edited {time.time_ns()})"
            rec["number"] = 20000 + args.n // 2
            # newer than anything stored, also when the knowledge base is reused
            newest = store.conn.execute("SELECT max(updated_at) FROM prs").fetchone()[0]
            later = datetime.fromisoformat(newest.replace("Z", "+00:00")) + timedelta(days=1)
            rec["updated_at"] = max(later, datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
            ingest(store, rec, profile)
            inc = build_site(store, out, profile, search=not args.no_search)
        t_inc = inc.seconds["total"] - inc.seconds.get("search", 0.0)
        print(f"incremental build after one PR changed: {inc.rendered} pages rendered, "
              f"{inc.reused} unchanged, {t_inc:.2f}s (target < 2 s); "
              f"ratio to the full build {t_inc / t_full:.3f}")
        print("  stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in inc.seconds.items()))
        if "search" in inc.seconds:
            print(f"  search index: {'re-indexed' if inc.search_reindexed else 'kept'} in "
                  f"{inc.seconds['search']:.2f}s")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
