"""A bool declaration (old vLLM: ``full_cudagraph_supported: ClassVar[bool] = True``) is not
a level: the profile maps no bool to a level (``bool_spellings``), so every output shows it as
the spelling and its value, never as a level named "True" or "False"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder

from prkb.cli import main
from prkb.profile import load_profile
from prkb.site.build import build_site
from prkb.site.gather import builder_slug
from prkb.store import Store

PROFILE = load_profile(None)
UTILS = "vllm/v1/attention/backends/utils.py"
FA = "vllm/v1/attention/backends/flash_attn.py"
FA_CLS = "FlashAttentionMetadataBuilder"
SHOWN = "full_cudagraph_supported = True"


def _utils(decl: str) -> str:
    return ("import enum\nfrom typing import ClassVar\n\n\n"
            "class AttentionCGSupport(enum.Enum):\n    NEVER = 0\n"
            "    UNIFORM_SINGLE_TOKEN_DECODE = 1\n    UNIFORM_BATCH = 2\n    ALWAYS = 3\n\n\n"
            f"class AttentionMetadataBuilder:\n    {decl}\n")


def _fa(decl: str) -> str:
    return ("from vllm.v1.attention.backends.utils import (\n"
            "    AttentionCGSupport, AttentionMetadataBuilder)\n\n\n"
            f"class {FA_CLS}(AttentionMetadataBuilder):\n    {decl}\n")


@pytest.fixture
def bool_kb(tmp_path: Path) -> tuple[GitRepoBuilder, Path, list[str]]:
    """A repository whose first commit declares bools and whose second makes them levels,
    collected into a knowledge base."""
    r = GitRepoBuilder.init(tmp_path / "src")
    shas = [
        r.commit({UTILS: _utils("full_cudagraph_supported: ClassVar[bool] = False"),
                  FA: _fa("full_cudagraph_supported: ClassVar[bool] = True")},
                 "[Core] full cudagraph flag (#1)"),
        r.commit({UTILS: _utils("attn_cudagraph_support = AttentionCGSupport.NEVER"),
                  FA: _fa("attn_cudagraph_support = "
                          "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE")},
                 "[Core] a level instead of the flag (#2)"),
    ]
    db = tmp_path / "kb.sqlite"
    assert main(["--db", str(db), "collect", "git", str(r.path), "-q"]) == 0
    return r, db, shas


def _bare_bool(cell: str) -> bool:
    return re.fullmatch(r"`?(True|False)`?( \(dynamic.*\))?", cell.strip()) is not None


def test_matrix_history_shows_a_bool_as_its_spelling_and_value(bool_kb, capsys) -> None:
    _, db, _ = bool_kb
    capsys.readouterr()
    assert main(["--db", str(db), "matrix", "--history"]) == 0
    rows = [ln.split(" | ") for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| `")]
    levels = {(r[0].strip("| `"), r[5]) for r in rows}
    assert (FA_CLS, SHOWN) in levels
    assert (FA_CLS, "UNIFORM_SINGLE_TOKEN_DECODE") in levels
    assert not [r for r in rows if _bare_bool(r[5])], rows


def test_matrix_at_a_revision_shows_a_bool_as_its_spelling_and_value(bool_kb, capsys) -> None:
    r, _, shas = bool_kb
    capsys.readouterr()
    assert main(["matrix", str(r.path), "--rev", shas[0]]) == 0
    rows = [ln.split(" | ") for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| ") and FA_CLS in ln]
    assert rows and rows[0][1] == f"`{SHOWN}`", rows
    assert rows[0][5] == f"`{SHOWN}`"  # the Declared column
    assert not [x for x in rows if _bare_bool(x[1]) or _bare_bool(x[5])]


def test_timeline_shows_a_bool_as_its_spelling_and_value(bool_kb, capsys) -> None:
    _, db, _ = bool_kb
    capsys.readouterr()
    assert main(["--db", str(db), "timeline", FA_CLS]) == 0
    out = capsys.readouterr().out
    effective = out.split("effective level at collected commits:", 1)[1]
    assert f"declared {SHOWN}, effective {SHOWN}" in effective
    assert "effective True" not in out and "declared True" not in out


def test_site_shows_a_bool_as_its_spelling_and_value_not_as_an_expression(
    bool_kb, tmp_path: Path
) -> None:
    _, db, _ = bool_kb
    with Store(db) as store:
        build_site(store, tmp_path / "site", PROFILE, search=False)
    page = (tmp_path / "site" / "en" / "builder" / f"{builder_slug(FA, FA_CLS)}.html").read_text()
    runs = page.split('<ol class="runs">', 1)[1].split("</ol>", 1)[0]
    badges = re.findall(r'<span class="badge ([^"]+)" title="[^"]*">([^<]*)</span>', runs)
    assert ("lvl-bool", SHOWN) in badges, badges
    assert not [b for b in badges if b[1] in ("True", "False") or b[0] == "lvl-cond"]
    # the chart's point and the matrix's bar say it the same way
    assert "<title>2" in page and f" {SHOWN}" in page.split("<svg", 1)[1].split("</svg>", 1)[0]
    matrix = (tmp_path / "site" / "en" / "matrix.html").read_text()
    assert SHOWN in matrix and "lvl-bool" in matrix
    assert "full_cudagraph_supported" in matrix.split('<ul class="legend">', 1)[1].split(
        "</ul>", 1)[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_report_names_the_bool_spelling_wherever_it_gives_a_bool(tmp_path: Path,
                                                                     lang: str) -> None:
    """A bool raised (``False`` -> ``True``) is said with its spelling where the report
    gives the values alone (who gains, the level-raised tag's evidence), as the change
    sentence says it (`full_cudagraph_supported` raised from `False` to `True`)."""
    from kbrecords import change, record

    from prkb.ingest import ingest
    from prkb.render.report import render_report

    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, record(5, "[Perf] enable full graphs", "2026-01-05T00:00:00Z",
                          changes=[change("full_cudagraph_supported", "False", "True",
                                          "raised")]), PROFILE)
        out = render_report(st, "5", lang=lang, fmt="md", profile=PROFILE)
    bare = [ln for ln in out.splitlines()
            if re.search(r"(?<![=\w] )`?\b(True|False)\b`?", ln)
            and "full_cudagraph_supported" not in ln]
    assert bare == [], bare
    assert "`full_cudagraph_supported = False` → `full_cudagraph_supported = True`" in out
    assert "FooBuilder: full_cudagraph_supported = False -> full_cudagraph_supported = True" in out
