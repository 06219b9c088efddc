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


def test_report_render_compares_inline_and_include(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench("report_render").main(["-n", "12", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "ratio inline/include:" in out and "same text: True" in out
