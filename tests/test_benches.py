"""The benches run: each one's measured code path, on a small generated knowledge base (a
bench that breaks with the code it measures is found here, not on the day it is needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from prkb.store import Store

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))  # the benches import each other (site_build.populate)
    try:
        spec = importlib.util.spec_from_file_location(f"prkb_bench_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("bench") / "kb.sqlite"
    with Store(path) as store:
        _bench("site_build").populate(store, 40)
    return str(path)


def test_page_instructions_renders_what_callgrind_counts(kb: str) -> None:
    """The child that callgrind runs: a few PR pages and a digest page, no valgrind needed."""
    bench = _bench("page_instructions")
    bench.child(kb, "pr", 1)
    bench.child(kb, "baseline", 1)


def test_build_instructions_counts_every_process_of_a_whole_build(
        kb: str, tmp_path: Path) -> None:
    """``--kinds build``: the whole build runs as a process under the given valgrind, and the
    counts of the files callgrind writes (one per process, and the parts a process dumped
    before each fork, so that a forked worker does not count its parent's work again) are
    summed. A stand-in for valgrind (a new machine may not have it) runs the command and
    writes three such files, if it was asked to dump before a fork."""
    fake = tmp_path / "valgrind"
    fake.write_text(
        "#!" + sys.executable + "\n"
        "import os, subprocess, sys\n"
        "args = sys.argv[1:]\n"
        "out = next(a for a in args if a.startswith('--callgrind-out-file='))\n"
        "pattern = out.split('=', 1)[1]\n"
        "cmd = args[next(i for i, a in enumerate(args) if not a.startswith('--')):]\n"
        "assert '--dump-before=fork' in args, args\n"
        "rc = subprocess.run(cmd).returncode\n"
        "for pid, n in (('1', 1000), ('1.1', 4000), ('2', 234)):\n"
        "    open(pattern.replace('%p', pid), 'w').write(f'events: Ir\\nsummary: {n}\\n')\n"
        "sys.exit(rc)\n", encoding="utf-8")
    fake.chmod(0o755)
    total, pages = _bench("page_instructions").build_instructions(str(fake), kb)
    assert total == 5234 and pages > 40


def test_report_render_compares_inline_and_include(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench("report_render").main(["-n", "12", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "ratio inline/include:" in out and "same text: True" in out


def test_site_bench_builds_each_run_into_a_folder_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """No timed build writes right after a deletion: each run has its own folder, and a kept
    work folder ends with the last run's site as ``site`` (a previous invocation's outputs
    deleted at the end, not before a run)."""
    bench = _bench("site_build")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "old.html").write_text("old")
    (tmp_path / "site-1-2-0").mkdir()  # an interrupted invocation's run
    argv = ["-n", "30", "--runs", "2", "--edits", "1", "--no-hugo", "--no-search",
            "--keep", str(tmp_path)]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("full build run") == 2 and "one-PR rebuild:" in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["site"]
    assert (tmp_path / "site" / "en" / "index.html").is_file()
    assert not (tmp_path / "site" / "old.html").exists()


def test_keep_last_keeps_the_last_public_of_each_hugo_tree(tmp_path: Path) -> None:
    bench = _bench("site_build")
    for name in ("site-7-0", "site-7-1", "site-7-10", "hugo-7/public-1", "hugo-7/public-10",
                 "hugo-same-7/public-2", "hugo-same-7/content", "hugo-3/public-0"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "page.html").write_text(name)
    bench._keep_last(tmp_path, "7")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hugo", "hugo-same", "site"]
    assert (tmp_path / "site" / "page.html").read_text() == "site-7-10"
    assert sorted(p.name for p in (tmp_path / "hugo").iterdir()) == ["public"]
    assert (tmp_path / "hugo" / "public" / "page.html").read_text() == "hugo-7/public-10"
    assert sorted(p.name for p in (tmp_path / "hugo-same").iterdir()) == ["content", "public"]
