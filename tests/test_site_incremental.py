"""Incremental site builds give the very same site as a build from scratch.

Each step changes the knowledge base the way collectors do (an edited PR, a new reading of a
builder, new relations, a copied knowledge base), builds incrementally into one folder and
from scratch into another, and compares every file. Also: the previous site's files are
never written to, and a failed prelink falls back to a clean tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sitekb import assert_same_as_fresh, files, make_kb, plain_record

from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import output as output_mod
from prkb.site.build import build_site
from prkb.site.state import MANIFEST
from prkb.store import Store

PROFILE = load_profile(None)
def edited(number: int, title: str, when: str, level: str, cls: str, **kw: object) -> dict:
    rec = plain_record(number, title, when, level, cls, **kw)  # type: ignore[arg-type]
    rec["updated_at"] = "2026-02-01T00:00:00Z"
    return rec


def test_incremental_builds_equal_fresh_builds(tmp_path: Path) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        first = build_site(store, out, PROFILE, search=False)
        assert first.rendered == first.pages

        # nothing changed: nothing rendered
        again = build_site(store, out, PROFILE, search=False)
        assert again.rendered == 0 and again.reused == again.pages

        # 1. a PR's title: its pages, the pages of PRs related to it, lists that show it
        rec = edited(90010, "Synth A, renamed", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                     "SynthMetadataBuilder")
        assert ingest(store, rec, PROFILE).outcome == "updated"
        step = build_site(store, out, PROFILE, search=False)
        assert 0 < step.rendered < step.pages // 2
        assert "Synth A, renamed" in (out / "en" / "pr" / "90011.html").read_text()
        assert_same_as_fresh(store, out, fresh)

        # 2. a new reading of the builder: every PR page that shows the class's current level
        newer = plain_record(90012, "Synth C", "2026-03-05T00:00:00Z", "NEVER",
                             "SynthMetadataBuilder")
        ingest(store, newer, PROFILE)
        build_site(store, out, PROFILE, search=False)
        assert_same_as_fresh(store, out, fresh)

        # 3. new relations found by the graph stage (no PR record changed)
        ingest(store, plain_record(90013, "Synth D", "2026-03-06T00:00:00Z", "ALWAYS",
                                   "OtherMetadataBuilder",
                                   [{"type": "follow-up-of", "target": 90011}]), PROFILE)
        build_relations(store, PROFILE)
        build_site(store, out, PROFILE, search=False)
        assert "90013" in (out / "en" / "pr" / "90011.html").read_text()
        assert_same_as_fresh(store, out, fresh)

        # relations recomputed with nothing new: the journal stays where it was
        cursor = store.change_cursor()
        build_relations(store, PROFILE)
        assert store.change_cursor() == cursor
        assert build_site(store, out, PROFILE, search=False).rendered == 0


def test_another_knowledge_base_with_the_same_history_is_not_trusted(tmp_path: Path) -> None:
    """A copied file shares the journal's first rows; its later changes are others'."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "a.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
    shutil.copy(tmp_path / "a.sqlite", tmp_path / "b.sqlite")
    with Store(tmp_path / "a.sqlite") as a:
        ingest(a, edited(90010, "Changed in A", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                         "SynthMetadataBuilder"), PROFILE)
        build_site(a, out, PROFILE, search=False)
    with Store(tmp_path / "b.sqlite") as b:
        # the same number of journal rows as A, other changes
        ingest(b, edited(90011, "Changed in B", "2025-06-05T00:00:00Z", "ALWAYS",
                         "SynthMetadataBuilder"), PROFILE)
        assert b.change_cursor()[0] == Store(tmp_path / "a.sqlite").change_cursor()[0]
        build_site(b, out, PROFILE, search=False)
        assert "Changed in A" not in (out / "en" / "pr" / "90010.html").read_text()
        assert_same_as_fresh(b, out, fresh)


def test_the_previous_site_is_never_written_to(tmp_path: Path) -> None:
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        page = out / "en" / "pr" / "90010.html"
        old_text = page.read_text()
        # a reader (a web server, a sync) holding the previous file
        os.link(page, tmp_path / "held.html")
        ingest(store, edited(90010, "Synth A, again", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                             "SynthMetadataBuilder"), PROFILE)
        build_site(store, out, PROFILE, search=False)
    assert "Synth A, again" in page.read_text()
    assert (tmp_path / "held.html").read_text() == old_text


def test_a_failed_prelink_falls_back_to_a_clean_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        before = files(out)

        def broken(old: Path, tmp: Path) -> subprocess.Popen[bytes]:
            # links one page, then dies: what it made must not be trusted or written into
            code = ("import os, sys; os.makedirs(sys.argv[2] + '/en/pr', exist_ok=True); "
                    "os.link(sys.argv[1] + '/en/pr/90010.html', sys.argv[2] + '/en/pr/90010.html');"
                    " sys.exit(3)")
            return subprocess.Popen([sys.executable, "-c", code, str(old), str(tmp)],
                                    stdout=subprocess.PIPE)

        monkeypatch.setattr(output_mod, "start_prelink", broken)
        ingest(store, edited(90010, "After a broken prelink", "2025-01-05T00:00:00Z",
                             "UNIFORM_BATCH", "SynthMetadataBuilder"), PROFILE)
        stats = build_site(store, out, PROFILE, search=False)
        assert stats.reused > 0
        assert "After a broken prelink" in (out / "en" / "pr" / "90010.html").read_text()
        assert_same_as_fresh(store, out, fresh)
    # the previous tree's copy of the page was not written through the stray link
    assert b"After a broken prelink" not in before["en/pr/90010.html"]


def test_removed_pages_break_no_kept_link(tmp_path: Path) -> None:
    """A page that goes away is caught when a kept page still links to it."""
    out = tmp_path / "site"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        store.conn.execute("PRAGMA foreign_keys = ON")
        with store.transaction() as conn:
            conn.execute("DELETE FROM prs WHERE number = 90010")
        stats = build_site(store, out, PROFILE, search=False)
        assert not (out / "en" / "pr" / "90010.html").exists()
        assert stats.reused > 0
        assert_same_as_fresh(store, out, tmp_path / "fresh")


def test_pages_rendered_by_forked_workers_equal_pages_rendered_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker pool (each worker with its own connection, its job handed over by the fork)
    writes the same site as rendering in this process, and a second parallel build reads the
    knowledge base afresh (no data of the first build survives in it)."""
    from prkb.site import render as render_mod

    serial, forked = tmp_path / "serial", tmp_path / "forked"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, serial, PROFILE, search=False)
        monkeypatch.setattr(render_mod, "PARALLEL_MIN", 0)
        monkeypatch.setattr(os, "cpu_count", lambda: 2)
        build_site(store, forked, PROFILE, search=False)
        assert files(forked) == files(serial)
        rec = edited(90010, "Edited between parallel builds", "2025-01-05T00:00:00Z",
                     "UNIFORM_BATCH", "SynthMetadataBuilder")
        ingest(store, rec, PROFILE)
        shutil.rmtree(forked)
        build_site(store, forked, PROFILE, search=False)
        monkeypatch.undo()
        assert "Edited between parallel builds" in (forked / "en" / "pr" / "90010.html").read_text()
        assert_same_as_fresh(store, forked, serial)


def test_a_site_an_earlier_version_built_is_made_again_without_error(tmp_path: Path) -> None:
    """The manifest is format version 3 (a page's entry is three hashes: its inputs, its
    links, what the search index reads of it). A site whose manifest has another salt
    (another prkb's code) or another format version (2: two hashes a page) is rebuilt from
    scratch, without error, into the same site as a fresh build; the build after that is
    incremental again."""
    import json

    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        assert manifest["version"] == 3
        assert set(manifest) == {"version", "salt", "kb", "search", "currents", "prs", "pages",
                                 "model"}
        assert all(len(v) == 2 for v in manifest["prs"].values())
        assert all(len(v) == 3 for v in manifest["pages"].values())
        assert not any(v[2] for v in manifest["pages"].values())  # built without search
        two = {p: v[:2] for p, v in manifest["pages"].items()}
        for change in ({"salt": "0" * 64}, {"version": 1}, {"version": 2, "pages": two}):
            (out / MANIFEST).write_text(json.dumps({**manifest, **change}), encoding="utf-8")
            stats = build_site(store, out, PROFILE, search=False)
            assert stats.rendered == stats.pages and stats.reused == 0, change
            assert_same_as_fresh(store, out, fresh)
        again = build_site(store, out, PROFILE, search=False)
        assert again.rendered == 0 and again.reused == again.pages


def test_a_same_named_builder_of_another_file_is_another_builder(tmp_path: Path) -> None:
    """A class of the same name in another file (a V0 builder beside the V1 one) is a builder
    of its own: its pages appear in an incremental build as in a fresh one, and a change of it
    leaves the pages of the V1 builder's PRs as they were (hard links to the previous ones)."""
    v0 = "vllm/attention/backends/rocm_synth.py"
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        ingest(store, plain_record(90020, "Synth V0", "2026-04-01T00:00:00Z", "NEVER",
                                   "SynthMetadataBuilder", path=v0), PROFILE)
        build_site(store, out, PROFILE, search=False)
        assert_same_as_fresh(store, out, fresh)
        page = out / "en" / "pr" / "90011.html"
        inode = page.stat().st_ino
        ingest(store, plain_record(90021, "Synth V0 raised", "2026-04-02T00:00:00Z",
                                   "UNIFORM_BATCH", "SynthMetadataBuilder", path=v0), PROFILE)
        build_site(store, out, PROFILE, search=False)
        assert page.stat().st_ino == inode  # reused: its builder did not change
        assert_same_as_fresh(store, out, fresh)


def test_a_relation_moves_to_the_week_its_later_end_merged_in(tmp_path: Path) -> None:
    """A weekly digest lists a relation in the week its later end happened. 90031 (merged in
    March) follows up 90030, open since January: the relation is March's news. When 90030
    merges in May, it becomes May's: the March page (whose own PRs did not change) must drop
    it, as a fresh build does."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        base = plain_record(90030, "Synth base", "2025-01-06T00:00:00Z", "UNIFORM_BATCH",
                            "SynthMetadataBuilder")
        base.update(state="open", merged_at=None)
        ingest(store, base, PROFILE)
        ingest(store, plain_record(90031, "Synth follow-up", "2025-03-03T00:00:00Z", "ALWAYS",
                                   "SynthMetadataBuilder",
                                   [{"type": "follow-up-of", "target": 90030}]), PROFILE)
        build_relations(store, PROFILE)
        build_site(store, out, PROFILE, search=False)
        march = (out / "en" / "digest" / "2025-W10.html").read_text()
        assert "#90030" in march  # the relation, news in the week 90031 merged
        merged = plain_record(90030, "Synth base", "2025-05-05T00:00:00Z", "UNIFORM_BATCH",
                              "SynthMetadataBuilder")
        merged.update(created_at="2025-01-06T00:00:00Z", updated_at="2026-02-01T00:00:00Z")
        assert ingest(store, merged, PROFILE).outcome == "updated"
        build_site(store, out, PROFILE, search=False)
        assert_same_as_fresh(store, out, fresh)
        assert "#90030" not in (out / "en" / "digest" / "2025-W10.html").read_text()
        assert "#90031" in (out / "en" / "digest" / "2025-W19.html").read_text()
