"""The digest feeds' week entries kept between builds (``prkb.site.fragments``): a one-PR
rebuild of a PR in one of the feeds' weeks renders that week's entry and reads the others,
and the site still equals a fresh build; a full build renders every entry; a kept entry is
found only by the inputs it was made from."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sitekb import assert_same_as_fresh, make_kb, plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import digest_pages
from prkb.site import fragments as site_fragments
from prkb.site import plan as site_plan
from prkb.site import render as site_render
from prkb.site.build import build_site
from prkb.site.fragments import FragmentCache
from prkb.store import Store

PROFILE = load_profile(None)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """prkb's cache folder of this test only; every page rendered in this process (no worker
    pool, no split child), so that the renders counted here are all of them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _in_process(monkeypatch)
    return tmp_path / "cache" / "prkb" / "site-fragments"


def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_render, "SPLIT_MIN", 10**9)
    monkeypatch.setattr(site_render, "PARALLEL_MIN", 10**9)
    # as in test_site_partial: every related PR would be in the graph page's table
    monkeypatch.setattr(site_plan, "GRAPH_ROWS", 0)


def _count_feed_entries(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The (week, language) of every feed entry rendered from here on."""
    seen: list[tuple[str, str]] = []
    real = digest_pages.week_fragment

    def counted(weeks, key, lang, slugs, site_url=None, *, in_site=True):  # type: ignore[no-untyped-def]
        if not in_site:
            seen.append((key, lang))
        return real(weeks, key, lang, slugs, site_url, in_site=in_site)

    monkeypatch.setattr(digest_pages, "week_fragment", counted)
    return seen


WEEKS = ("2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23")  # after every other PR


def _add_weeks(store: Store) -> None:
    """A PR of no relation in each of the four newest weeks (the digest feeds' newest)."""
    for n, day in enumerate(WEEKS):
        assert ingest(store, plain_record(90100 + n, f"Synth week {n}", f"{day}T00:00:00Z",
                                          "ALWAYS", "OtherMetadataBuilder"),
                      PROFILE).outcome == "new"


def _retitle_newest(store: Store, title: str) -> None:
    rec = plain_record(90103, title, f"{WEEKS[-1]}T00:00:00Z", "ALWAYS", "OtherMetadataBuilder")
    rec["updated_at"] = "2026-12-01T00:00:00Z"
    assert ingest(store, rec, PROFILE).outcome == "updated"


def test_a_one_pr_rebuild_renders_only_its_weeks_feed_entry(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        _add_weeks(store)
        seen = _count_feed_entries(monkeypatch)
        build_site(store, out, PROFILE, search=False)
        weeks = {key for key, _ in seen}
        assert len(weeks) >= 4 and len(seen) == 2 * len(weeks)  # a full build: every entry
        assert len(os.listdir(cache)) == len(seen)  # kept, one file each
        feed = (out / "digest-en.xml").read_text(encoding="utf-8")

        _retitle_newest(store, "Retitled in the newest week")
        seen.clear()
        step = build_site(store, out, PROFILE, search=False)
        assert step.patched
        # the edited PR's week in each language, the other weeks read from the cache
        assert len(seen) == 2 and len({key for key, _ in seen}) == 1, seen
        again = (out / "digest-en.xml").read_text(encoding="utf-8")
        assert again != feed and "Retitled in the newest week" in again
        assert_same_as_fresh(store, out, fresh)


def test_a_full_build_renders_every_entry_even_when_kept(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full build does not read kept entries (it renders every page), and a kept entry that
    differs from what the inputs make (here: written over) reaches no page of a full build."""
    with make_kb(tmp_path / "kb.sqlite") as store:
        seen = _count_feed_entries(monkeypatch)
        build_site(store, tmp_path / "one", PROFILE, search=False)
        first = len(seen)
        for name in os.listdir(cache):
            (cache / name).write_text("<p>written over</p>", encoding="utf-8")
        build_site(store, tmp_path / "two", PROFILE, search=False)
        assert len(seen) == 2 * first
        assert "written over" not in (tmp_path / "two" / "digest-en.xml").read_text()


def test_a_kept_fragment_is_found_only_by_its_inputs(tmp_path: Path) -> None:
    a = FragmentCache("salt-a", read=True, folder=tmp_path / "f")
    b = FragmentCache("salt-b", read=True, folder=tmp_path / "f")
    key = a.key("digest-feed-entry", "en", "2026-W05", "h1")
    a.put(key, "<p>week</p>")
    assert a.get(key) == "<p>week</p>"
    assert b.get(b.key("digest-feed-entry", "en", "2026-W05", "h1")) is None  # another salt
    assert a.get(a.key("digest-feed-entry", "en", "2026-W05", "h2")) is None  # another week
    assert a.get(a.key("digest-feed-entry", "zh", "2026-W05", "h1")) is None  # another lang
    assert FragmentCache("salt-a", read=False, folder=tmp_path / "f").get(key) is None
    assert re.fullmatch(r"[0-9a-f]{64}", key)


def test_no_writable_cache_folder_means_every_entry_is_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _in_process(monkeypatch)
    cache = FragmentCache("s", read=True)
    cache.put(cache.key("x"), "<p>x</p>")  # nothing raised, nothing kept
    assert cache.get(cache.key("x")) is None
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        _add_weeks(store)
        build_site(store, out, PROFILE, search=False)
        _retitle_newest(store, "Retitled without a cache")
        seen = _count_feed_entries(monkeypatch)
        assert build_site(store, out, PROFILE, search=False).patched
        assert len(seen) >= 2 * len(WEEKS)  # every week of the feeds rendered again
        assert_same_as_fresh(store, out, fresh)


def test_the_cache_folder_is_trimmed_to_its_newest_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_fragments, "LIMIT", 10)
    cache = FragmentCache("s", read=True, folder=tmp_path / "f")
    keys = [cache.key(str(i)) for i in range(11)]
    for i, key in enumerate(keys):
        cache.put(key, f"<p>{i}</p>")
        os.utime(tmp_path / "f" / f"{key}.html", ns=(i * 10**9, i * 10**9))
    # the eleventh put went past the limit: the older files went, down to half of it
    assert sorted(os.listdir(tmp_path / "f")) == sorted(f"{k}.html" for k in keys[-5:])


def test_a_failed_write_of_the_cache_fails_no_build(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder that cannot be written (a full disk, a read-only folder: write_atomic
    says so with an InputError) leaves the build as it would be without a cache."""
    from prkb.errors import InputError

    def full(path: Path, data: object) -> None:
        raise InputError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(site_fragments, "write_atomic", full)
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        _add_weeks(store)
        build_site(store, out, PROFILE, search=False)
        _retitle_newest(store, "Retitled on a full disk")
        assert build_site(store, out, PROFILE, search=False).patched
        assert "Retitled on a full disk" in (out / "digest-en.xml").read_text(encoding="utf-8")
        assert not cache.exists() or os.listdir(cache) == []
        assert_same_as_fresh(store, out, fresh)
