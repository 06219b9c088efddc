"""One catalog workflow (issue #35): every message a template or a Python line says is in
``templates/locales/prkb.pot`` and in both catalogs, no catalog entry is one nothing says, and
the committed ``.pot`` is what a fresh extraction writes (``tests/catalog.py``, configured by
``templates/babel.cfg``).

A ``msgctxt "commit"`` entry (a report about a commit without a PR words the message so:
``render/i18n.SubjectCatalog``) is written by hand, never extracted: it is in use exactly when
its msgid is."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent

Key = tuple[str | None, str]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("prkb_catalog_script",
                                                  ROOT / "tests" / "catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


catalog = _script()


def _messages(path: Path) -> dict[Key, tuple[object, list[tuple[str, int]]]]:
    """(msgctxt, msgid) -> (the whole msgid, plural included; its places sorted)."""
    with path.open("rb") as fh:
        cat = read_po(fh, abort_invalid=True)
    return {(m.context, str(m.id[0] if isinstance(m.id, (list, tuple)) else m.id)):
            (m.id, sorted((f, int(n or 0)) for f, n in m.locations)) for m in cat if m.id}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's messages extracted now, written as a ``.pot`` in a temporary folder."""
    path = tmp_path_factory.mktemp("catalog") / "prkb.pot"
    catalog.write_pot(catalog.extract(ROOT), path)
    return path


def test_the_committed_pot_is_a_fresh_extraction(fresh: Path) -> None:
    """Messages and places (file:line) equal; the header is not compared, and holds no date
    that would change with every extraction."""
    want, got = _messages(fresh), _messages(ROOT / catalog.POT)
    assert len(want) > 500
    assert any(f.startswith("prkb/") for _id, places in want.values() for f, _n in places)
    hint = "stale templates/locales/prkb.pot: run python3 tests/catalog.py extract"
    assert sorted(k for k in want if k not in got) == [], hint
    assert sorted(k for k in got if k not in want) == [], hint
    assert {k: v for k, v in want.items() if got[k] != v} == {}, hint
    assert "POT-Creation-Date" not in fresh.read_text(encoding="utf-8")


@pytest.mark.parametrize("loc", ["en", "zh_CN"])
def test_every_message_in_use_is_in_the_catalog(fresh: Path, loc: str) -> None:
    entries = _messages(ROOT / catalog.CATALOGS[loc])
    missing = sorted(k[1] for k in _messages(fresh) if k not in entries)
    assert missing == [], f"add to {catalog.CATALOGS[loc]}: {missing}"


@pytest.mark.parametrize("loc", ["en", "zh_CN"])
def test_every_catalog_entry_is_in_use(fresh: Path, loc: str) -> None:
    used = _messages(fresh)
    unused = sorted(
        (ctx or "", msgid) for ctx, msgid in _messages(ROOT / catalog.CATALOGS[loc])
        if (ctx, msgid) not in used
        and not (ctx in catalog.SUBJECTS and (None, msgid) in used))
    assert unused == [], f"no template or Python line says these: {unused}"


def test_the_check_finds_nothing(fresh: Path) -> None:
    """The whole check: also translations, placeholders, en and zh_CN alike, rule words."""
    with fresh.open("rb") as fh:
        assert catalog.problems(ROOT, read_po(fh)) == []


def _po_entry(path: Path, entry: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n" + entry + "\n")


def test_the_check_bites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A copy of the tree with a new template message, a new Python message, a message no
    longer said, an entry for a commit whose msgid nothing says, a rule rewording a message
    nothing says and a Chinese text that drops a placeholder: ``check`` names each, exit 1."""
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    shutil.copytree(ROOT / "prkb", tmp_path / "prkb",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    en, zh = (tmp_path / catalog.CATALOGS[loc] for loc in ("en", "zh_CN"))

    (tmp_path / "templates" / "site" / "new.html").write_text(
        '<p>{{ _("A sentence no catalog holds yet") }}</p>\n', encoding="utf-8")
    (tmp_path / "prkb" / "site" / "extra.py").write_text(
        'from ..render.i18n import N_\n\nTITLE = N_("A title a constant keeps")\n',
        encoding="utf-8")
    feed = tmp_path / "prkb" / "site" / "feed.py"
    text = feed.read_text(encoding="utf-8")
    said = 'N_("prkb: weekly digests of %(symbol)s changes")'
    assert said in text
    feed.write_text(text.replace(said, '"prkb: weekly digests of %(symbol)s changes"'),
                    encoding="utf-8")
    for po in (en, zh):
        _po_entry(po, 'msgctxt "commit"\nmsgid "A sentence nothing says"\nmsgstr "x"')
    rules = tmp_path / "prkb" / "analyze" / "rules" / "other"
    rules.mkdir()
    (rules / "words.py").write_text('MESSAGES = {"A generic message nobody says": None}\n',
                                    encoding="utf-8")
    text = zh.read_text(encoding="utf-8")
    dropped = 'msgid "%(time)s (time zone unknown)"\nmsgstr "%(time)s（时区未知）"'
    assert dropped in text
    zh.write_text(text.replace(dropped, 'msgid "%(time)s (time zone unknown)"\n'
                                        'msgstr "（时区未知）"'), encoding="utf-8")

    assert catalog.main(["check", "--root", str(tmp_path)]) == 1
    found = capsys.readouterr().out.splitlines()
    pot, en_name, zh_name = catalog.POT, catalog.CATALOGS["en"], catalog.CATALOGS["zh_CN"]
    for name in (pot, en_name, zh_name):
        assert f"{name}: lacks 'A sentence no catalog holds yet' " \
               "(templates/site/new.html:1)" in found
        assert f"{name}: lacks 'A title a constant keeps' (prkb/site/extra.py:3)" in found
    gone = "'prkb: weekly digests of %(symbol)s changes'"
    assert f"{pot}: holds {gone}, which nothing says now" in found
    assert f"{en_name}: {gone} is not in use" in found
    assert f"{zh_name}: {gone} is not in use" in found
    assert f"{pot}: stale, run python3 tests/catalog.py extract" in found
    for name in (en_name, zh_name):
        assert f"{name}: msgctxt 'commit' msgid 'A sentence nothing says': its msgid is not " \
               "in use" in found
    assert ("prkb/analyze/rules/other/words.py: MESSAGES rewords "
            "'A generic message nobody says', which nothing says") in found
    assert f"{zh_name}: '%(time)s (time zone unknown)': placeholders ['%(time)s'] in " \
           "English, [] in Chinese" in found
    # the commit entries whose msgids are said, and the rule's real words, are not reported
    assert not [x for x in found if "msgctxt 'commit'" in x and "A sentence nothing" not in x]
    assert not [x for x in found if "cudagraph" in x]
