"""The site's search index: shards that are indexed again only when their pages change, and
a build that completes (and says so) when Pagefind is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sitekb import make_kb, plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import build as site_build
from prkb.site import search as site_search
from prkb.site.build import MANIFEST, build_site
from prkb.store import Store

# heavy: Pagefind indexes and real Chromium: not in the fast tier
pytestmark = pytest.mark.heavy

PROFILE = load_profile(None)

needs_pagefind = pytest.mark.skipif(site_search.pagefind_binary() is None,
                                    reason="Pagefind is not installed (the search extra)")


def _bundles(site: Path) -> dict[str, Path]:
    index = site / "pagefind"
    out = {"primary": index}
    for rel in json.loads((index / "shards.json").read_text()):
        out[rel.strip("/").split("/")[-1]] = index / rel
    return out


def _count(bundle: Path) -> int:
    entry = json.loads((bundle / "pagefind-entry.json").read_text())
    return int(entry["languages"]["en"]["page_count"])


@needs_pagefind
def test_a_changed_pr_reindexes_its_shards_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_search, "PRS_PER_SHARD", 2)
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        first = build_site(store, out, PROFILE, search=True)
    bundles = _bundles(out)
    # every searchable page is in exactly one shard; each shard is a bundle of its own
    assert len(bundles) >= 3
    assert sum(_count(b) for b in bundles.values()) == first.search_pages // 2
    assert first.search_shards == len(bundles)
    before = json.loads((out / ".prkb-search.json").read_text())
    inodes = {name: (b / "pagefind-entry.json").stat().st_ino for name, b in bundles.items()}
    with Store(tmp_path / "kb.sqlite") as store:
        rec = plain_record(90010, "Synth A, edited for search", "2025-01-05T00:00:00Z",
                           "UNIFORM_BATCH", "SynthMetadataBuilder")
        rec["updated_at"] = "2026-01-01T00:00:00Z"
        ingest(store, rec, PROFILE)
        second = build_site(store, out, PROFILE, search=True)
    after = json.loads((out / ".prkb-search.json").read_text())
    changed = {name for name in after if before.get(name) != after[name]}
    # the edited PR's shard, the primary one (its builder page) and perhaps a related PR's
    assert 1 <= second.search_shards == len(changed) < len(bundles)
    assert second.search_pages == first.search_pages
    bundles = _bundles(out)
    for name, bundle in bundles.items():
        same_file = (bundle / "pagefind-entry.json").stat().st_ino == inodes[name]
        assert same_file == (name not in changed), name
    with Store(tmp_path / "kb.sqlite") as store:  # nothing changed: nothing indexed
        third = build_site(store, out, PROFILE, search=True)
    assert not third.search_reindexed and third.search_shards == 0
    assert _bundles(out).keys() == bundles.keys()


@needs_pagefind
def test_build_without_pagefind_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        with monkeypatch.context() as mp:
            mp.setattr(site_build, "pagefind_binary", lambda: None)
            stats = build_site(store, out, PROFILE, search=True)
        assert stats.search_missing and not stats.search_reindexed
        assert not (out / "pagefind").exists()
        en = (out / "en" / "search.html").read_text()
        assert 'id="search-off"' in en and "pip install &#39;prkb[search]&#39;" in en
        assert "search.js" not in en and 'id="search-form"' not in en
        zh = (out / "zh" / "search.html").read_text()
        assert "此次构建的站点不提供搜索" in zh
        # Pagefind installed afterwards: the next build adds the index and the search form
        again = build_site(store, out, PROFILE, search=True)
    assert not again.search_missing and again.search_reindexed
    assert (out / "pagefind" / "pagefind.js").is_file()
    # the pages kept from the build without search were hashed from their files: the same
    # searchable hashes as a site built with search from the start
    with Store(tmp_path / "kb.sqlite") as store:
        build_site(store, tmp_path / "fresh", PROFILE, search=True)
        third = build_site(store, out, PROFILE, search=True)
    assert third.search_shards == 0 and third.rendered == 0
    hashes = {p: v[2] for p, v in json.loads((out / MANIFEST).read_text())["pages"].items()}
    fresh = {p: v[2] for p, v in
             json.loads((tmp_path / "fresh" / MANIFEST).read_text())["pages"].items()}
    assert hashes == fresh and sum(1 for h in hashes.values() if h) == again.search_pages
    en = (out / "en" / "search.html").read_text()
    assert 'id="search-form"' in en and 'id="search-off"' not in en


def test_cli_without_the_pagefind_package(tmp_path: Path) -> None:
    """``prkb site build`` as after ``pip install -e .`` alone: the ``pagefind`` package
    cannot be imported. The site is built; one line says how to add search."""
    make_kb(tmp_path / "kb.sqlite").close()
    code = ("import sys; sys.modules['pagefind'] = None; "
            "from prkb.cli import main; sys.exit(main())")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", code, "--db", str(tmp_path / "kb.sqlite"), "-q", "site",
         "build", "-o", str(tmp_path / "site"), "--base-url", "https://kb.example.org/"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == ["prkb: no search index: Pagefind is not installed "
                     "(add it with: pip install 'prkb[search]')"], proc.stderr
    assert "site written to" in proc.stdout
    assert (tmp_path / "site" / "en" / "pr" / "90010.html").is_file()
    assert 'id="search-off"' in (tmp_path / "site" / "en" / "search.html").read_text()


class _Indexed(HTMLParser):
    """What Pagefind indexes of a page, read the way its documentation says: the text inside
    the ``data-pagefind-body`` element, without the elements marked ``data-pagefind-ignore``
    (and all they hold), plus the ``data-pagefind-meta``/``-filter`` attributes there."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                      "source", "track", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # tag, in body, ignored
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        body, ignored = self.stack[-1][1:] if self.stack else (False, False)
        body = body or "data-pagefind-body" in names
        ignored = ignored or "data-pagefind-ignore" in names
        if body:
            self.words += [f"@{k}={v}" for k, v in attrs
                           if k.startswith(("data-pagefind-meta", "data-pagefind-filter"))]
        if tag not in self.VOID:
            self.stack.append((tag, body, ignored))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][1] and not self.stack[-1][2]:
            self.words += data.replace("\0", " ").split()  # the mark where a part was


def _indexed(html: bytes) -> list[str]:
    p = _Indexed()
    p.feed(html.decode("utf-8"))
    p.close()
    return p.words


def test_the_searchable_hash_keeps_all_that_is_indexed(tmp_path: Path) -> None:
    """searchable_hash leaves out only what Pagefind ignores: on every searchable page of a
    site (PR pages with related PRs, the hostile PR's, builder and digest pages), the text
    the index reads is the same with and without the parts it removes."""
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
    pages = [p for p in out.glob("*/*/*.html") if b"data-pagefind-body" in p.read_bytes()]
    assert {p.parent.name for p in pages} == {"pr", "builder", "digest"}
    assert len(pages) > 20
    removed = 0
    for page in pages:
        body = page.read_bytes()
        stripped = site_search.strip_ignored(body)
        assert _indexed(stripped) == _indexed(body), page
        assert _indexed(body), page  # something is indexed on every one of them
        removed += len(body) - len(stripped)
    assert removed > 0
    related = (out / "en" / "pr" / "90011.html").read_bytes()
    assert b"Synth A" in related and b"Synth A" not in site_search.strip_ignored(related)


@pytest.mark.parametrize(("a", "b", "same"), [
    # only ignored text differs: the same hash
    (b'<p data-pagefind-ignore>one</p><p>x</p>', b'<p data-pagefind-ignore>two</p><p>x</p>',
     True),
    # indexed text differs
    (b'<p data-pagefind-ignore>one</p><p>x</p>', b'<p data-pagefind-ignore>one</p><p>y</p>',
     False),
    # an element holding one of its own name (its end is ambiguous) or a Pagefind attribute
    # (still read) is kept whole: more is hashed than is indexed, never less
    (b'<div data-pagefind-ignore><div>a</div>one</div>',
     b'<div data-pagefind-ignore><div>b</div>one</div>', False),
    (b'<div data-pagefind-ignore><b data-pagefind-filter="x">a</b></div>',
     b'<div data-pagefind-ignore><b data-pagefind-filter="y">a</b></div>', False),
    # an end tag of a longer name (</pre> in a <p>) is not the element's end
    (b'<p data-pagefind-ignore>x<pre>y</pre>z</p>w', b'<p data-pagefind-ignore>q</p>w', True),
    (b'<p data-pagefind-ignore>x</pre>z', b'<p data-pagefind-ignore>q</pre>z', False),
    # where a part was is kept: text on either side stays apart
    (b'a<span data-pagefind-ignore>x</span>b', b'ab', False),
    (b'a<span data-pagefind-ignore>x</span>b', b'a<i data-pagefind-ignore>y</i>b', True),
    # an attribute merely named like it (data-pagefind-ignored) removes nothing
    (b'<p data-pagefind-ignored>one</p>', b'<p data-pagefind-ignored>two</p>', False),
    # escaped text that looks like the attribute is text
    (b'<p>&lt;p data-pagefind-ignore&gt;one</p>', b'<p>&lt;p data-pagefind-ignore&gt;two</p>',
     False),
])
def test_searchable_hash_cases(a: bytes, b: bytes, same: bool) -> None:
    assert (site_search.searchable_hash(a) == site_search.searchable_hash(b)) is same
    for html in (a, b):  # never less than is indexed
        assert _indexed(b"<main data-pagefind-body>" + site_search.strip_ignored(html)
                        + b"</main>") == _indexed(b"<main data-pagefind-body>" + html
                                                  + b"</main>")


@needs_pagefind
def test_an_edited_title_reindexes_its_own_shards_not_those_that_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """90011 follows up 90010: its page (related PRs, its report's related section) shows the
    title of 90010. Editing that title indexes again the shard of 90010 and the digest shard
    of its week only; 90011's page is written again, its shard is kept."""
    monkeypatch.setattr(site_search, "PRS_PER_SHARD", 1)  # a shard per PR
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=True)
        ids = {n: i for i, n in store.conn.execute("SELECT id, number FROM prs")}
        before = json.loads((out / ".prkb-search.json").read_text())
        follow_up = out / "en" / "pr" / "90011.html"
        inode = follow_up.stat().st_ino
        rec = plain_record(90010, "Synth A, its title edited", "2025-01-05T00:00:00Z",
                           "UNIFORM_BATCH", "SynthMetadataBuilder")
        rec["updated_at"] = "2026-01-01T00:00:00Z"
        ingest(store, rec, PROFILE)
        second = build_site(store, out, PROFILE, search=True)
    after = json.loads((out / ".prkb-search.json").read_text())
    assert before.keys() == after.keys()
    changed = {name for name in after if before[name] != after[name]}
    assert changed == {site_search.pr_shard(ids[90010]), "digest-2025"}
    assert second.search_shards == 2
    assert follow_up.stat().st_ino != inode  # rewritten: it shows the new title
    assert "Synth A, its title edited" in follow_up.read_text()
    # 90011, the newest PR, is in the primary bundle, which was kept
    assert max(ids.values()) == ids[90011] and "primary" not in changed
