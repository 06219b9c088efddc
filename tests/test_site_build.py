"""The static site build: pages, links, safety, incremental rebuilds, atomic swap, feed, CLI."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from sitekb import any_tag_links, graph_data, make_kb, plain_record

from prkb.errors import InputError, PrkbError
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import links as site_links
from prkb.site.build import MANIFEST, build_site, parse_langs
from prkb.site.gather import builder_slug
from prkb.site.safe import site_safe
from prkb.store import Store

# builder pages are named by file and class (site.gather.builder_slug)
SYNTH = builder_slug("vllm/v1/attention/backends/rocm_synth.py", "SynthMetadataBuilder")
TRITON = builder_slug("vllm/v1/attention/backends/mla/triton_mla.py", "TritonMLAMetadataBuilder")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    tmp = tmp_path_factory.mktemp("site")
    with make_kb(tmp / "kb.sqlite") as store:
        stats = build_site(store, tmp / "site", load_profile(None), search=False)
    return tmp / "site", stats


def html_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "pagefind" not in p.parts)


def test_every_page_of_both_languages_exists(built: tuple[Path, Any]) -> None:
    site, stats = built
    for lang in ("zh", "en"):
        for name in ("index", "matrix", "graph", "audit", "search"):
            assert (site / lang / f"{name}.html").is_file(), f"{lang}/{name}.html"
        for n in (47144, 45149, 90001, 90010, 90011):
            assert (site / lang / "pr" / f"{n}.html").is_file()
        assert (site / lang / "builder" / f"{SYNTH}.html").is_file()
        assert (site / lang / "builder" / f"{TRITON}.html").is_file()
    for name in ("index.html", "404.html", "feed.xml", "sitemap.xml", MANIFEST):
        assert (site / name).is_file()
    assert stats.rendered == stats.pages and stats.reused == 0
    assert '<html lang="zh-CN">' in (site / "zh" / "pr" / "47144.html").read_text()
    assert '<html lang="en">' in (site / "en" / "pr" / "47144.html").read_text()


def test_language_switch_points_to_the_same_page(built: tuple[Path, Any]) -> None:
    site, _ = built
    for page in html_pages(site / "en"):
        rel = page.relative_to(site / "en").as_posix()
        text = page.read_text()
        m = re.search(r'id="lang-zh"[^>]*href="([^"]+)"', text)
        assert m, f"no switch on en/{rel}"
        target = (page.parent / m.group(1)).resolve()
        assert target == (site / "zh" / rel).resolve()


def test_every_internal_link_resolves(built: tuple[Path, Any]) -> None:
    site, _ = built
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    checked = 0
    for page in html_pages(site):
        rel = page.relative_to(site).as_posix()
        for target in site_links.internal_links(rel, page.read_text()):
            assert target in files, f"{rel} -> {target}"
            checked += 1
    assert checked > 100


def test_the_link_scan_sees_every_link_of_every_page(built: tuple[Path, Any]) -> None:
    """The scan reads lower-case markup of linking tags only: on a built site (hostile PR
    text included) it finds what a scan of any tag in any case finds."""
    site, _ = built
    pages = 0
    for page in html_pages(site):
        rel = page.relative_to(site).as_posix()
        body = page.read_bytes()
        assert site_links.internal_links(rel, body) == any_tag_links(rel, body), rel
        pages += 1
    assert pages > 30


def test_pages_are_safe_against_hostile_pr_text(built: tuple[Path, Any]) -> None:
    site, _ = built
    for page in html_pages(site):
        text = page.read_text()
        assert 'http-equiv="Content-Security-Policy"' in text, page
        csp = html.unescape(re.search(r'Content-Security-Policy" content="([^"]+)"', text)[1])
        assert "script-src 'self' 'wasm-unsafe-eval';" in csp and "unsafe-inline" not in csp
        # every script is an external file; no inline event handler; no javascript: URL
        for tag in re.findall(r"<script\b[^>]*>", text, re.IGNORECASE):
            assert re.search(r'\ssrc="', tag), f"inline script in {page}: {tag}"
        for tag in re.findall(r"<[A-Za-z][^<>]*>", text):
            assert not re.search(r"\son[a-z]+\s*=", tag, re.IGNORECASE), f"{page}: {tag}"
            assert not re.search(r"(href|src)\s*=\s*[\"']?\s*javascript:", tag, re.I), tag
            assert not tag.lower().startswith(("<iframe", "<object", "<embed")), tag
    pr = (site / "en" / "pr" / "90001.html").read_text()
    assert "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;" in pr or "&lt;script&gt;" in pr
    assert "https://github.com/vllm-project/vllm/pull/90001" in pr  # built, not the stored URL
    assert "example.com/x.png" not in re.sub(r"\[[^\]]*\]", "", pr) or "<img" not in pr
    # the body's relative link lost its href: it cannot point into the site
    assert 'href="../../index.html"' not in pr.split('class="report"', 1)[1]


def test_hostile_class_and_file_names_make_safe_paths(built: tuple[Path, Any]) -> None:
    site, _ = built
    names = [p.name for p in (site / "en" / "builder").iterdir()]
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.html", n) for n in names), names
    evil = [n for n in names if n.startswith("Evil")]
    assert evil and "<" not in evil[0]


def test_matrix_links_each_segment_to_the_pr_that_set_it(built: tuple[Path, Any]) -> None:
    site, _ = built
    text = (site / "en" / "matrix.html").read_text()
    row = text.split(f"{SYNTH}.html", 1)[1].split("</tr>", 1)[0]
    assert 'href="pr/90010.html"' in row.replace("../en/", "") or "pr/90010.html" in row
    assert "pr/90011.html" in row
    assert "lvl-r2" in row and "lvl-r3" in row  # UNIFORM_BATCH then ALWAYS
    # the dynamic reading of the hostile builder is marked
    assert 'class="dynmark"' in text


def test_builder_page_chart_and_prs(built: tuple[Path, Any]) -> None:
    site, _ = built
    text = (site / "zh" / "builder" / f"{SYNTH}.html").read_text()
    assert text.count("<circle") == 2
    assert "pr/90010.html" in text and "pr/90011.html" in text


def test_audit_lists_findings_with_the_pr_that_introduced_them(built: tuple[Path, Any]) -> None:
    site, _ = built
    text = (site / "en" / "audit.html").read_text()
    assert "cg-uniform-without-spec-decode" in text
    assert "pr/90001.html" in text
    assert "&lt;b&gt;bad&lt;/b&gt; finding" in text
    assert "&lt;b&gt;坏&lt;/b&gt;" in (site / "zh" / "audit.html").read_text()


def test_related_prs_link_inside_the_site(built: tuple[Path, Any]) -> None:
    site, _ = built
    text = (site / "en" / "pr" / "90011.html").read_text()
    # the report's related PRs: each a link to its page, in the same folder
    related = text.split("<h2>Related PRs</h2>", 1)[1].split("</div>", 1)[0]
    assert 'class="prlink" href="90010.html">#90010</a>' in related
    back = (site / "en" / "pr" / "90010.html").read_text()
    assert 'href="90011.html"' in back.split("<h2>Related PRs</h2>", 1)[1].split("</div>", 1)[0]
    graph = graph_data(site, "en")
    ids = [n["id"] for n in graph["nodes"]]
    assert {"pr:90010", "pr:90011"} <= set(ids) and len(ids) == len(set(ids))
    assert any(e[:2] == ["pr:90011", "pr:90010"] for e in graph["edges"])
    # every edge's ends are nodes of some part; both languages name the same parts
    assert all(e[0] in ids and e[1] in ids for e in graph["edges"])
    assert graph == graph_data(site, "zh")


def test_timeline_parts_hold_every_pr_once_newest_first(built: tuple[Path, Any]) -> None:
    site, _ = built
    home = (site / "en" / "index.html").read_text()
    total = int(re.search(r'data-total="(\d+)"', home).group(1))  # type: ignore[union-attr]
    index = json.loads((site / "en" / "timeline.json").read_text())
    assert index["lang"] == "en" and index["labels"]["tags"]
    rows = []
    for part in index["parts"]:
        path = (site / "en" / part).resolve()
        assert path.is_relative_to(site.resolve() / "timeline")
        rows.extend(json.loads(path.read_text()))
    assert len(rows) == total == len({r["s"] for r in rows})
    assert [r["d"] for r in rows] == sorted((r["d"] for r in rows), reverse=True)
    # the parts are shared: the Chinese index names the same files
    assert json.loads((site / "zh" / "timeline.json").read_text())["parts"] == index["parts"]


def test_feed_and_sitemap(tmp_path: Path) -> None:
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, tmp_path / "site", load_profile(None), search=False,
                   base_url="https://example.org/prkb")
        n_prs = len(store.all_prs())
    ns = {"a": "http://www.w3.org/2005/Atom"}
    feed = ET.parse(tmp_path / "site" / "feed.xml").getroot()
    entries = feed.findall("a:entry", ns)
    assert len(entries) == n_prs == 7
    first = entries[0]
    assert first.find("a:link", ns).get("href") == "https://example.org/prkb/en/pr/90001.html"
    assert "<script>" in first.find("a:title", ns).text  # plain text in XML, escaped on disk
    assert "<script>" not in (tmp_path / "site" / "feed.xml").read_text()
    zh = ET.parse(tmp_path / "site" / "zh" / "feed.xml").getroot()
    assert zh.find("a:entry/a:link", ns).get("href").startswith("https://example.org/prkb/zh/")
    sm = ET.parse(tmp_path / "site" / "sitemap.xml").getroot()
    locs = [e.text for e in sm.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert "https://example.org/prkb/zh/pr/47144.html" in locs
    assert not any(loc.endswith("404.html") for loc in locs)
    page404 = (tmp_path / "site" / "404.html").read_text()
    assert 'href="https://example.org/prkb/en/index.html"' in page404


def test_a_url_without_base_url_is_what_relpath_makes() -> None:
    """``site_url`` without ``--base-url``: a page path relative to the file that links it,
    as ``posixpath.relpath`` makes it (from the root, a plain path is returned as it is)."""
    import posixpath

    from prkb.site.feed import site_url

    paths = ["en/pr/1.html", "index.html", "a/../b.html", "./x.html", "x//y.html", "..",
             "../x.html", "/abs.html", "x/", "a b/ü.html", ".", "zh/digest/2025-W01.html"]
    for path in paths:
        for rel in ("", "feed.xml", "en/feed.xml", "zh/digest/index.html"):
            want = posixpath.relpath(path, posixpath.dirname(rel) or ".")
            assert site_url(None, path, rel) == want, (path, rel)
    assert site_url("https://example.org/prkb/", "/en/pr/1.html") \
        == "https://example.org/prkb/en/pr/1.html"


def test_incremental_build_rewrites_only_changed_pages(tmp_path: Path) -> None:
    profile = load_profile(None)
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        first = build_site(store, out, profile, search=False)
        untouched = out / "en" / "pr" / "47144.html"
        ino = untouched.stat().st_ino
        again = build_site(store, out, profile, search=False)
        assert again.rendered == 0 and again.reused == first.pages
        rec = plain_record(90010, "Synth A, edited", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                           "SynthMetadataBuilder")
        rec["updated_at"] = "2026-01-01T00:00:00Z"
        assert ingest(store, rec, profile).outcome == "updated"
        third = build_site(store, out, profile, search=False)
    assert "Synth A, edited" in (out / "en" / "pr" / "90010.html").read_text()
    assert "Synth A, edited" in (out / "zh" / "index.html").read_text()
    # the edited PR (both languages), pages that show its title, feeds: not the other PRs
    assert 0 < third.rendered < 25, third
    assert untouched.stat().st_ino == ino  # hard link of the very same file: not rewritten
    assert third.reused + third.rendered == third.pages


def test_failed_build_keeps_the_previous_site(tmp_path: Path) -> None:
    profile = load_profile(None)
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, profile, search=False)
        before = sorted(p.relative_to(out) for p in out.rglob("*"))
        index = (out / "en" / "index.html").read_bytes()

        def broken_report(store: Store, pr: dict[str, Any], lang: str,
                          links: Mapping[str, str]) -> str:
            if pr["number"] == 45149:
                raise PrkbError("report failed")
            return "<p>r</p>"

        with pytest.raises(PrkbError, match="report failed"):
            build_site(store, out, profile, search=False, report_html=broken_report)

        def bad_link(store: Store, pr: dict[str, Any], lang: str,
                     links: Mapping[str, str]) -> str:
            return '<p><a href="../pr/424242.html">x</a></p>'

        with pytest.raises(site_links.BrokenLinks, match=r"pr/\d+\.html -> \w+/pr/424242.html"):
            build_site(store, out, profile, search=False, report_html=bad_link)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert (out / "en" / "index.html").read_bytes() == index
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "notes.txt").write_text("mine")
    with Store(tmp_path / "kb.sqlite") as store, pytest.raises(InputError, match="not empty"):
        build_site(store, tmp_path / "site", load_profile(None), search=False)
    assert (tmp_path / "site" / "notes.txt").read_text() == "mine"


def test_broken_links_of_many_pages_are_named_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Links are checked as pages come back from the workers (a cold build, the tree's files
    known while they render); the error names the first five and counts the rest, and no
    tree is left."""
    from prkb.site import render as site_render

    monkeypatch.setattr(site_render, "PARALLEL_MIN", 0)  # the pool, for this small site
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def bad_link(store: Store, pr: dict[str, Any], lang: str,
                 links: Mapping[str, str]) -> str:
        return '<p><a href="../pr/424242.html">x</a></p>'

    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        prs = store.site_pr_count()
        with pytest.raises(site_links.BrokenLinks) as got:
            build_site(store, out, load_profile(None), search=False, report_html=bad_link)
    named = re.findall(r"\w+/pr/\w+\.html -> \w+/pr/424242\.html", str(got.value))
    more = re.search(r"\(and (\d+) more\)", str(got.value))
    assert len(named) == 5 and more is not None
    assert int(more.group(1)) + 5 == 2 * prs  # each PR page, in both languages
    assert not out.exists() and [p.name for p in tmp_path.iterdir()
                                 if p.name.startswith(".")] == []


def test_internal_links_and_site_safe() -> None:
    html = ('<a href="../pr/1.html#x">a</a><img src="../assets/a.png"><a href="https://x.org">'
            '<a href="javascript:alert(1)">j</a><a href="#top">t</a><a href="/en/">r</a>')
    assert site_links.internal_links("en/pr/2.html", html) == [
        "en/assets/a.png", "en/index.html", "en/pr/1.html", "javascript:alert(1)"
    ]
    with pytest.raises(site_links.BrokenLinks, match="javascript"):
        site_links.check_links({"p.html": ["javascript:alert(1)"]}, {"p.html"})
    out = site_safe('<p><a href="docs/x.md">d</a> <a href="https://e.org/">e</a> '
                    '<img src="https://e.org/i.png" alt="pic"></p>')
    assert '<a>d</a>' in out and 'href="https://e.org/"' in out
    assert "<img" not in out and "[pic]" in out


def test_parse_langs() -> None:
    assert parse_langs("zh,en") == ["zh", "en"]
    assert parse_langs("en") == ["en"]
    assert parse_langs("zh_CN") == ["zh"]
    with pytest.raises(InputError, match="fr"):
        parse_langs("fr")


def test_cli_build_one_language_and_errors(tmp_path: Path) -> None:
    with make_kb(tmp_path / "kb.sqlite"):
        pass
    env = {**os.environ, "PRKB_DB": str(tmp_path / "kb.sqlite")}
    cmd = [sys.executable, "-m", "prkb.cli", "-q", "site", "build", "-o", str(tmp_path / "s"),
           "--lang", "en", "--no-search", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    stats = json.loads(run.stdout)
    assert stats["pages"] == stats["rendered"] > 10
    assert not (tmp_path / "s" / "zh").exists()
    assert 'id="lang-zh"' not in (tmp_path / "s" / "en" / "index.html").read_text()
    bad = subprocess.run([*cmd[:-4], "--lang", "fr"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("prkb: error: unknown language 'fr'")
    assert "Traceback" not in bad.stderr
    bad = subprocess.run([*cmd, "--base-url", "javascript:alert(1)"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "--base-url" in bad.stderr


def test_search_index_has_both_languages(tmp_path: Path) -> None:
    with make_kb(tmp_path / "kb.sqlite") as store:
        stats = build_site(store, tmp_path / "site", load_profile(None), search=True)
    index = tmp_path / "site" / "pagefind"
    entry = json.loads((index / "pagefind-entry.json").read_text())
    assert set(entry["languages"]) == {"zh-cn", "en"}
    # the primary bundle and the shards it merges (the digests are a shard of their own)
    merged = json.loads((index / "shards.json").read_text())
    assert merged and all(rel.startswith("shards/digest-20") for rel in merged), merged
    bundles = [index, *(index / rel for rel in merged)]
    counts = [json.loads((b / "pagefind-entry.json").read_text())["languages"]
              for b in bundles]
    assert sum(c["en"]["page_count"] for c in counts) == stats.search_pages // 2
    assert sum(c["zh-cn"]["page_count"] for c in counts) == stats.search_pages // 2
    assert stats.search_reindexed
    with Store(tmp_path / "kb.sqlite") as store:
        # nothing searchable changed: the index is kept (linked), not built again
        again = build_site(store, tmp_path / "site", load_profile(None), search=True)
        assert not again.search_reindexed
        assert (tmp_path / "site" / "pagefind" / "pagefind-entry.json").is_file()
        rec = plain_record(90010, "Synth A, searchable edit", "2025-01-05T00:00:00Z",
                           "UNIFORM_BATCH", "SynthMetadataBuilder")
        rec["updated_at"] = "2026-01-01T00:00:00Z"
        ingest(store, rec, load_profile(None))
        third = build_site(store, tmp_path / "site", load_profile(None), search=True)
        assert third.search_reindexed and third.search_pages == stats.search_pages


def test_every_site_message_has_a_chinese_translation(built: tuple[Path, Any]) -> None:
    from babel.messages.pofile import read_po
    from jinja2.ext import babel_extract

    from prkb.paths import templates_dir
    from prkb.render.i18n import catalog_path

    ids: set[str] = set()
    for path in sorted((templates_dir() / "site").glob("*.html")):
        with path.open("rb") as fh:
            for _line, _func, msg, _c in babel_extract(
                fh, ["_", "gettext", "ngettext"], [], {"extensions": "jinja2.ext.i18n"}
            ):
                # an ngettext call's catalog entry is keyed by its singular
                one = msg[0] if isinstance(msg, tuple) else msg
                if one:
                    ids.add(one)
    assert len(ids) > 40
    with catalog_path("zh").open("rb") as fh:
        zh = read_po(fh)
    missing = sorted(i for i in ids if not (zh.get(i) and zh.get(i).string))
    assert not missing, f"add to {catalog_path('zh')}: {missing}"
    site, _ = built
    for p in ("matrix.html", "index.html", "audit.html"):
        assert zh.get("Support matrix").string in (site / "zh" / p).read_text()
        assert "Support matrix" in (site / "en" / p).read_text()


def test_serve_is_loopback_only_and_needs_a_site(tmp_path: Path, built: tuple[Path, Any]) -> None:
    import urllib.request

    from prkb.site.serve import make_server, serve_in_thread

    with pytest.raises(InputError, match="no site"):
        make_server(tmp_path, 0)
    server, url = serve_in_thread(built[0], 0)
    try:
        assert server.server_address[0] == "127.0.0.1" and url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "en/pagefind-missing.js", timeout=5) as r:
            raise AssertionError(f"served a missing file: {r.status}")
    except urllib.error.HTTPError as e:
        assert e.code == 404 and b"404" in e.read()
    finally:
        server.shutdown()
        server.server_close()
    root = (built[0] / "index.html").read_text()
    assert 'href="zh/index.html"' in root and 'href="en/index.html"' in root


def test_digest_pages_feeds_and_navigation(tmp_path: Path) -> None:
    from prkb.publish.digest import digest_weeks, render_digest

    profile = load_profile(None)
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, tmp_path / "site", profile, search=False,
                   base_url="https://example.org/prkb")
        weeks = digest_weeks(store, profile)
        hostile_week = "2026-W28"
        assert hostile_week in weeks and "2025-W01" in weeks
        expected = render_digest(store, hostile_week, "en", "fragment")
    site = tmp_path / "site"
    for lang in ("zh", "en"):
        index = (site / lang / "digest" / "index.html").read_text()
        listed = re.findall(r'<a href="(\d{4}-W\d\d)\.html">', index)
        assert listed == sorted(weeks, reverse=True)
        for w in weeks:
            assert (site / lang / "digest" / f"{w}.html").is_file()
        assert f'href="../../digest-{lang}.xml"' in index
        # every page links the digests from its navigation
        assert 'href="../digest/index.html"' in (site / lang / "pr" / "47144.html").read_text()
        assert 'href="digest/index.html"' in (site / lang / "index.html").read_text()
    page = (site / "en" / "digest" / f"{hostile_week}.html").read_text()
    # the digest's own text (counts line) as render_digest gives it, inside the site page
    summary = re.search(r"<li>Opened: [^<]+</li>", expected)
    assert summary and summary.group(0) in page
    assert 'href="../pr/90001.html"' in page and 'href="../pr/47144.html"' in page
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert "javascript:" not in page and "prkb.invalid" not in page
    # the mailed digest's markup as it is (its template escapes every value): the classes the
    # site's style reads are kept
    assert '<section class="digest" lang="en">' in page and '<p class="period">' in page
    assert re.search(r'<span class="date">\d{4}-\d\d-\d\d</span>', page)
    assert re.search(r'id="lang-zh"[^>]*href="\.\./\.\./zh/digest/2026-W28\.html"', page)
    zh_page = (site / "zh" / "digest" / f"{hostile_week}.html").read_text()
    assert "周报" in zh_page and '<html lang="zh-CN">' in zh_page
    ns = {"a": "http://www.w3.org/2005/Atom"}
    for lang in ("zh", "en"):
        feed = ET.parse(site / f"digest-{lang}.xml").getroot()
        entries = feed.findall("a:entry", ns)
        assert len(entries) == min(20, len(weeks))
        assert entries[0].find("a:link", ns).get("href") == (
            f"https://example.org/prkb/{lang}/digest/{max(weeks)}.html")
        assert "<script>" not in (site / f"digest-{lang}.xml").read_text()
    sm = (site / "sitemap.xml").read_text()
    assert f"https://example.org/prkb/zh/digest/{hostile_week}.html" in sm
    assert "https://example.org/prkb/en/digest/index.html" in sm


def test_digest_pages_are_incremental(tmp_path: Path) -> None:
    profile = load_profile(None)
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, profile, search=False)
        other = out / "en" / "digest" / "2026-W28.html"
        ino = other.stat().st_ino
        rec = plain_record(90010, "Synth A, edited", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                           "SynthMetadataBuilder")
        rec["updated_at"] = "2026-01-01T00:00:00Z"
        ingest(store, rec, profile)
        build_site(store, out, profile, search=False)
    assert "Synth A, edited" in (out / "en" / "digest" / "2025-W01.html").read_text()
    assert "Synth A, edited" in (out / "zh" / "digest" / "2025-W01.html").read_text()
    assert other.stat().st_ino == ino


def test_old_tree_is_removed_after_the_swap_without_blocking(tmp_path: Path) -> None:
    from prkb.site.output import Trash

    profile = load_profile(None)
    out = tmp_path / "site"
    trash = Trash()
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, profile, search=False, trash=trash)
        # a trash folder a killed run left behind is cleared by the next build
        left = tmp_path / ".site.trash-1-2"
        (left / "en").mkdir(parents=True)
        (left / "en" / "x.html").write_text("old")
        build_site(store, out, profile, search=False, trash=trash)
    assert trash.removing, "the old tree is removed by a detached process"
    for proc in trash.removing:
        assert proc.wait(timeout=30) == 0
    trash.removing.clear()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert (out / "en" / "index.html").is_file() and (out / MANIFEST).is_file()


def test_site_serve_takes_the_folder_flag_of_site_build() -> None:
    """`site serve` names the site folder with `-o/--out`, as `site build` does; the old
    `-d/--dir` still works."""
    from prkb.cli import build_parser

    parser = build_parser()
    for flag in ("-o", "--out", "-d", "--dir"):
        args = parser.parse_args(["site", "serve", flag, "pub/site"])
        assert args.dir == "pub/site", flag
    assert parser.parse_args(["site", "serve"]).dir == "site"
    assert parser.parse_args(["site", "build", "-o", "pub/site"]).out == "pub/site"


def test_the_salt_covers_the_site_code() -> None:
    """A change to the code that makes the pages changes every page's hash: the salt reads
    the site package's modules (the move to prkb/site/ left it naming files that were gone)."""
    from prkb.paths import project_root
    from prkb.site.build import salt_files

    files = salt_files()
    root = project_root()
    for name in ("build.py", "plan.py", "render.py", "feed.py", "digest_pages.py"):
        assert root / "prkb" / "site" / name in files
    assert all(f.exists() for f in files)


def test_feed_and_chart_times_use_the_one_date_parser() -> None:
    """A time the shared parser reads (lowercase ``z``, surrounding spaces) is that time in
    the feed and on the charts; the site's own parsers made the feed's a 1970 entry and left
    the chart's run undated."""
    from prkb.site.feed import atom_feed
    from prkb.site.svg import ts

    item = {"slug": "1", "label": "#1", "title": "t", "date": "2024-01-05T10:00:00z",
            "author": None, "changes": [], "tags": [], "state": "merged"}
    feed = atom_feed([item], lang="en", base_url=None, feed_path="feed.xml").decode()
    assert "2024-01-05T10:00:00+00:00" in feed and "1970" not in feed
    assert ts("2024-01-05T10:00:00z") == ts(" 2024-01-05T10:00:00Z ") == 1704448800.0
    assert ts("2024-01-05T12:00:00+02:00") == 1704448800.0


def test_home_page_counts_are_labelled_in_the_page_language(built: tuple[Path, Any]) -> None:
    """The home page's counts of raised and lowered PRs name the direction in the page's
    language. Jinja computes ``'raised' | label('directions')`` when it compiles the
    template; the Chinese and English compiled templates once shared one bytecode cache
    file, so the language compiled second (English) showed the first one's labels."""
    site, _ = built
    labels = {lang: re.findall(r'<span class="lbl">([^<]*)</span>',
                               (site / lang / "index.html").read_text(encoding="utf-8"))
              for lang in ("zh", "en")}
    assert "raised" in labels["en"] and "lowered" in labels["en"], labels["en"]
    assert "提升" in labels["zh"] and "降低" in labels["zh"], labels["zh"]
    # no label of the English home page is Chinese
    assert not any(re.search("[\u3400-\u9fff]", x) for x in labels["en"]), labels["en"]


def test_a_runs_pr_reports_read_their_stored_facts_at_once(
    tmp_path: Path, bundled: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The PR pages of a run read their rows and stored facts in a few bulk queries
    (``ReportPages.prefetch``), not one PR at a time; the pages are what one PR's report
    read alone makes."""
    from prkb.site import report_page

    # the pages render in forked workers: what they read is counted in a file
    log = tmp_path / "reads.log"
    real = type(bundled).pr_row_and_facts
    real_titles = type(bundled).pr_titles

    def note(line: str) -> None:
        with log.open("a") as fh:
            fh.write(line + "\n")

    def counted(self: Any, ref: Any, repo: Any = None) -> Any:
        note(f"one {ref}")
        return real(self, ref, repo)

    def titles(self: Any, numbers: Any) -> Any:
        note(f"titles {len(list(numbers))}")
        return real_titles(self, numbers)

    def reads() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    monkeypatch.setattr(type(bundled), "pr_row_and_facts", counted)
    monkeypatch.setattr(type(bundled), "pr_titles", titles)
    profile = load_profile(None)
    build_site(bundled, tmp_path / "site", profile, langs=["en"], search=False)
    prs = bundled.all_prs()
    made = reads()
    assert len(prs) > 20 and len(bundled.relations()) > 20
    # every PR page's facts were read ahead, and the titles of the PRs they relate to: one
    # read a run, and one for a PR only when its texts mention a PR no relation of the run
    # names
    assert not [x for x in made if x.startswith("one ")], made
    assert 0 < len([x for x in made if x.startswith("titles ")]) < len(prs) / 2, made
    for p in [p for p in prs if p["number"] is not None][:8]:
        number = p["number"]
        page = (tmp_path / "site" / "en" / "pr" / f"{number}.html").read_text()
        log.unlink(missing_ok=True)
        alone = report_page.report_html(bundled, {"ref": str(number)}, "en", profile, None)
        assert reads()[0] == f"one {number}"  # no row id: read alone
        assert alone.split("Related PRs")[0][-2000:] in page
        # the related PRs, their titles included, as read alone (the page links them)
        unlinked = re.sub(r"<a [^>]*>|</a>", "", page)
        assert re.sub(r"<a [^>]*>|</a>", "", alone.split("Related PRs")[1]) in unlinked
