"""The built site in real headless Chromium, served by ``prkb site serve`` on loopback.

One site, one server and one browser per module. Every test collects console errors, page
errors and failed requests (there must be none) and fails on any dialog (hostile PR text
must never run).
"""

from __future__ import annotations

import itertools
import json
import os
import re
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
from prkb.render.i18n import gettext, translations
from prkb.site import links as site_links
from prkb.site import plan as site_plan
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
        mp.setattr(site_plan, "HOME_ROWS", 3)
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
    pg.click("section.report a.prlink")
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

# Tables too wide for their box scroll inside it with their first column in view: scrolled to
# the far right, each row's first cell still starts at the box's left edge (position: sticky).
# Returns how many scrolling tables it checked and the problems.
STICKY_JS = r"""
() => {
  const problems = [];
  let checked = 0;
  for (const box of document.querySelectorAll("body *")) {
    const o = getComputedStyle(box).overflowX;
    if ((o !== "auto" && o !== "scroll") || box.scrollWidth <= box.clientWidth + 1) continue;
    const rows = box.tagName === "TABLE" ? box.rows : (box.querySelector("table") || {}).rows;
    if (!rows || !rows.length) continue;
    checked += 1;
    const left = box.getBoundingClientRect().left + box.clientLeft;
    box.scrollLeft = box.scrollWidth;
    for (const tr of rows) {
      const cell = tr.cells[0];
      // a first cell nearly as wide as the box (one long word) cannot stay beside the rest
      if (!cell || cell.getBoundingClientRect().width > 0.7 * box.clientWidth) continue;
      const x = cell.getBoundingClientRect().left;
      if (Math.abs(x - left) > 2) {
        problems.push(`first column of ${box.tagName.toLowerCase()}.${box.className} scrolls `
          + `away (${Math.round(x)}px, the box starts at ${Math.round(left)}px)`);
        break;
      }
    }
    box.scrollLeft = 0;
  }
  return { checked, problems };
}
"""


def _open_ready(pg: Any, url: str) -> None:
    """Open a page and wait until its script has drawn it (the graph, search results)."""
    pg.goto(url)
    pg.wait_for_load_state("load")
    if "graph.html" in url:
        pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    if "#q=" in url:
        pg.wait_for_selector("#results li a", timeout=15000)

LAYOUT_PAGES = ["index.html", "matrix.html", "graph.html", "graph.html?focus=47144",
                "audit.html", "search.html", "search.html#q=capture",
                "digest/index.html", "digest/2026-W28.html", "pr/47144.html", "pr/90001.html",
                "pr/90011.html", f"{TRITON_PAGE}.html", f"{SYNTH_PAGE}.html"]


def page_layout_problems(browser: Any, url: str, paths: list[str], width: int,
                         tmp_path: Path, scheme: str = "light") -> tuple[dict[str, list[str]], int]:
    """LAYOUT_JS and STICKY_JS on each page at one width: the problems by page (a screenshot
    of each page with one in ``tmp_path``) and how many scrolling tables were checked."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, device_scale_factor=1,
                              color_scheme=scheme)
    pg = ctx.new_page()
    watch = Watch(pg)
    failures: dict[str, list[str]] = {}
    scrolled = 0
    for path in paths:
        _open_ready(pg, url + path)
        if path.endswith("/index.html") and "/digest/" not in path:
            pg.wait_for_selector("#timeline[data-full='1']")
        problems = pg.evaluate(LAYOUT_JS)
        sticky = pg.evaluate(STICKY_JS)
        scrolled += sticky["checked"]
        problems += sticky["problems"]
        if problems:
            failures[path] = problems
            name = path.replace("/", "-").replace("?", "-").replace("#", "-")
            pg.screenshot(path=str(tmp_path / f"{width}-{name}.png"), full_page=True)
    ctx.close()
    watch.check()
    return failures, scrolled


@pytest.mark.parametrize("width", [390, 1280])
def test_layout_of_every_page_kind(browser: Any, base_url: str, tmp_path: Path,
                                   width: int) -> None:
    """Every page kind in both languages: no overlapping text, no table column narrower than
    its longest word, nothing wider than the screen outside a scrollable container (the page
    never scrolls sideways), and a table that scrolls keeps its first column in view."""
    paths = ["index.html", "404.html"] + [f"{lang}/{p}" for lang in ("zh", "en")
                                          for p in LAYOUT_PAGES]
    failures, scrolled = page_layout_problems(browser, base_url, paths, width, tmp_path)
    assert not failures, "\n".join(
        f"{p} ({width}px): " + "\n    ".join(v[:8]) for p, v in failures.items()
    ) + f"\nscreenshots in {tmp_path}"
    if width == 390:
        assert scrolled > 0  # the phone has tables to scroll, and they kept their first column


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
    _open_ready(pg, dense_url + f"{lang}/graph.html")
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
    # the graph library may apply the hidden groups' style on a later frame (under load, one
    # read came before it): read again until it shows the largest group, for up to 5 s
    deadline = time.monotonic() + 5
    shown = set(pg.evaluate(GRAPH_JS)["shown"])
    while shown != biggest and time.monotonic() < deadline:
        pg.wait_for_timeout(100)
        shown = set(pg.evaluate(GRAPH_JS)["shown"])
    assert shown == biggest
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


# --- dark mode -------------------------------------------------------------------------------

# Every visible text against the background it is drawn on (the first opaque background of it or
# an ancestor, lighter ones composed over it; SVG text by its fill): the WCAG contrast ratio of
# each, the ones under 3 listed. Also the body's own colours, as relative luminances.
CONTRAST_JS = r"""
() => {
  const parse = (c) => {  // a computed colour: [r, g, b, alpha]
    let m = (c || "").match(/^rgba?\(([^)]+)\)$/);
    if (m) {
      const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    m = (c || "").match(/^color\(srgb ([^)]+)\)$/);
    if (m) {
      const p = m[1].split(/[\s\/]+/).filter(Boolean).map(Number);
      return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1];
    }
    return null;
  };
  const over = (top, under) =>  // a colour with alpha over an opaque one
    [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = (c) => {
    const f = (v) => (v /= 255) <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const background = (el) => {  // the element's backgrounds up to the first opaque one
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; }
    }
    let c = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c);
    return c;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.classList && el.classList.length ? "." + Array.from(el.classList).join(".") : "");
  const bad = [];
  let checked = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.data.trim()) continue;
    const el = t.parentElement;
    if (!el || el.closest("script, style, noscript, [hidden], title")) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden" || st.display === "none") continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= +getComputedStyle(e).opacity;
    if (opacity < 0.3) continue;
    const inSvg = el instanceof SVGElement;
    const fg = parse(inSvg ? st.fill : st.color);
    if (!fg) continue;
    const bg = background(inSvg ? el.closest("svg").parentElement : el);
    const c = ratio(over(fg, bg), bg);
    checked += 1;
    if (c < 3) bad.push(`${c.toFixed(2)} "${t.data.trim().slice(0, 30)}" in ${name(el)} `
      + `(${inSvg ? st.fill : st.color} on rgb(${bg.slice(0, 3).map(Math.round).join(",")}))`);
  }
  const body = getComputedStyle(document.body);
  return { checked, bad, bodyBg: lum(background(document.body)), bodyFg: lum(parse(body.color)) };
}
"""

SCHEME_PAGES = ["index.html", "404.html", "en/index.html", "zh/index.html", "en/matrix.html",
                "zh/matrix.html", "zh/graph.html", "en/graph.html?focus=47144", "en/audit.html",
                "en/pr/47144.html", "zh/pr/90001.html", f"en/{TRITON_PAGE}.html",
                f"zh/{SYNTH_PAGE}.html", "en/digest/index.html", "zh/digest/2026-W28.html",
                "en/search.html#q=capture", "zh/search.html#q=图捕获"]


def _rgb(css: str) -> tuple[float, ...]:
    return tuple(float(v) for v in re.findall(r"[\d.]+", css)[:3])


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    def lum(c: tuple[float, ...]) -> float:
        f = [v / 255 for v in c]
        f = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in f]
        return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2]

    x, y = lum(a), lum(b)
    return (max(x, y) + 0.05) / (min(x, y) + 0.05)


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_colour_scheme_of_every_page_kind(browser: Any, base_url: str, tmp_path: Path,
                                          scheme: str) -> None:
    """The site follows the reader's colour scheme (prefers-color-scheme): dark pages with
    light text, or the light ones; on every page kind (the graph's canvas labels, the matrix,
    tags, badges, code, tables and search results included) every visible text has a contrast
    ratio of at least 3 against what it is drawn on: no light text left on a light box."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    pg = ctx.new_page()
    watch = Watch(pg)
    failures: dict[str, list[str]] = {}
    for path in SCHEME_PAGES:
        _open_ready(pg, base_url + path)
        got = pg.evaluate(CONTRAST_JS)
        assert got["checked"] >= 3, path
        if scheme == "dark":
            assert got["bodyBg"] < 0.05 and got["bodyFg"] > 0.6, (path, got)
        else:
            assert got["bodyBg"] > 0.9 and got["bodyFg"] < 0.1, (path, got)
        if got["bad"]:
            failures[path] = got["bad"]
            pg.screenshot(path=str(tmp_path / f"{scheme}-{len(failures)}.png"), full_page=True)
        if "graph.html" in path:  # the labels on the canvas: the page's colours
            fg, label_bg, box_bg = pg.evaluate(
                "() => { const g = document.getElementById('graph'); const n = g.cy.nodes()[0];"
                " return [n.style('color'), n.style('text-background-color'),"
                " getComputedStyle(g).backgroundColor]; }")
            assert _rgb(label_bg) == _rgb(box_bg), (label_bg, box_bg)
            assert _contrast(_rgb(fg), _rgb(box_bg)) >= 4.5, (fg, box_bg)
    ctx.close()
    watch.check()
    assert not failures, "\n".join(f"{p}: " + "\n    ".join(v[:8]) for p, v in failures.items())


# --- the timeline's filters ------------------------------------------------------------------

SHOWN_JS = ("() => Array.from(document.querySelectorAll('#timeline li.pr:not([hidden]) .num'),"
            " (e) => e.textContent).sort()")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_builder_and_text_filters_combine_and_survive_reload(
    page: tuple[Any, Watch], base_url: str, lang: str
) -> None:
    """The builder filter (the builders a PR changed) and the text filter (number, title,
    class names; as one types) combine with the others; the count follows; a reload keeps
    them (the query string). The rows come from timeline.json (HOME_ROWS is 3 here)."""
    pg, _ = page
    count = gettext(lang, "{shown} of {total} PRs")

    def shown(expect: list[str]) -> None:
        pg.wait_for_function(f"(want) => JSON.stringify(({SHOWN_JS})()) === want",
                             arg=json.dumps(sorted(expect), separators=(",", ":")), timeout=5000)
        assert pg.inner_text("#f-count") == count.format(shown=len(expect), total=7)

    pg.goto(base_url + f"{lang}/index.html")
    pg.wait_for_selector("#timeline[data-full='1']")
    synth = SYNTH_PAGE.split("/")[1]
    pg.select_option("#f-builder", synth)
    shown(["#90010", "#90011"])
    pg.locator("#f-text").press_sequentially("9001", delay=20)  # as one types: no Enter
    shown(["#90010", "#90011"])
    pg.locator("#f-text").press_sequentially("1", delay=20)
    shown(["#90011"])
    pg.select_option("#f-state", "closed")
    shown([])
    pg.select_option("#f-state", "")
    shown(["#90011"])
    assert "builders=" + synth in pg.url and "q=90011" in pg.url
    pg.reload()
    pg.wait_for_selector("#timeline[data-full='1']")
    assert pg.input_value("#f-builder") == synth and pg.input_value("#f-text") == "90011"
    shown(["#90011"])
    pg.select_option("#f-builder", "")
    # a class name that only a declaration change names (47144's title says "TritonMLA")
    pg.fill("#f-text", "tritonmlametadatabuilder")
    shown(["#47144"])
    pg.fill("#f-text", "47766")  # a number
    shown(["#47766"])
    pg.fill("#f-text", "<script>")  # hostile text is text to match, nothing more
    shown(["#90001"])
    pg.fill("#f-text", "rocm")
    pg.select_option("#f-dir", "raised")
    shown(["#45149"])
    pg.fill("#f-text", "")
    pg.select_option("#f-dir", "")
    shown(["#45149", "#47144", "#47310", "#47766", "#90001", "#90010", "#90011"])
    assert "?" not in pg.url
    # a link written when the filters were kept after "#" still works, and moves them
    pg.goto(base_url + f"{lang}/matrix.html")
    pg.goto(base_url + f"{lang}/index.html#state=closed")
    pg.wait_for_selector("#timeline[data-full='1']")
    shown(["#47310"])
    assert pg.url.endswith(f"/{lang}/index.html?state=closed")



def test_home_text_filter_matches_every_word_from_a_word_start(
    page: tuple[Any, Watch], base_url: str
) -> None:
    """The text filter: every word (AND, any case) matches from the start of a word of the
    number, the title or a class name (after punctuation, at a camel-case hump, any CJK
    character), never inside one: "14" is no part of #47144 or #45149. The input says so."""
    pg, _ = page

    def shown(term: str, expect: list[str]) -> None:
        pg.fill("#f-text", term)
        try:  # the filter applies once a pause in typing is long enough
            pg.wait_for_function(f"(want) => JSON.stringify(({SHOWN_JS})()) === want",
                                 arg=json.dumps(sorted(expect), separators=(",", ":")),
                                 timeout=5000)
        except sync_api.TimeoutError:
            assert (term, pg.evaluate(SHOWN_JS)) == (term, sorted(expect))

    pg.goto(base_url + "en/index.html")
    pg.wait_for_selector("#timeline[data-full='1']")
    hint = gettext("en", "Each word begins a number, title word or class name part")
    assert pg.get_attribute("#f-text", "placeholder") == hint
    assert pg.get_attribute("#f-text", "title") == hint
    shown("14", [])  # inside #47144 and #45149: no match (it matched both)
    shown("714", [])
    shown("4714", ["#47144"])  # a number from its start, with or without "#"
    shown("#4714", ["#47144"])
    shown("#47", ["#47144", "#47310", "#47766"])
    shown("de", ["#47144"])  # UNIFORM_SINGLE_TOKEN_DECODE; not "mode" in #45149's title
    shown("DE", ["#47144"])
    shown("ort", [])  # inside "Suppoort" and "query_len_support" (it matched #47144, #47310)
    shown("cgsupp", ["#47144"])  # "AttentionCGSuppoort": humps Attention|CG|Suppoort
    shown("mla sparse", ["#45149", "#47766"])  # every word: rocm_aiter_mla_sparse, sparse-MLA
    shown("  Sparse   MLA  ", ["#45149", "#47766"])  # any order, spaces and case
    shown("mla capture", ["#47310"])
    shown("metadata", ["#45149", "#47144", "#47766", "#90010", "#90011"])  # classes, a title
    shown("tadata", [])
    shown("bugfix rocm", ["#47144", "#47766"])  # "[Bugfix][ROCm]": after "["
    shown("意", ["#90001"])  # each Chinese character starts a word
    shown("", ["#45149", "#47144", "#47310", "#47766", "#90001", "#90010", "#90011"])


# --- live search -----------------------------------------------------------------------------

N_MANY = 45
LONG_EXPR = ("UNIFORM_BATCH if self.speculative_config is not None and "
             "self.reorder_batch_threshold > 1 else UNIFORM_SINGLE_TOKEN_DECODE")
LONG_TITLE = "Refactor_" * 20 + " spindle"
EXPR_PATH = "vllm/v1/attention/backends/expr_synth.py"


@pytest.fixture(scope="module")
def many_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A site with search of N_MANY PRs whose titles say "spindle" (on three builders), and one
    with a long unbroken title and a long conditional value (an expression)."""
    tmp = tmp_path_factory.mktemp("many")
    profile = load_profile(None)
    with Store(tmp / "kb.sqlite") as store:
        for i in range(N_MANY):
            ingest(store, plain_record(93000 + i, f"Spindle {i} tuning",
                                       f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z",
                                       "ALWAYS", f"Spindle{i % 3}MetadataBuilder"), profile)
        ingest(store, plain_record(94000, LONG_TITLE, "2025-03-01T00:00:00Z", LONG_EXPR,
                                   "ExprMetadataBuilder", [{"type": "follow-up-of",
                                                            "target": 93000}],
                                   path=EXPR_PATH), profile)
        build_relations(store, profile)
        build_site(store, tmp / "site", profile, search=True)
    with serve(tmp / "site") as url:
        yield url


RESULTS_JS = r"""
() => Array.from(document.querySelectorAll("#results > li"), (li) => {
  const a = li.querySelector("a"), p = li.querySelector("p.excerpt");
  return { href: a.href, display: getComputedStyle(p).display, below: p.getBoundingClientRect().top
    >= a.getBoundingClientRect().bottom - 1, text: p.textContent };
})
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_live_search_shows_every_result(page: tuple[Any, Watch], many_url: str,
                                        lang: str) -> None:
    """Search as one types (after a pause, no Enter); 30 results, then "Show more" until every
    one is shown; each result's excerpt a block of its own under its title."""
    pg, _ = page
    pg.goto(many_url + f"{lang}/search.html")
    box = pg.locator("#q")
    box.press_sequentially("spi", delay=20)
    pg.wait_for_function("() => document.getElementById('results').dataset.query === 'spi'",
                         timeout=15000)
    box.press_sequentially("ndle", delay=20)  # the newer query replaces the results
    pg.wait_for_function("() => document.getElementById('results').dataset.query === 'spindle'",
                         timeout=15000)
    status = pg.inner_text("#search-status")
    total = int(re.search(r"\d+", status).group())  # type: ignore[union-attr]
    assert total > N_MANY  # the PRs and the digest weeks that list them
    assert status == translations(lang).ngettext("%(num)s result", "%(num)s results",
                                                 total) % {"num": total}
    assert pg.locator("#results > li").count() == 30
    more = pg.locator("#search-more")
    assert more.inner_text() == gettext(lang, "Show more")
    shown = 30
    while more.is_visible():
        more.click()
        pg.wait_for_function(f"() => document.querySelectorAll('#results > li').length > {shown}")
        shown = pg.locator("#results > li").count()
    results = pg.evaluate(RESULTS_JS)
    assert len(results) == total == len({r["href"] for r in results})
    assert sum(f"/{lang}/pr/93" in r["href"] for r in results) == N_MANY
    assert all(r["display"] == "block" and r["below"] and r["text"].strip() for r in results)
    pg.fill("#q", "")
    pg.wait_for_function("() => !document.querySelector('#results > li')")
    assert not more.is_visible()


# Words of one field run into the next in the search index (and so in its excerpts) when two
# elements meet without whitespace and the index does not see the boundary (a <dt> and its
# <dd>, two table cells). For each page the queries find: every word of what the index holds of
# it is a word of the page's text read with a space at every element that is not inline.
GLUE_JS = r"""
async ({ bundle, queries }) => {
  const pf = await import(bundle);
  const INLINE = new Set(["A", "ABBR", "B", "BDI", "BDO", "CITE", "CODE", "DATA", "DFN", "EM",
    "I", "KBD", "MARK", "Q", "S", "SAMP", "SMALL", "SPAN", "STRONG", "SUB", "SUP", "TIME", "U",
    "VAR", "WBR"]);
  const strip = (w) => w.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, "");
  const textOf = (node, out) => {
    for (const c of node.childNodes) {
      if (c.nodeType === 3) out.push(c.data);
      else if (c.nodeType === 1) {
        const block = !INLINE.has(c.tagName);
        if (block) out.push(" ");
        textOf(c, out);
        if (block) out.push(" ");
      }
    }
    return out;
  };
  const seen = new Set();
  const glued = [];
  let pages = 0;
  for (const q of queries) {
    const res = await pf.search(q);
    for (const r of res.results) {
      const d = await r.data();
      if (seen.has(d.url)) continue;
      seen.add(d.url);
      pages += 1;
      const doc = new DOMParser().parseFromString(await (await fetch(d.url)).text(), "text/html");
      const body = doc.querySelector("[data-pagefind-body]") || doc.body;
      body.querySelectorAll("[data-pagefind-ignore], script, style").forEach((e) => e.remove());
      const tokens = new Set(textOf(body, []).join("").split(/\s+/).map(strip).filter(Boolean));
      for (const w of d.content.split(/\s+/).map(strip).filter(Boolean))
        if (!tokens.has(w)) glued.push(d.url + ": " + w);
    }
  }
  return { pages, glued };
}
"""


@pytest.mark.parametrize(("lang", "queries"), [
    ("en", ["the", "PR", "capture", "builder"]),
    ("zh", ["的", "PR", "构建器", "图捕获"]),
])
def test_search_index_keeps_the_words_of_fields_apart(
    page: tuple[Any, Watch], base_url: str, lang: str, queries: list[str]
) -> None:
    pg, _ = page
    pg.goto(base_url + f"{lang}/search.html")
    pg.fill("#q", queries[0])
    pg.press("#q", "Enter")
    pg.wait_for_selector("#results li a", timeout=15000)
    got = pg.evaluate(GLUE_JS, {"bundle": base_url + "pagefind/pagefind.js", "queries": queries})
    assert got["pages"] >= 12  # PR, builder and digest pages
    assert got["glued"] == []


# --- the graph: time axis, labels, focus -----------------------------------------------------

AXIS_JS = r"""
() => {
  const box = document.getElementById("graph"), cy = box.cy;
  const rect = box.getBoundingClientRect();
  const nodes = cy.nodes().filter((n) => n.visible()).map((n) => ({ id: n.id(),
    label: n.data("label"), date: n.data("date"), x: n.position("x"),
    sx: rect.left + box.clientLeft + n.renderedPosition("x"),
    sy: rect.top + box.clientTop + n.renderedPosition("y"),
    cls: ["focused", "near", "dimmed"].filter((c) => n.hasClass(c)) }));
  const axis = document.getElementById("g-axis"), ar = axis.getBoundingClientRect();
  const ticks = Array.from(axis.querySelectorAll(".tick"), (t) => {
    const r = t.getBoundingClientRect();
    return { date: t.querySelector("time").dateTime, text: t.textContent.trim(),
      mid: (r.left + r.right) / 2, inside: r.width > 0 && r.left >= ar.left - 0.5
        && r.right <= ar.right + 0.5 && r.top >= ar.top - 0.5 && r.bottom <= ar.bottom + 0.5 };
  });
  return { nodes, ticks, zoom: cy.zoom(), box: [rect.left, rect.top, rect.right, rect.bottom],
    focus: box.dataset.focus || "", panel: !document.getElementById("g-focus").hidden,
    elements: document.querySelectorAll("#g-focus b *, #g-focus-title *").length };
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_graph_time_axis_labels_and_focus(browser: Any, dense_url: str, lang: str) -> None:
    """PRs left to right by date with dated ticks under them, every node labelled with its
    number (large enough to be drawn); ?focus= and a click highlight a PR and its neighbours
    and dim the rest, a second click opens it, a click on the background shows all again; a
    PR's page links to the graph focused on it."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    watch = Watch(pg)
    _open_ready(pg, dense_url + f"{lang}/graph.html")
    data = pg.evaluate(GRAPH_DATA_JS)
    got = pg.evaluate(AXIS_JS)
    assert got["zoom"] * 11 >= 6  # the labels' size on screen: cytoscape draws them
    assert len(got["nodes"]) == 25
    for n in got["nodes"]:
        assert n["label"] == "#" + n["id"].split(":", 1)[1]
    dated = sorted((n for n in got["nodes"] if n["date"]), key=lambda n: n["date"])
    assert len(dated) == 25
    for a, b in itertools.pairwise(dated):
        assert a["x"] < b["x"] if a["date"] < b["date"] else a["x"] == b["x"], (a, b)
    ticks = got["ticks"]
    assert len(ticks) >= 3
    assert all(t["inside"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", t["text"]) for t in ticks)
    assert [t["date"] for t in ticks] == sorted({t["date"] for t in ticks})
    for t in ticks:  # each date under the PRs of that day
        xs = [n["sx"] for n in got["nodes"] if n["date"] == t["date"]]
        assert xs and all(abs(x - t["mid"]) < 2 for x in xs), (t, xs)

    def neighbours(key: str) -> set[str]:
        return {e[1 - i] for e in data["edges"] for i in (0, 1) if e[i] == key}

    def check_focus(key: str) -> dict[str, Any]:
        pg.wait_for_function(f"() => document.getElementById('graph').dataset.focus === '{key}'")
        got = pg.evaluate(AXIS_JS)
        near = neighbours(key)
        for n in got["nodes"]:
            want = "focused" if n["id"] == key else "near" if n["id"] in near else "dimmed"
            assert n["cls"] == [want], (n, key)
        assert got["panel"] and got["elements"] == 0  # the title is text, <b> and all
        assert pg.inner_text("#g-focus-label") == "#" + key.split(":")[1]
        assert "focus=" + key.split(":")[1] in pg.url
        return got

    pg.goto(dense_url + f"{lang}/graph.html?focus=91005")
    pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    got = check_focus("pr:91005")
    assert pg.inner_text("#g-focus-title") == "Spoke 5 <b>x</b>"
    assert pg.get_attribute("#g-focus-open", "href") == "pr/91005.html"
    assert pg.inner_text("#g-focus-open") == gettext(lang, "Open its page")
    other = next(n for n in got["nodes"] if n["id"] == "pr:91006")
    pg.mouse.click(other["sx"], other["sy"])  # another PR: highlighted, not opened
    got = check_focus("pr:91006")
    other = next(n for n in got["nodes"] if n["id"] == "pr:91006")
    pg.mouse.click(other["sx"], other["sy"])  # again: its page
    pg.wait_for_url(f"**/{lang}/pr/91006.html")
    pg.click(".facts a[href='../graph.html?focus=91006']")
    pg.wait_for_url(f"**/{lang}/graph.html?focus=91006")
    pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    got = check_focus("pr:91006")
    pg.mouse.click(got["box"][0] + 6, got["box"][1] + 6)  # the background: all again
    pg.wait_for_function("() => document.getElementById('graph').dataset.focus === ''")
    got = pg.evaluate(AXIS_JS)
    assert not got["panel"] and all(n["cls"] == [] for n in got["nodes"])
    assert "focus=" not in pg.url
    # a PR of a smaller group: every group is shown, the PR highlighted
    pg.goto(dense_url + f"{lang}/graph.html?focus=92001")
    pg.wait_for_selector("#graph[data-ready='1']", timeout=15000)
    got = check_focus("pr:92001")
    assert pg.is_checked("#g-all") and len(got["nodes"]) == len(data["nodes"])
    ctx.close()
    watch.check()


# --- long titles and expressions -------------------------------------------------------------

@pytest.mark.parametrize("width", [390, 1280])
def test_layout_of_long_titles_and_expressions(browser: Any, many_url: str, tmp_path: Path,
                                               width: int) -> None:
    """A title of one long word and a conditional value (a long expression) wrap in their
    boxes; search results too; nothing makes a page scroll sideways."""
    slug = builder_slug(EXPR_PATH, "ExprMetadataBuilder")
    paths = [f"{lang}/{p}" for lang in ("en", "zh")
             for p in ("index.html", "pr/94000.html", "matrix.html", f"builder/{slug}.html",
                       "graph.html?focus=94000", "search.html#q=spindle")]
    failures, _ = page_layout_problems(browser, many_url, paths, width, tmp_path)
    assert not failures, "\n".join(
        f"{p} ({width}px): " + "\n    ".join(v[:8]) for p, v in failures.items()
    ) + f"\nscreenshots in {tmp_path}"


@pytest.mark.parametrize("width", [390, 1280])
def test_the_digest_email_fits_the_screen_with_its_summary_first(
        browser: Any, tmp_path: Path, width: int) -> None:
    """The email (both languages, CSS inlined as it is sent) in a phone's and a laptop's
    width: nothing scrolls sideways, no line of text runs past the screen, and each language
    starts with its summary (the counts) right after the title and the period."""
    from digestkb import WEEK, digest_kb

    from prkb.publish.digest import gather, render, week_period

    with Store(digest_kb(tmp_path)) as store:
        html = render(gather(store, week_period(WEEK), load_profile()), "both", "html")
    page_file = tmp_path / "digest.html"
    page_file.write_text(html, encoding="utf-8")
    ctx = browser.new_context(viewport={"width": width, "height": 844}, device_scale_factor=1,
                              java_script_enabled=True)
    try:
        pg = ctx.new_page()
        pg.goto(page_file.as_uri())
        got = pg.evaluate("""() => {
          const wide = [];
          for (const el of document.body.querySelectorAll("*")) {
            const r = el.getBoundingClientRect();
            if (r.width && r.right > window.innerWidth + 1)
              wide.push(el.tagName + " " + Math.round(r.right));
          }
          const h2 = [...document.querySelectorAll("h2")].map((h) => h.textContent.trim());
          return {scroll: document.scrollingElement.scrollWidth, wide, h2};
        }""")
        pg.screenshot(path=str(tmp_path / f"digest-{width}.png"), full_page=True)
    finally:
        ctx.close()
    assert got["scroll"] <= width, f"the email scrolls sideways at {width}px: {got}"
    assert got["wide"] == [], got["wide"][:5]
    # the first heading of each language's part is its summary
    assert got["h2"][0] == gettext("zh", "Summary") and "Summary" in got["h2"]
