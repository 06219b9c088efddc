"""The structure ARCHITECTURE.md promises, checked on prkb's own source: SQL only in the
store, no private cross-module use, no import cycle, imports only downward, no dead code, and
every sentence of the templates written once; and in the tests, no test module importing
another."""

from __future__ import annotations

import ast
import collections
import re
from pathlib import Path

import pytest
import structure

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("title", list(structure.CHECKS))
def test_structure_rule_holds(title: str) -> None:
    found = structure.CHECKS[title]()
    assert found == [], f"{title}:\n" + "\n".join(found)


def test_the_checks_bite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule finds what it is meant to find in a small package of its own."""
    pkg = tmp_path / "prkb"
    (pkg / "store").mkdir(parents=True)
    (pkg / "analyze").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "store" / "__init__.py").write_text("from ..analyze import a\n")
    (pkg / "analyze" / "__init__.py").write_text("")
    (pkg / "analyze" / "a.py").write_text(
        "from ..store import Store\nfrom .b import _hidden\n"
        "def f(s):\n    return s.conn.execute('SELECT x FROM prs')\n"
    )
    (pkg / "analyze" / "b.py").write_text("from .a import f\ndef _hidden():\n    pass\n")
    (pkg / "render" / "sections").mkdir(parents=True)
    (pkg / "render" / "__init__.py").write_text("")
    (pkg / "render" / "long.py").write_text("def f():\n" + "    x = 1\n" * 80)
    (pkg / "render" / "short.py").write_text("def f():\n" + "    x = 1\n" * 79)
    (pkg / "render" / "sections" / "__init__.py").write_text("")
    (pkg / "render" / "sections" / "s.py").write_text("from ...store import Store\n")
    monkeypatch.setattr(structure, "ROOT", tmp_path)
    monkeypatch.setattr(structure, "PKG", pkg)
    assert any("SQL text" in x for x in structure.sql_outside_store())
    assert any(".conn" in x for x in structure.sql_outside_store())
    assert any("imports private _hidden" in x for x in structure.private_use())
    assert structure.import_cycles()  # a <-> b, and store <-> analyze
    assert any("store imports analyze" in x or "analyze imports store" in x
               for x in structure.upward_imports())
    long = structure.long_render_functions()
    assert len(long) == 1 and "long.py:1: f is 81 lines" in long[0]
    assert [x.split(": ")[-1] for x in structure.sections_read_the_store()] == [
        "imports prkb.store"]


def test_no_dead_code() -> None:
    """No function, method, class or import that nothing uses (vulture; names only
    frameworks and templates call are listed in tests/vulture_whitelist.py)."""
    vulture = pytest.importorskip("vulture")
    v = vulture.Vulture()
    v.scavenge([str(ROOT / "prkb"), str(ROOT / "tests"), str(ROOT / "bench")])
    kinds = ("function", "method", "class", "import")
    dead = [
        f"{item.filename}:{item.first_lineno}: unused {item.typ} {item.name}"
        for item in v.get_unused_code(min_confidence=60)
        if item.typ in kinds and "/prkb/" in str(item.filename)
    ]
    assert dead == [], "\n".join(dead)


_MESSAGE = re.compile(r"""(?:\b_|gettext|ngettext)\(\s*(["'])((?:(?!\1).)+)\1""")
_TRANS = re.compile(r"{%-?\s*trans\b[^%]*%}(.*?){%-?\s*endtrans", re.S)


def test_every_template_sentence_is_written_once() -> None:
    """A catalog sentence (five words or more) lives in one template; labels may repeat."""
    where: dict[str, set[str]] = collections.defaultdict(set)
    for path in (ROOT / "templates").rglob("*"):
        if not path.is_file() or path.suffix not in (".j2", ".html", ".txt"):
            continue
        text = path.read_text(encoding="utf-8")
        found = [m.group(2) for m in _MESSAGE.finditer(text)]
        found += [m.group(1) for m in _TRANS.finditer(text)]
        for msg in found:
            msg = " ".join(msg.split())
            if len(msg.split()) >= 5:
                where[msg].add(str(path.relative_to(ROOT)))
    twice = {m: sorted(p) for m, p in where.items() if len(p) > 1}
    assert len(where) > 50  # the scan reads the templates at all
    assert twice == {}


def _imported_test_modules(source: str) -> list[str]:
    """The ``test_*`` modules a test file imports: ``import test_x``, ``from test_x import``,
    ``from tests.test_x import``, ``from tests import test_x``, ``from .test_x import``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] in ("", "tests"):
                parts = parts[1:]
            if parts and parts[0].startswith("test_"):
                found.append(parts[0])
    return sorted(set(found))


def test_test_modules_share_fixtures_not_each_other() -> None:
    """Shared builders live in helper modules (tests/sitekb.py, tests/githistory.py, ...) or
    in conftest.py fixtures: no tests/test_*.py imports another one."""
    sample = ("import test_a\nfrom test_b import x\nfrom tests.test_c import y\n"
              "from tests import test_d, helper\nfrom . import test_e\nfrom gitrepo import git\n"
              "from prkb.test_like import z\n")
    assert _imported_test_modules(sample) == ["test_a", "test_b", "test_c", "test_d", "test_e"]
    modules = sorted((ROOT / "tests").glob("test_*.py"))
    assert len(modules) > 40
    wrong = [f"{p.name} imports {', '.join(m)}" for p in modules
             if (m := _imported_test_modules(p.read_text(encoding="utf-8")))]
    assert wrong == []


def test_catalogs_are_valid_and_complete() -> None:
    """Both Babel catalogs parse strictly (a broken entry fails here, not as a warning in a
    command's output) and hold the same messages, every zh one translated."""
    from babel.messages.pofile import read_po

    cats = {}
    for lang in ("en", "zh_CN"):
        path = ROOT / "templates" / "locales" / lang / "LC_MESSAGES" / "prkb.po"
        with path.open("rb") as fh:
            cats[lang] = read_po(fh, abort_invalid=True)
    ids = {lang: {m.id for m in cat if m.id} for lang, cat in cats.items()}
    assert ids["en"] == ids["zh_CN"]
    untranslated = [m.id for m in cats["zh_CN"] if m.id and not m.string]
    assert untranslated == []
