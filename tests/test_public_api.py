"""The public API: what ``prkb`` names resolves, every public function has a docstring, and
README's "Use it from Python" example runs as written."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import prkb

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_resolves_and_is_documented() -> None:
    assert set(prkb.__all__) == {"__version__", *prkb._API}
    for name in prkb.__all__:
        obj = getattr(prkb, name)
        if name == "__version__":
            continue
        assert inspect.getdoc(obj), f"prkb.{name} has no docstring"
    assert prkb.__doc__ and "import prkb" in prkb.__doc__


def test_import_prkb_loads_nothing_heavy() -> None:
    code = ("import sys, prkb; heavy = [m for m in ('networkx', 'jinja2', 'github', "
            "'prkb.store', 'prkb.site.build') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_public_functions_of_the_library_have_docstrings() -> None:
    """Every public function and method of the modules the API names has a docstring."""
    missing = []
    for module_name in sorted(set(prkb._API.values())):
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj) and not inspect.getdoc(obj):
                missing.append(f"{module_name}.{name}")
    assert missing == []


def test_the_readme_example_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    env = {k: v for k, v in os.environ.items() if k != "PRKB_DB"}
    r = subprocess.run([sys.executable, "-c", code.group(1)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    first, edges = r.stdout.strip().splitlines()[-2:]
    assert "47144" in first
    assert "fixes-regression-from pr:42885" in edges
    assert (tmp_path / "site-out" / "index.html").is_file()
    assert (tmp_path / "kb.sqlite").is_file()
