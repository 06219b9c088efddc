"""Instructions per site page, counted by valgrind's callgrind: a measure the machine's noise
does not move.

    python3 bench/page_instructions.py [-n 1000] [--pages 100] [--kb FILE]

The wall-clock benches (``bench/site_build.py``) move by 20-40% from one run to the next on a
shared 2-core machine, more than most single changes to rendering save. This one counts the
instructions the process executes (the same code gives the same count, within a few tenths of
a percent), for the pages that make up almost all of a full build:

- ``pr``: a PR page (report facts, the report template, the page layout, the link scan and
  the write), in both languages;
- ``digest``: a weekly digest page;
- ``baseline``: a fixed piece of pure Python (sorting and hashing a list of strings), so that
  a figure can be read as a ratio to what this interpreter does per instruction count, when
  Python or valgrind differ between machines;
- ``build`` (not counted unless asked for: ``--kinds build``, a few minutes at 2,000 PRs): a
  whole cold ``prkb site build`` as a process, its forked workers included (callgrind follows
  them), per page of the site; what a page costs in another page's company (a relation's
  evidence worded once per process, a week beside its PRs) shows here and not per page.

Each kind runs twice under callgrind in a child process (after warming up, ``k`` and
``k + pages`` pages); the difference, divided by ``pages``, is the count per page, free of
the start-up (imports, the gather and the plan). Without valgrind it says so and exits 0.
The knowledge base is ``--kb`` or ``-n`` synthetic PRs generated as ``bench/site_build.py``
does (1,000 by default: a page's cost hardly depends on the number of PRs, except a digest
week's, which grows with the PRs of its week).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WARM = 10  # pages rendered before the counted ones (template and catalog caches filled)


def child(kb: str, kind: str, count: int) -> None:
    """Render ``WARM + count`` pages of ``kind`` (what callgrind counts in the parent)."""
    if kind == "baseline":
        for i in range(WARM + count):
            words = sorted(f"{(i * 7919 + j) % 1009:04d}-word" for j in range(2000))
            hashlib.sha256("".join(words).encode()).hexdigest()
        return
    from prkb.profile import load_profile
    from prkb.site.build import _warm_ups, report_html_for
    from prkb.site.gather import gather
    from prkb.site.plan import current_hashes, plan_pages
    from prkb.site.render import RenderJob, render_run, warm_up
    from prkb.store import Store

    template = {"pr": "site/pr.html", "digest": "site/digest.html"}[kind]
    profile = load_profile(None)
    store = Store(Path(kb))
    data = gather(store, profile)
    report_html = report_html_for(profile)
    plan = plan_pages(store, data, profile, ["zh", "en"], base_url=None,
                      report_html=report_html, known={},
                      currents=current_hashes(data), search=False)
    tmp = Path(tempfile.mkdtemp(prefix="prkb-bench-ir-"))
    job = RenderJob(plan.pages, store, ["zh", "en"], None, tmp, search=False,
                    warm_ups=_warm_ups(profile.rules),
                    prefetch=getattr(report_html, "prefetch", None))  # as the build does
    indexes = [i for i, p in enumerate(plan.pages) if p.template == template]
    if len(indexes) < WARM + count:
        raise SystemExit(f"only {len(indexes)} {kind} pages: use more PRs or fewer --pages")
    warm_up(job, indexes)
    for i in indexes:
        (tmp / plan.pages[i].path).parent.mkdir(parents=True, exist_ok=True)
    try:
        render_run(job, indexes[:WARM + count])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _child(kb: str, kind: str, count: int) -> list[str]:
    """The command of a child rendering ``WARM + count`` pages of ``kind``."""
    return [sys.executable, __file__, "--child", kind, str(count), "--kb", kb]


def _child_env() -> dict[str, str]:
    """The environment of a child: this checkout's prkb first, and Python's bytecode kept
    (as on a user's machine: a shell with ``PYTHONDONTWRITEBYTECODE`` set would have every
    process compile prkb's modules again, about a gigainstruction a build, and a checkout
    whose modules another run had compiled would count less)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def instructions(valgrind: str, kb: str, kind: str, count: int) -> int:
    """What callgrind counts for a child process rendering ``WARM + count`` pages."""
    cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
           *_child(kb, kind, count)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_child_env(), check=False)
    m = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"callgrind failed for {kind}:\n{proc.stderr[-2000:]}")
    return int(m.group(1))


def build_instructions(valgrind: str, kb: str) -> tuple[int, int]:
    """What callgrind counts for a whole cold site build of ``kb`` (the process and every
    process it starts), and the site's pages."""
    work = Path(tempfile.mkdtemp(prefix="prkb-bench-ir-build-"))
    cmd = [sys.executable, "-m", "prkb.cli", "--db", kb, "-q", "site", "build",
           "-o", str(work / "site"), "--no-search", "--json"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, env=_child_env())  # warm caches
        shutil.rmtree(work / "site")
        # a forked process's profile starts with its parent's counts at the fork (callgrind
        # copies them): without a dump (which zeroes them) right before each fork, every
        # forked worker would count again what its parent did before it (imports, the read,
        # the plan). The parent's dump parts are files of their own (cg.PID.N), summed too
        proc = subprocess.run(
            [valgrind, "--tool=callgrind", "--trace-children=yes", "--dump-before=fork",
             f"--callgrind-out-file={work}/cg.%p", *cmd],
            capture_output=True, text=True, env=_child_env(), check=False)
        if proc.returncode != 0:
            raise SystemExit(f"callgrind failed for the build:\n{proc.stderr[-2000:]}")
        pages = json.loads(proc.stdout.strip().splitlines()[-1])["pages"]
        total = 0
        for out in work.glob("cg.*"):
            m = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(errors="replace"),
                          re.MULTILINE)
            total += int(m.group(1)) if m else 0
        return total, int(pages)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000, help="synthetic PRs (default 1000)")
    ap.add_argument("--pages", type=int, default=100, help="pages counted per kind")
    ap.add_argument("--kb", default=None, help="an existing knowledge base to read")
    ap.add_argument("--kinds", default="baseline,pr,digest", help="what to count")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "COUNT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.kb, args.child[0], int(args.child[1]))
        return 0
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind is not installed: nothing counted (apt-get install valgrind)")
        return 0
    work = None
    kb = args.kb
    if kb is None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from site_build import populate

        from prkb.store import Store

        work = Path(tempfile.mkdtemp(prefix="prkb-bench-ir-kb-"))
        kb = str(work / "kb.sqlite")
        with Store(Path(kb)) as store:
            populate(store, args.n)
    try:
        base = None
        for kind in args.kinds.split(","):
            if kind == "build":
                total, pages = build_instructions(valgrind, kb)
                per = total / max(pages, 1)
                ratio = f" = {per / base:.2f} baselines" if base else ""
                print(f"build: {total / 1e9:.3f} G instructions for {pages} pages, "
                      f"{per / 1e6:.3f} M a page{ratio}", flush=True)
                continue
            # the digest has a few weeks only: count fewer of its pages
            count = args.pages if kind != "digest" else max(2, min(args.pages, 20))
            # once unmeasured: the compiled templates are written to their on-disk cache by
            # the first run only (otherwise the first measured run pays for them)
            subprocess.run(_child(kb, kind, 1), check=True, capture_output=True,
                           env=_child_env())  # warm the caches
            low = instructions(valgrind, kb, kind, 0)
            high = instructions(valgrind, kb, kind, count)
            per = (high - low) / count
            if kind == "baseline":
                base = per
            ratio = f" = {per / base:.2f} baselines" if base and kind != "baseline" else ""
            print(f"{kind}: {per / 1e6:.3f} M instructions a page ({count} pages){ratio}",
                  flush=True)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
