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
from pathlib import Path
from typing import Any

import pytest
from test_site_build import make_kb

from prkb.profile import load_profile
from prkb.site import links as site_links
from prkb.site import pages as site_pages
from prkb.site.build import build_site

pytestmark = pytest.mark.browser

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


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
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
    n_nodes = pg.evaluate("fetch('graph.json').then(r => r.json()).then(d => d.nodes.length)")
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
        for name in ("index", "matrix", "graph", "pr/45149", "builder/SynthMetadataBuilder"):
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
