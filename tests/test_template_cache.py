"""prkb's files in Jinja's per-user cache folder do not pile up: what no run has used for a
month is deleted, at most once a day; what a run reads stays; other programs' files stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

import jinja2

from prkb.render import template_cache
from prkb.render.template_cache import KeptBytecodeCache, prune

DAY = 86400.0


def _file(folder: Path, name: str, age_days: float, now: float) -> Path:
    path = folder / name
    path.write_bytes(b"x")
    os.utime(path, (now - age_days * DAY, now - age_days * DAY))
    return path


def test_prune_deletes_only_prkbs_files_unused_for_a_month(tmp_path: Path) -> None:
    now = time.time()
    old = [_file(tmp_path, "__jinja2_prkb_html-en-abc_0123.cache", 31, now),
           _file(tmp_path, "__prkb_catalog_zh_CN_0123.mo", 45, now)]
    kept = [_file(tmp_path, "__jinja2_prkb_html-en-abc_4567.cache", 20, now),
            _file(tmp_path, "__jinja2_0123.cache", 400, now),  # another program's
            _file(tmp_path, "notes.txt", 400, now)]
    (tmp_path / "__jinja2_prkb_dir").mkdir()  # not a file: left
    os.utime(tmp_path / "__jinja2_prkb_dir", (now - 90 * DAY, now - 90 * DAY))
    assert prune(tmp_path, now) == 2
    assert [p.exists() for p in old] == [False, False]
    assert all(p.exists() for p in kept) and (tmp_path / "__jinja2_prkb_dir").is_dir()
    # at most once a day: a file grown old since is left until the next day's clean-up
    late = _file(tmp_path, "__jinja2_prkb_x_89ab.cache", 60, now)
    assert prune(tmp_path, now + DAY / 2) == 0 and late.exists()
    assert prune(tmp_path, now + DAY + 1) == 1 and not late.exists()


def test_prune_never_raises(tmp_path: Path) -> None:
    assert prune(tmp_path / "missing") == 0
    (tmp_path / "ro").mkdir()
    _file(tmp_path / "ro", "__jinja2_prkb_a_0.cache", 90, time.time())
    os.chmod(tmp_path / "ro", 0o500)
    try:
        assert prune(tmp_path / "ro") in (0, 1)  # root may still delete; nothing raises
    finally:
        os.chmod(tmp_path / "ro", 0o700)


def test_a_template_read_from_the_cache_is_kept(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "page.j2").write_text("hello {{ x }}")
    folder = tmp_path / "cache"
    folder.mkdir()

    def env() -> jinja2.Environment:
        return jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path / "t")),
                                  bytecode_cache=KeptBytecodeCache(str(folder)))

    assert env().get_template("page.j2").render(x=1) == "hello 1"
    (made,) = [p for p in folder.iterdir() if p.name.startswith("__jinja2_prkb_")]
    long_ago = time.time() - 40 * DAY
    os.utime(made, (long_ago, long_ago))
    # a new process reads it from the folder: its time says it is in use again
    assert env().get_template("page.j2").render(x=2) == "hello 2"
    assert made.stat().st_mtime > time.time() - 60
    (folder / template_cache.MARKER).unlink()
    assert prune(folder) == 0 and made.exists()
