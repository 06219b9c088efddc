"""The in-place commit of a one-PR rebuild (prkb.site.commit): its few files are moved into
the site instead of a whole new tree swapped in; a commit cut short is finished by the next
build; a failure before it leaves the site as it was; a build that cannot take the site's
lock swaps a new tree in; a damaged journal means a full build; the search shards indexed
again are swapped in; real processes killed at random, or two at once, leave a site that is a
fresh build's."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sitekb import assert_same_as_fresh, files, make_kb, plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import commit as site_commit
from prkb.site import output as site_output
from prkb.site import plan as site_plan
from prkb.site import render as site_render
from prkb.site import search as site_search
from prkb.site.build import build_site
from prkb.site.state import MANIFEST
from prkb.store import Store

# heavy: builds killed and finished in subprocesses: not in the fast tier
pytestmark = pytest.mark.heavy

PROFILE = load_profile(None)
GRAPH_ROWS = site_plan.GRAPH_ROWS


@pytest.fixture(autouse=True)
def no_graph_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in test_site_partial: every related PR would be in the graph page's table."""
    monkeypatch.setattr(site_plan, "GRAPH_ROWS", 0)


def _retitle(store: Store, title: str, stamp: str) -> None:
    rec = plain_record(90010, title, "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                       "SynthMetadataBuilder")
    rec["updated_at"] = stamp
    assert ingest(store, rec, PROFILE).outcome == "updated"


def _beside(out: Path) -> list[str]:
    """What the builds left next to the site (staging folders, old trees), once the old
    trees' removals (detached processes nobody waits for) had 30 seconds to end."""
    deadline = time.monotonic() + 30
    while True:
        left = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}"))
        if not any(".trash-" in name for name in left) or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_a_one_pr_rebuild_moves_its_files_into_the_site(tmp_path: Path) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        folder = out.stat().st_ino
        kept = (out / "en" / "matrix.html").stat()
        _retitle(store, "Synth A, in place", "2026-02-01T00:00:00Z")
        step = build_site(store, out, PROFILE, search=False)
        assert step.patched and 0 < step.rendered < step.pages // 2
        assert out.stat().st_ino == folder  # the same folder: no new tree swapped in
        assert "Synth A, in place" in (out / "en" / "pr" / "90010.html").read_text()
        now = (out / "en" / "matrix.html").stat()
        assert (now.st_ino, now.st_nlink) == (kept.st_ino, kept.st_nlink)  # not even linked
        assert not (out / site_commit.JOURNAL).exists()
        assert_same_as_fresh(store, out, fresh)
    assert _beside(out) == []


def test_a_commit_cut_short_is_finished_by_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        manifest = (out / MANIFEST).read_bytes()
        _retitle(store, "Synth A, cut short", "2026-02-01T00:00:00Z")
        moved: list[str] = []
        real = site_commit._move

        def dies_before_the_manifest(staging: Path, site: Path, rel: str) -> None:
            if rel == MANIFEST:
                raise SystemExit("killed")  # as the process dying between two renames
            moved.append(rel)
            real(staging, site, rel)

        monkeypatch.setattr(site_commit, "_move", dies_before_the_manifest)
        with pytest.raises(SystemExit):
            build_site(store, out, PROFILE, search=False)
        monkeypatch.setattr(site_commit, "_move", real)
        # the pages are new, the manifest is the previous build's; the journal and the
        # staging folder are left for the next build
        assert (out / site_commit.JOURNAL).is_file()
        assert (out / MANIFEST).read_bytes() == manifest
        assert any(name.startswith(".site.building-") for name in _beside(out))
        assert "Synth A, cut short" in (out / "en" / "pr" / "90011.html").read_text()

        # the edit is taken back before the next build: the pages already moved show a title
        # the site no longer has, unless that build first finishes the commit (its manifest
        # then says what those pages show, and the revert renders them again)
        _retitle(store, "Synth A", "2026-02-01T12:00:00Z")
        assert "en/pr/90011.html" in moved
        build_site(store, out, PROFILE, search=False)
        assert not (out / site_commit.JOURNAL).exists()
        assert_same_as_fresh(store, out, fresh)
        # and the one after patches from there
        _retitle(store, "Synth A, once more", "2026-02-02T00:00:00Z")
        assert build_site(store, out, PROFILE, search=False).patched
        assert_same_as_fresh(store, out, fresh)


def test_a_build_killed_while_it_writes_the_journal_leaves_nothing_in_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a process killed (SIGKILL: no clean-up) between creating the journal's temporary file
    # and renaming it: the file was made in the site before, where nothing removed it and
    # the site's files were no longer a fresh build's (seen once in CI's random kills)
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        before = files(out)
        # what an earlier prkb killed so left in the site: removed by the next commit
        stray = out / f".{site_commit.JOURNAL}.4242.deadbeef.tmp"
        stray.write_text('{"staging": "x", "fi')
        _retitle(store, "Synth A, journal cut", "2026-02-01T00:00:00Z")
        real = site_commit.write_atomic

        def killed_mid_write(path: Path, data: str | bytes) -> None:
            # what write_atomic had made when the process died: its temporary file, half
            part = path.parent / f".{path.name}.{os.getpid()}.0badf00d.tmp"
            part.write_text(str(data)[:10])
            raise SystemExit("killed")

        monkeypatch.setattr(site_commit, "write_atomic", killed_mid_write)
        with pytest.raises(SystemExit):
            build_site(store, out, PROFILE, search=False)
        monkeypatch.setattr(site_commit, "write_atomic", real)
        assert not stray.exists()
        assert files(out) == before  # no journal, no part of one
        assert not (out / site_commit.JOURNAL).exists()
        step = build_site(store, out, PROFILE, search=False)
        assert step.patched
        assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
        assert_same_as_fresh(store, out, fresh)


def test_the_tree_of_a_build_that_died_is_removed_by_the_next_build(tmp_path: Path) -> None:
    # a build killed before its swap or commit leaves its new tree beside the site, as big
    # as the site: the next build removes it, not the tree of a build still running, nor a
    # commit's staging folder while the site's journal names it
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        with make_kb(tmp_path / "kb.sqlite") as store:
            build_site(store, out, PROFILE, search=False)
            orphan = tmp_path / f".site.building-{dead.pid}"
            running = tmp_path / f".site.building-{alive.pid}"
            another = tmp_path / f".other.building-{dead.pid}"  # another site's
            for tree in (orphan, running, another):
                (tree / "en" / "pr").mkdir(parents=True)
                (tree / "en" / "pr" / "1.html").write_text("half a site")
            (out / site_commit.JOURNAL).write_text("{}")
            assert site_output._orphans(out) == []  # a journal: left to the next build
            (out / site_commit.JOURNAL).unlink()
            assert site_output._orphans(out) == [orphan]
            trash = site_output.Trash()
            _retitle(store, "Synth A, after a death", "2026-02-01T00:00:00Z")
            assert build_site(store, out, PROFILE, search=False, trash=trash).patched
            for proc in trash.removing:
                proc.wait()
            assert not orphan.exists()
            assert (running / "en" / "pr" / "1.html").read_text() == "half a site"
            assert (another / "en" / "pr" / "1.html").is_file()
            assert [n for n in _beside(out) if "orphan" in n] == []
            assert_same_as_fresh(store, out, fresh)
    finally:
        alive.kill()
        alive.wait()


def test_a_failure_before_the_commit_leaves_the_site_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        before = files(out)
        _retitle(store, "Synth A, never shown", "2026-02-01T00:00:00Z")
        real = site_render.render_page

        def fails_on_a_digest(job: site_render.RenderJob, page: object) -> bytes:
            if getattr(page, "template", "") == "site/digest.html":
                raise RuntimeError("template broke")
            return real(job, page)  # type: ignore[arg-type]

        monkeypatch.setattr(site_render, "render_page", fails_on_a_digest)
        with pytest.raises(RuntimeError, match="template broke"):
            build_site(store, out, PROFILE, search=False)
        monkeypatch.setattr(site_render, "render_page", real)
        assert files(out) == before
        assert _beside(out) == []
        # the lock was let go: the next build patches in place
        folder = out.stat().st_ino
        assert build_site(store, out, PROFILE, search=False).patched
        assert out.stat().st_ino == folder
        assert_same_as_fresh(store, out, fresh)


def test_a_site_locked_by_another_build_gets_a_new_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        folder = out.stat().st_ino
        holder = subprocess.Popen(
            [sys.executable, "-c",
             "import fcntl, os, sys\n"
             "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
             "fcntl.flock(fd, fcntl.LOCK_EX)\n"
             "print('held', flush=True)\n"
             "sys.stdin.read()\n", str(out)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            real = site_output.OutputTree.swap

            def swap_once_released(tree: site_output.OutputTree) -> None:
                assert holder.stdin is not None
                holder.stdin.close()  # the other build ends: the swap may take the lock
                holder.wait(timeout=30)
                real(tree)

            monkeypatch.setattr(site_output.OutputTree, "swap", swap_once_released)
            _retitle(store, "Synth A, while locked", "2026-02-01T00:00:00Z")
            step = build_site(store, out, PROFILE, search=False)
        finally:
            holder.kill()
            holder.wait()
        assert step.patched  # planned from the partial read, but not written in place
        assert out.stat().st_ino != folder
        assert_same_as_fresh(store, out, fresh)


def test_a_damaged_journal_means_a_full_build(tmp_path: Path) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        _retitle(store, "Synth A, after damage", "2026-02-01T00:00:00Z")
        for text in ('{"staging": "../../etc", "files": [], "remove": [], "index": "", '
                     '"drop_index": ""}', "{not json", '{"staging": ".x", "files": ["../x"], '
                     '"remove": [], "index": "", "drop_index": ""}'):
            (out / site_commit.JOURNAL).write_text(text)
            step = build_site(store, out, PROFILE, search=False)
            assert not step.patched and step.reused == 0, text  # every page made again
            assert not (out / site_commit.JOURNAL).exists()
            assert_same_as_fresh(store, out, fresh)


@pytest.mark.skipif(site_search.pagefind_binary() is None,
                    reason="Pagefind is not installed (the search extra)")
def test_a_one_pr_rebuild_in_place_swaps_in_the_shards_it_indexed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_search, "PRS_PER_SHARD", 1)  # a shard per PR
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=True)
        folder = out.stat().st_ino
        entries = {p.parent.name: p.stat().st_ino
                   for p in (out / "pagefind").rglob("pagefind-entry.json")}
        _retitle(store, "Synth A, searched for", "2026-02-01T00:00:00Z")
        step = build_site(store, out, PROFILE, search=True)
        assert step.patched and out.stat().st_ino == folder
        assert step.search_shards == 2  # 90010's shard and its digest year's
        now = {p.parent.name: p.stat().st_ino
               for p in (out / "pagefind").rglob("pagefind-entry.json")}
        assert now.keys() == entries.keys()
        assert sum(now[k] != entries[k] for k in now) == 2  # the others are the same files
        build_site(store, fresh, PROFILE, search=True)
        # what the index was made from is what a fresh build indexes
        assert (json.loads((out / ".prkb-search.json").read_text())
                == json.loads((fresh / ".prkb-search.json").read_text()))
        got = {p: v[2] for p, v in json.loads((out / MANIFEST).read_text())["pages"].items()}
        want = {p: v[2] for p, v in json.loads((fresh / MANIFEST).read_text())["pages"].items()}
        assert got == want
        # the shard indexed again holds the new title (its fragments are gzipped JSON)
        shard = out / "pagefind" / "shards" / site_search.pr_shard(
            store.conn.execute("SELECT id FROM prs WHERE number = 90010").fetchone()[0])
        texts = b"".join(gzip.decompress(p.read_bytes())
                         for p in (shard / "fragment").glob("*.pf_fragment"))
        assert b"Synth A, searched for" in texts
    assert _beside(out) == []


def test_the_staging_folder_is_gone_before_the_next_build_stages_into_it(
    tmp_path: Path,
) -> None:
    """The staging folder is named by the process id: the next build of the same process uses
    that name again, while the last one's removal (a detached process) may still run."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    trash = site_output.Trash()
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False, trash=trash)
        _retitle(store, "Synth A, staged", "2026-02-01T00:00:00Z")
        assert build_site(store, out, PROFILE, search=False, trash=trash).patched
        staging = site_output.OutputTree(out).tmp
        assert not staging.exists()
        staging.mkdir()  # as the next build's staging folder, made before the removal ran
        (staging / "page.html").write_text("the next build's page")
        for proc in trash.removing:
            proc.wait(timeout=60)
        assert (staging / "page.html").read_text() == "the next build's page"
        staging.joinpath("page.html").unlink()
        staging.rmdir()
        assert_same_as_fresh(store, out, fresh)


@pytest.mark.skipif(site_search.pagefind_binary() is None,
                    reason="Pagefind is not installed (the search extra)")
def test_search_turned_off_or_on_with_an_edit_is_planned_in_full(tmp_path: Path) -> None:
    """The search pages say whether the site has search: a partial read would carry them."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=True)
        assert (out / "pagefind" / "pagefind.js").is_file()
        _retitle(store, "Synth A, unsearched", "2026-02-01T00:00:00Z")
        step = build_site(store, out, PROFILE, search=False)
        assert not step.patched
        assert not (out / "pagefind").exists()
        assert not (out / ".prkb-search.json").exists()  # as in a site built without search
        assert_same_as_fresh(store, out, fresh)
        _retitle(store, "Synth A, searched again", "2026-02-02T00:00:00Z")
        step = build_site(store, out, PROFILE, search=True)
        assert not step.patched and (out / "pagefind" / "pagefind.js").is_file()
        assert 'id="search-form"' in (out / "en" / "search.html").read_text()
    assert _beside(out) == []


def _process_site(db: Path, out: Path) -> tuple[list[str], dict[str, str]]:
    """A knowledge base with 90020, a PR of no relation (so not in the graph page's table:
    its edits are one-PR rebuilds), and the ``prkb site build`` command and environment that
    build ``out`` from it in a process of its own."""
    with make_kb(db) as store:
        _retitle_c(store, "Synth C", None)
    cmd = [sys.executable, "-m", "prkb", "--db", str(db), "-q", "site", "build", "--no-search",
           "-o", str(out)]
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    return cmd, env


def _retitle_c(store: Store, title: str, stamp: str | None) -> None:
    """Ingest 90020 with ``title`` (``stamp``: its update time; None: its first version)."""
    rec = plain_record(90020, title, "2025-03-05T00:00:00Z", "ALWAYS", "OtherMetadataBuilder")
    if stamp is not None:
        rec["updated_at"] = stamp
    assert ingest(store, rec, PROFILE).outcome == ("new" if stamp is None else "updated")


def test_one_pr_rebuilds_killed_at_random_leave_a_site_the_next_build_makes_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real processes, SIGKILLed at a random moment of a one-PR rebuild (reading, rendering,
    staging or moving); after each kill the site is the previous one or a commit the next
    build finishes, and a build that is left to finish gives a fresh build's site."""
    import random
    import signal

    monkeypatch.setattr(site_plan, "GRAPH_ROWS", GRAPH_ROWS)  # as the processes build
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    db = tmp_path / "kb.sqlite"
    cmd, env = _process_site(db, out)
    assert subprocess.run(cmd, env=env, check=False).returncode == 0
    folder = out.stat().st_ino
    # how long one such rebuild takes here, uncut: the kills fall anywhere in it (a fixed
    # range of seconds lets a faster machine, or a faster prkb, finish before most of them);
    # the faster of two, so that one slowed by a busy machine does not let the rounds finish
    # before their kills
    took = float("inf")
    for n in range(2):
        with Store(db) as store:
            _retitle_c(store, f"Synth C, timed {n}", f"2026-01-31T00:00:0{n}Z")
        started = time.perf_counter()
        assert subprocess.run(cmd, env=env, check=False).returncode == 0
        took = min(took, time.perf_counter() - started)
    rng = random.Random(5)
    kills = 0
    for n in range(12):
        with Store(db) as store:  # each round, another edit of what the pages show
            _retitle_c(store, f"Synth C, round {n}", f"2026-02-01T00:00:{n:02d}Z")
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            proc.wait(timeout=rng.uniform(0.05, 1.1) * took)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, -signal.SIGKILL), err
    assert subprocess.run(cmd, env=env, check=False).returncode == 0
    assert not (out / site_commit.JOURNAL).exists()
    assert out.stat().st_ino == folder  # every build was a one-PR rebuild in place
    assert "Synth C, round 11" in (out / "en" / "pr" / "90020.html").read_text()
    with Store(db) as store:
        assert_same_as_fresh(store, out, fresh)
    assert kills >= 3, kills  # enough of the rounds were cut short to mean something
    # the trees and staging folders of the killed builds are gone too (the last build
    # removed them: their processes had died)
    assert [n for n in _beside(out) if ".building-" in n] == []


def test_two_builds_of_one_site_at_once_both_finish_and_the_site_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes build the same site at the same time after each edit: one may write in
    place while the other swaps a tree in (the lock orders them); both succeed, and the site
    is a fresh build's."""
    monkeypatch.setattr(site_plan, "GRAPH_ROWS", GRAPH_ROWS)  # as the processes build
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    db = tmp_path / "kb.sqlite"
    cmd, env = _process_site(db, out)
    assert subprocess.run(cmd, env=env, check=False).returncode == 0
    for n in range(4):
        with Store(db) as store:
            _retitle_c(store, f"Synth C, twice {n}", f"2026-02-01T00:00:{n:02d}Z")
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        assert not (out / site_commit.JOURNAL).exists()
        with Store(db) as store:
            assert_same_as_fresh(store, out, fresh)
    assert [name for name in _beside(out) if ".building-" in name] == []
