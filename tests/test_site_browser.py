"""The built site in real headless Chromium, served by ``prkb site serve`` on loopback.

One site, one server and one browser per module. Every test collects console errors, page
errors and failed requests (there must be none) and fails on any dialog (hostile PR text
must never run).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sitekb import make_kb, plain_record

from prkb.glossary import label as glossary_label
from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.render.i18n import gettext
from prkb.site import links as site_links
from prkb.site import pages as site_pages
from prkb.site.build import build_site
from prkb.site.gather import builder_slug
from prkb.store import Store

# heavy: real headless Chromium: not in the fast tier
pytestmark = [pytest.mark.browser, pytest.mark.heavy]

# builder pages are named by file and class (site.gather.builder_slug)
SYNTH_PAGE = "builder/" + builder_slug("vllm/v1/attention/backends/rocm_synth.py",
                                       "SynthMetadataBuilder")
TRITON_PAGE = "builder/" + builder_slug("vllm/v1/attention/backends/mla/triton_mla.py",
                                        "TritonMLAMetadataBuilder")

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

if not Path(CHROMIUM).exists():  # pragma: no cover - CI installs it (tests/run.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    # the home page's HTML holds only the newest rows; the rest come from timeline.json
    with make_kb(tmp / "kb.sqlite") as store, pytest.MonkeyPatch.context() as mp:
        mp.setattr(site_pages, "HOME_ROWS", 3)
        build_site(store, tmp / "site", load_profile(None), search=True)
    assert (tmp / "site" / "en" / "index.html").read_text().count('<li class="pr ') == 3
    return tmp / "site"


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """``prkb site serve`` on a free loopback port; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prkb.cli", "site", "serve", "-d", str(site), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else "died"
                    raise RuntimeError(err) from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    with serve(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


class Watch:
    """Console errors, page errors, failed requests and dialogs of one page."""

    def __init__(self, page: Any) -> None:
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        # a request cancelled by the next navigation (net::ERR_ABORTED) is no fault of the site
        page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url}")
                if "ERR_ABORTED" not in (r.failure or "") else None)
        page.on("response", lambda r: self.problems.append(f"HTTP {r.status}: {r.url}")
                if r.status >= 400 else None)

        def on_dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)

    def check(self) -> None:
        assert not self.dialogs, f"a script from PR text ran: {self.dialogs}"
        assert not self.problems, self.problems


@pytest.fixture()
def page(browser: Any) -> Iterator[tuple[Any, Watch]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    watch = Watch(pg)
    yield pg, watch
    ctx.close()
    watch.check()


def test_home_filter_then_pr_then_language_switch(page: tuple[Any, Watch], base_url: str) -> None:
    pg, _ = page
    pg.goto(base_url + "en/index.html")
    pg.wait_for_selector("#timeline[data-full='1']")
    rows = pg.locator("#timeline li.pr")
    total = rows.count()
    assert total == 7
    pg.select_option("#f-dir", "lowered")
    visible = pg.locator("#timeline li.pr:visible")
    assert visible.count() == 1
    assert "47144" in visible.first.inner_text()
    assert "1 of 7" in pg.inner_text("#f-count")
    pg.select_option("#f-dir", "")
    pg.select_option("#f-state", "closed")
    assert pg.locator("#timeline li.pr:visible").count() == 1  # 47310 was closed unmerged
    pg.select_option("#f-state", "")
    pg.select_option("#f-platform", "rocm")
    shown = pg.locator("#timeline li.pr:visible").count()
    assert 0 < shown < total
    pg.click("text=#47144")
    pg.wait_for_url("**/en/pr/47144.html")
    assert "TritonMLA" in pg.inner_text("h1")
    assert pg.locator("section.report h2, section.report h1").count() >= 2
    pg.click("#lang-zh")
    pg.wait_for_url("**/zh/pr/47144.html")
    assert pg.evaluate("document.documentElement.lang") == "zh-CN"
    assert "TritonMLA" in pg.inner_text("h1")


def test_follow_a_related_pr(page: tuple[Any, Watch], base_url: str) -> None:
    pg, _ = page
    pg.goto(base_url + "en/pr/90011.html")
    pg.click("section.related a.prlink")
    pg.wait_for_url("**/en/pr/90010.html")
    assert "Synth A" in pg.inner_text("h1")


def test_hostile_pr_page_runs_nothing(page: tuple[Any, Watch], base_url: str) -> None:
    pg, watch = page
    for path in ("en/pr/90001.html", "zh/pr/90001.html", "en/index.html", "en/audit.html",
                 "en/matrix.html", "en/graph.html"):
        pg.goto(base_url + path)
        pg.wait_for_load_state("load")
        pg.wait_for_timeout(150)
    assert not watch.dialogs
    pg.goto(base_url + "en/pr/90001.html")
    assert "<script>" in pg.inner_text("h1")  # shown as text
    assert pg.evaluate("document.querySelectorAll('main script, main iframe, main svg "
                       "[onload]').length") == 0


@pytest.mark.parametrize(("lang", "word", "expect"), [
    ("en", "capture", "90010"),
    ("zh", "推测解码", "90001"),
    ("zh", "图捕获", "9001"),
])
def test_search_finds_english_and_chinese_words(
    page: tuple[Any, Watch], base_url: str, lang: str, word: str, expect: str
) -> None:
    pg, _ = page
    pg.goto(base_url + f"{lang}/search.html")
    pg.fill("#q", word)
    pg.press("#q", "Enter")
    pg.wait_for_selector("#results li a", timeout=15000)
    hrefs = pg.eval_on_selector_all("#results li a", "els => els.map(e => e.href)")
    assert any(f"/{lang}/pr/{expect}" in h for h in hrefs), hrefs
    pg.click("#results li a >> nth=0")
    pg.wait_for_load_state("load")
    assert f"/{lang}/" in pg.url


def test_graph_and_matrix(page: tuple[Any, Watch], base_url: str, site: Path) -> None:
    pg, _ = page
    pg.goto(base_url + "en/graph.html")
    pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    assert pg.locator("#graph canvas").count() >= 1
    n_nodes = len(pg.evaluate(GRAPH_DATA_JS)["nodes"])
    assert n_nodes >= 3
    kind = pg.eval_on_selector("#g-type", "s => s.options[1].value")
    rows = pg.locator("#edges tbody tr").count()
    pg.select_option("#g-type", kind)
    shown = pg.locator("#edges tbody tr:visible").count()
    assert shown == pg.locator(f"#edges tbody tr[data-type='{kind}']").count() >= 1
    assert rows >= shown
    pg.goto(base_url + "en/matrix.html")
    seg = pg.locator("#matrix a[href='pr/90011.html']")
    assert seg.count() == 1
    seg.locator("rect").first.click()
    pg.wait_for_url("**/en/pr/90011.html")


def test_every_internal_link_is_served(base_url: str, site: Path) -> None:
    seen: set[str] = set()
    for f in sorted(site.rglob("*.html")):
        rel = f.relative_to(site).as_posix()
        if rel.startswith("pagefind/"):
            continue
        seen.update(site_links.internal_links(rel, f.read_text()))
    assert len(seen) > 20
    for target in sorted(seen):
        with urllib.request.urlopen(base_url + target, timeout=5) as r:
            assert r.status == 200, target
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(base_url + "en/pr/999999.html", timeout=5)
    assert e.value.code == 404 and b"404" in e.value.read()


def test_screenshots_and_mobile_layout(browser: Any, base_url: str, tmp_path: Path) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    pg = ctx.new_page()
    watch = Watch(pg)
    pg.goto(base_url + "en/index.html")
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"home page scrolls sideways on a phone ({width}px)"
    shots = os.environ.get("PRKB_SITE_SHOTS")
    pg.screenshot(path=f"{shots or tmp_path}/home-mobile.png")
    ctx.close()
    watch.check()
    if shots:  # PRKB_SITE_SHOTS=/some/dir keeps desktop screenshots to look at
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        pg = ctx.new_page()
        for name in ("index", "matrix", "graph", "pr/45149", SYNTH_PAGE):
            pg.goto(base_url + f"en/{name}.html")
            pg.wait_for_timeout(300)
            pg.screenshot(path=f"{shots}/{name.replace('/', '-')}.png", full_page=True)
        ctx.close()


def test_digest_from_navigation_to_a_pr_and_language_switch(
    page: tuple[Any, Watch], base_url: str
) -> None:
    pg, _ = page
    pg.goto(base_url + "en/matrix.html")
    pg.click("nav.nav >> text=Digests")
    pg.wait_for_url("**/en/digest/index.html")
    pg.click("ul.weeks >> text=2026-W28")
    pg.wait_for_url("**/en/digest/2026-W28.html")
    assert "2026-W28" in pg.inner_text("h1")
    pg.click("#lang-zh")
    pg.wait_for_url("**/zh/digest/2026-W28.html")
    assert "周报" in pg.inner_text("h1")
    pg.click("article.digestpage a[href='../pr/90001.html'] >> nth=0")
    pg.wait_for_url("**/zh/pr/90001.html")


# Layout boxes measured in the browser (not pixels): text that overlaps other text, table
# columns narrower than the longest word in them, and boxes that stick out of a phone's
# viewport outside a scrollable container. Returns a list of problems, each a short string.
LAYOUT_JS = r"""
() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const cjk = /[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]/;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.classList.length ? "." + Array.from(el.classList).join(".") : "");
  const where = (el) => { const p = []; for (let e = el; e && e !== document.body && p.length < 4;
    e = e.parentElement) p.unshift(name(e)); return p.join(" > "); };
  const scrolls = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const o = getComputedStyle(e).overflowX;
      if (o === "auto" || o === "scroll") return e;
    }
    return null;
  };
  // 1. text boxes: one rect per line of each visible text node, clipped to its scroll container
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const boxes = [];
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.data.trim()) continue;
    const el = t.parentElement;
    if (!el || el.closest("script, style, noscript, [hidden]")) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden" || st.display === "none" || +st.opacity === 0) continue;
    const r = document.createRange(); r.selectNodeContents(t);
    const clip = scrolls(el); const c = clip ? clip.getBoundingClientRect() : null;
    for (const q of r.getClientRects()) {
      let x0 = q.left, x1 = q.right, y0 = q.top, y1 = q.bottom;
      if (c) {
        x0 = Math.max(x0, c.left); x1 = Math.min(x1, c.right);
        y0 = Math.max(y0, c.top); y1 = Math.min(y1, c.bottom);
      }
      if (x1 - x0 < 1 || y1 - y0 < 1) continue;
      boxes.push({ x0, x1, y0, y1, el, text: t.data.trim().slice(0, 30) });
      if (!clip && q.right > vw + 1)
        problems.push(`text "${t.data.trim().slice(0, 30)}" (${where(el)}) ends at `
          + `${Math.round(q.right)}px, beyond the ${vw}px viewport`);
    }
  }
  boxes.sort((a, b) => a.y0 - b.y0);
  const tol = 2;  // glyph boxes of neighbouring lines may touch
  for (let i = 0; i < boxes.length && problems.length < 40; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length && boxes[j].y0 < a.y1 - tol; j++) {
      const b = boxes[j];
      if (a.el === b.el) continue;
      if (Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > tol
          && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > tol)
        problems.push(`text overlaps: "${a.text}" (${where(a.el)}) and "${b.text}" `
          + `(${where(b.el)})`);
    }
  }
  // 2. table columns at least as wide as their longest word: a run of letters, digits and
  // "-_.:" (an identifier, a date, a level name), or a Chinese word as the browser's own
  // word segmenter cuts a CJK run (brackets, quotes, "/" and spaces separate words)
  const ctx = document.createElement("canvas").getContext("2d");
  const seg = new Intl.Segmenter(document.documentElement.lang || "en", { granularity: "word" });
  const words = (s) => {  // [word, offset in s]
    const out = [];
    for (const m of s.matchAll(new RegExp("[\\p{L}\\p{N}_.:\\-]+", "gu"))) {
      if (!cjk.test(m[0])) { out.push([m[0], m.index]); continue; }
      for (const w of seg.segment(m[0])) if (w.isWordLike) out.push([w.segment, m.index + w.index]);
    }
    return out;
  };
  const lines = (rects) => new Set(Array.from(rects, (q) => Math.round(q.top))).size;
  for (const cell of document.querySelectorAll("td, th")) {
    const cs = getComputedStyle(cell);
    if (cs.display !== "table-cell" || cell.closest("[hidden]")) continue;
    const inner = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const tw = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let t = tw.nextNode(); t; t = tw.nextNode()) {
      const el = t.parentElement;
      if (el.closest("svg")) continue;
      const est = getComputedStyle(el); ctx.font = est.font;
      const pad = el === cell ? 0 : parseFloat(est.paddingLeft) + parseFloat(est.paddingRight);
      for (const [w, at] of words(t.data)) {
        const need = ctx.measureText(w).width + pad;
        // broken inside the word: a break after a hyphen is a line break of prose, and so is
        // one between two Chinese characters of a long text (only a label keeps its words)
        const label = t.data.trim().length <= 12;
        const broken = (label || !cjk.test(w)) && w.split("-").some((part, k, all) => {
          const from = at + all.slice(0, k).reduce((n, p) => n + p.length + 1, 0);
          if (!part) return false;
          const r = document.createRange(); r.setStart(t, from); r.setEnd(t, from + part.length);
          return lines(r.getClientRects()) > 1;
        });
        if (need > inner + 1 || broken) {
          problems.push(`column narrower (${Math.round(inner)}px) than the word `
            + `"${w.slice(0, 30)}" (${Math.round(need)}px) in ${where(cell)}`);
          break;
        }
      }
    }
  }
  // 3. nothing sticks out to the right of the viewport outside a scrollable container
  if (document.documentElement.scrollWidth > vw + 1)
    problems.push(`page scrolls sideways: ${document.documentElement.scrollWidth}px > ${vw}px`);
  for (const el of document.body.querySelectorAll("*")) {
    const q = el.getBoundingClientRect();
    if (q.width === 0 || q.right <= vw + 1 || scrolls(el)) continue;
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    problems.push(`${where(el)} ends at ${Math.round(q.right)}px, beyond the ${vw}px viewport`);
    if (problems.length > 60) break;
  }
  return problems;
}
"""

LAYOUT_PAGES = ["index.html", "matrix.html", "graph.html", "audit.html", "search.html",
                "digest/index.html", "digest/2026-W28.html", "pr/47144.html", "pr/90001.html",
                "pr/90011.html", f"{TRITON_PAGE}.html", f"{SYNTH_PAGE}.html"]


@pytest.mark.parametrize("width", [390, 1366])
def test_layout_of_every_page_kind(browser: Any, base_url: str, tmp_path: Path,
                                   width: int) -> None:
    """Every page kind in both languages: no overlapping text, no table column narrower than
    its longest word, nothing wider than a phone's screen outside a scrollable container."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, device_scale_factor=1)
    pg = ctx.new_page()
    watch = Watch(pg)
    paths = ["index.html", "404.html"] + [f"{lang}/{p}" for lang in ("zh", "en")
                                          for p in LAYOUT_PAGES]
    failures: dict[str, list[str]] = {}
    for path in paths:
        pg.goto(base_url + path)
        pg.wait_for_load_state("load")
        if path.endswith("graph.html"):
            pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
        if path.endswith("/index.html") and not path.startswith("digest"):
            pg.wait_for_timeout(100)
        problems = pg.evaluate(LAYOUT_JS)
        if problems:
            failures[path] = problems
            pg.screenshot(path=str(tmp_path / f"{width}-{path.replace('/', '-')}.png"),
                          full_page=True)
    ctx.close()
    watch.check()
    assert not failures, "\n".join(
        f"{p} ({width}px): " + "\n    ".join(v[:8]) for p, v in failures.items()
    ) + f"\nscreenshots in {tmp_path}"


# A dense group: a hub PR with 24 related PRs of six relation types, each also following up the
# one before, and a second, small group (two PRs and a PR not in the knowledge base).
HUB_TYPES = ["follow-up-of", "depends-on", "fixes-regression-from", "supersedes",
             "alternative-to", "reverts"]


@pytest.fixture(scope="module")
def dense_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("dense")
    profile = load_profile(None)
    with Store(tmp / "kb.sqlite") as store:
        ingest(store, plain_record(91000, "Hub", "2025-01-01T00:00:00Z", "ALWAYS",
                                   "HubMetadataBuilder"), profile)
        for i in range(1, 25):
            rels = [{"type": HUB_TYPES[i % len(HUB_TYPES)], "target": 91000}]
            if i > 1:
                rels.append({"type": "follow-up-of", "target": 91000 + i - 1})
            ingest(store, plain_record(91000 + i, f"Spoke {i} <b>x</b>",
                                       f"2025-02-{i:02d}T00:00:00Z", "ALWAYS",
                                       f"Spoke{i}MetadataBuilder", rels), profile)
        ingest(store, plain_record(92000, "Lone A", "2025-03-01T00:00:00Z", "ALWAYS",
                                   "LoneMetadataBuilder"), profile)
        ingest(store, plain_record(92001, "Lone B", "2025-03-02T00:00:00Z", "ALWAYS",
                                   "LoneMetadataBuilder",
                                   [{"type": "depends-on", "target": 92000},
                                    {"type": "mentions", "target": 99999}]), profile)
        build_relations(store, profile)
        build_site(store, tmp / "site", profile, search=False)
    with serve(tmp / "site") as url:
        yield url


# the graph's data as the page loads it: graph.json names the parts, merged here
GRAPH_DATA_JS = r"""
async () => {
  const index = await (await fetch("graph.json")).json();
  const data = { nodes: [], edges: [] };
  for (const p of index.parts) {
    const part = await (await fetch(p)).json();
    data.nodes.push(...part.nodes);
    data.edges.push(...part.edges);
  }
  return data;
}
"""

GRAPH_JS = r"""
() => {
  const cy = document.getElementById("graph").cy;
  const shown = cy.nodes().filter((n) => n.visible());
  const boxes = shown.map((n) => [n.data("label"),
    n.boundingBox({ includeLabels: true, includeOverlays: false })]);
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i][1], b = boxes[j][1];
    if (Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1) > 0.5
        && Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1) > 0.5)
      overlaps.push(boxes[i][0] + " / " + boxes[j][0]);
  }
  const norm = (c) => c && c.replace(/\s+/g, "");
  const color = (sel) => {
    const el = document.querySelector(sel);
    return el && norm(getComputedStyle(el).backgroundColor);
  };
  return {
    shown: shown.map((n) => n.id()).sort(), overlaps,
    edges: cy.edges().map((e) => [e.data("type"), norm(e.style("line-color")),
      color(`#g-legend li[data-rel="${e.data("type")}"] .swatch`)]),
    nodes: cy.nodes().map((n) => [n.data("kind"), norm(n.style("background-color")),
      color(`#g-legend li[data-kind="${n.data("kind")}"] .swatch`)]),
    legend: Array.from(document.querySelectorAll("#g-legend li"),
      (li) => [li.dataset.rel || li.dataset.kind, li.textContent.trim()]),
    html: document.querySelectorAll("#g-legend b, #graph b").length,
  };
}
"""

NODE_NAMES = {"pr-merged": "merged PR", "ref-pr": "PR not in the knowledge base"}


def largest_group(nodes: list[dict[str, Any]], edges: list[list[Any]]) -> set[str]:
    parent = {n["id"]: n["id"] for n in nodes}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s, t, *_ in edges:
        parent[find(s)] = find(t)
    groups: dict[str, set[str]] = {}
    for n in nodes:
        groups.setdefault(find(n["id"]), set()).add(n["id"])
    return max(groups.values(), key=len)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_graph_legend_layout_and_largest_group(
    browser: Any, dense_url: str, tmp_path: Path, lang: str
) -> None:
    """The legend names every relation type and node kind drawn, in the glossary's and the
    catalog's words, in the colours drawn; only the largest group shows until the switch;
    no two node labels overlap, in the dense group or with every group shown."""
    ctx = browser.new_context(viewport={"width": 1366, "height": 900})
    pg = ctx.new_page()
    watch = Watch(pg)
    pg.goto(dense_url + f"{lang}/graph.html")
    pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    data = pg.evaluate(GRAPH_DATA_JS)
    got = pg.evaluate(GRAPH_JS)
    pg.screenshot(path=str(tmp_path / f"graph-{lang}.png"), full_page=True)
    legend = dict(got["legend"])
    types = {e[2] for e in data["edges"]}
    assert len(types) == 7
    for t in types:  # the glossary's name of each relation type, in the page's language
        assert legend.get(t) == glossary_label("relations", t, lang), (t, legend)
    for kind, msgid in NODE_NAMES.items():
        assert legend.get(kind) == gettext(lang, msgid), (kind, legend)
    assert set(legend) == types | set(NODE_NAMES)
    if lang == "zh":
        assert legend["ref-pr"] != NODE_NAMES["ref-pr"]  # translated, not the msgid
    for kind, drawn, swatch in got["edges"] + got["nodes"]:
        assert swatch is not None and drawn == swatch, (kind, drawn, swatch)
    assert len({c for _, c, _ in got["edges"]}) == len(types)  # one colour per type
    assert got["html"] == 0  # a title's <b> is text on the canvas, never an element
    biggest = largest_group(data["nodes"], data["edges"])
    assert len(biggest) == 25 < len(data["nodes"])
    assert set(got["shown"]) == biggest
    assert not got["overlaps"], got["overlaps"][:10]
    pg.check("#g-all")
    got = pg.evaluate(GRAPH_JS)
    assert len(got["shown"]) == len(data["nodes"])
    assert not got["overlaps"], got["overlaps"][:10]
    pg.uncheck("#g-all")
    assert set(pg.evaluate(GRAPH_JS)["shown"]) == biggest
    ctx.close()
    watch.check()


@pytest.fixture(scope="module")
def sharded_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site with its search index in one shard per PR (the newest PR's in the primary
    bundle with the builder and digest pages), served on its own port."""
    from prkb.site import search as site_search

    tmp = tmp_path_factory.mktemp("sharded")
    with make_kb(tmp / "kb.sqlite") as store, pytest.MonkeyPatch.context() as mp:
        mp.setattr(site_search, "PRS_PER_SHARD", 1)
        build_site(store, tmp / "site", load_profile(None), search=True)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "prkb.cli", "site", "serve", "-d", str(tmp / "site"),
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        with urllib.request.urlopen(url + "pagefind/shards.json", timeout=5) as r:
            assert len(json.loads(r.read())) >= 4  # merged shards besides the primary one
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize(("lang", "word", "expect"), [
    ("en", "capture", "90010"),
    ("zh", "推测解码", "90001"),
    ("zh", "图捕获", "9001"),
])
def test_search_finds_words_across_shards(
    page: tuple[Any, Watch], sharded_url: str, lang: str, word: str, expect: str
) -> None:
    """90010 and 90001 are in shards of their own, merged in the browser (mergeIndex)."""
    pg, _ = page
    pg.goto(sharded_url + f"{lang}/search.html")
    pg.fill("#q", word)
    pg.press("#q", "Enter")
    pg.wait_for_selector("#results li a", timeout=15000)
    hrefs = pg.eval_on_selector_all("#results li a", "els => els.map(e => e.href)")
    assert any(f"/{lang}/pr/{expect}" in h for h in hrefs), hrefs
