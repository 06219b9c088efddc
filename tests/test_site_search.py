"""The site's search index: shards that are indexed again only when their pages change, and
a build that completes (and says so) when Pagefind is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sitekb import make_kb, plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import build as site_build
from prkb.site import search as site_search
from prkb.site.build import build_site
from prkb.store import Store

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
         "build", "-o", str(tmp_path / "site")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == ["prkb: no search index: Pagefind is not installed "
                     "(add it with: pip install 'prkb[search]')"], proc.stderr
    assert "site written to" in proc.stdout
    assert (tmp_path / "site" / "en" / "pr" / "90010.html").is_file()
    assert 'id="search-off"' in (tmp_path / "site" / "en" / "search.html").read_text()
