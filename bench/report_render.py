"""Benchmark of one report's rendering: the sections written into report.j2 against includes.

    python3 bench/report_render.py [-n 1500] [--rounds 3]

Generates N synthetic PRs (the generator of ``bench/site_build.py``) into a temporary
knowledge base, reads each PR's facts once and localizes them in both languages, then renders
every report as the site's PR pages do (``html``), in one process and alternating rounds:

- ``inline``: the report environment as prkb makes it (``render.report.SectionsInline``: each
  section's template written into report.j2);
- ``include``: the same environment and the same template, but its sections taken by
  ``{% include %}`` (report.j2 as it is on disk), the baseline.

Prints the median ms per report of each and the ratio inline/include (lower is better), and
checks the two give the same text.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from site_build import populate

from prkb.profile import load_profile
from prkb.render import report
from prkb.store import Store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=1500, help="synthetic PRs (default 1500)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each (default 3)")
    args = ap.parse_args(argv)
    profile = load_profile()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "kb.sqlite")
        populate(store, args.n)
        refs = [r[0] for r in store.conn.execute("SELECT ref FROM prs ORDER BY ref")]
        ctxs = [report.localize(report.report_facts(store, ref, profile), lang, profile)
                for ref in refs for lang in ("zh", "en")]
        store.close()
    inline = {lang: report._report_env(lang, "html", "", profile.rules).get_template(
        report.REPORT) for lang in ("zh", "en")}
    include = {}
    for lang, tpl in inline.items():
        env = tpl.environment.overlay(cache_size=16)
        assert isinstance(env.loader, report.SectionsInline)
        env.loader = env.loader.inner  # report.j2 as on disk: its sections by {% include %}
        env.bytecode_cache = None
        include[lang] = env.get_template(report.REPORT)
    for c in ctxs[:20]:  # warm: compiled, the catalogs' caches filled
        assert inline[c["lang"]].render(c) == include[c["lang"]].render(c)
    times: dict[str, list[float]] = {"inline": [], "include": []}
    for _ in range(args.rounds):
        for name, tpls in (("inline", inline), ("include", include)):
            t0 = time.perf_counter()
            for c in ctxs:
                tpls[c["lang"]].render(c)
            times[name].append((time.perf_counter() - t0) * 1000 / len(ctxs))
    same = all(inline[c["lang"]].render(c) == include[c["lang"]].render(c) for c in ctxs)
    a, b = statistics.median(times["inline"]), statistics.median(times["include"])
    print(f"{len(ctxs)} reports (html, zh and en), median of {args.rounds} rounds")
    print(f"inline (sections written into report.j2): {a:.3f} ms/report")
    print(f"include (the baseline, same run): {b:.3f} ms/report")
    print(f"ratio inline/include: {a / b:.2f}; same text: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
