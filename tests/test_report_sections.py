"""The report as typed sections: a PR's facts read once (``PrFacts``), each section a small
dataclass built from them alone, worded by its own template and renderable alone."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest

from prkb.errors import InputError
from prkb.paths import templates_dir
from prkb.profile import load_profile
from prkb.render import prfacts
from prkb.render.prfacts import PrFacts, read_pr
from prkb.render.report import localize, render_context, report_context, report_facts
from prkb.render.sections import (
    ORDER,
    header,
    implementation,
    key_code,
    key_files,
    motivation,
    related,
    review,
    risks,
    summary,
)
from prkb.store import Store
from tests.report_helpers import add, decl_patch, record, seeded_store

BUILDERS = {"header": header, "summary": summary, "motivation": motivation,
            "implementation": implementation, "key_files": key_files, "key_code": key_code,
            "review": review, "risks": risks, "related": related}
FILE = "vllm/v1/attention/backends/x_attn.py"


@pytest.fixture()
def store(tmp_path: Path):
    s = seeded_store(tmp_path)
    # a lowering without a test, mentioning a seeded PR, with one review comment
    add(s, record(
        70001, title="[Bugfix] XBuilder claims too much",
        body="## Purpose\nXBuilder cannot replay mixed batches; see #47144.\n",
        files=[{"filename": FILE, "status": "modified", "additions": 1, "deletions": 1,
                "patch": decl_patch("XMetadataBuilder", "UNIFORM_BATCH",
                                    "UNIFORM_SINGLE_TOKEN_DECODE")}],
        comments=[{"user": {"login": "reviewer"}, "body": "Why not keep UNIFORM_BATCH?",
                   "created_at": "2026-03-01T09:00:00Z"}],
    ))
    yield s
    s.close()


def test_every_section_is_a_frozen_dataclass_built_from_the_facts_alone(store: Store) -> None:
    f = read_pr(store, 70001, load_profile())
    store.close()  # a section reads the facts, never the store
    built = {name: BUILDERS[name].build(f) for name in ORDER}
    for name, section in built.items():
        assert dataclasses.is_dataclass(section), name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(section, dataclasses.fields(section)[0].name, None)
    # what each says, from the record above
    assert built["header"].pr["number"] == 70001 and built["header"].pr["text"] == "description"
    assert built["summary"].classes == ["XMetadataBuilder"]
    assert built["summary"].action == "lowered-add-test"  # a lowering, no test file
    assert built["motivation"].has_body and built["motivation"].sections[0]["kind"]
    assert [x["path"] for x in built["key_files"].files] == [FILE]
    assert built["key_files"].more is None
    assert [x["path"] for x in built["implementation"].files] == [FILE]
    assert built["implementation"].tests["touched"] == []
    assert [b["kind"] for b in built["key_code"].blocks] == ["excerpt"]
    assert [t["kind"] for t in built["review"].topics] == ["conversation"]
    assert "missing-tests" in [t["code"] for t in built["risks"].tags]
    assert [m["number"] for m in built["related"].mentions] == [47144]


def test_the_facts_of_a_pr_are_read_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = store.pr_row_and_facts

    def counting(ref: Any) -> Any:
        calls.append(ref)
        return real(ref)

    monkeypatch.setattr(store, "pr_row_and_facts", counting)
    facts = report_facts(store, 70001, load_profile())
    assert calls == [70001]
    # and each language's context is made from them without reading again
    for lang in ("zh", "en"):
        ctx = localize(facts, lang, load_profile())
        assert set(ORDER) <= set(ctx) and ctx["lang"] == lang
    assert calls == [70001]


def test_the_report_is_its_sections_in_order(store: Store) -> None:
    """Rendered one at a time, the sections make the whole report (HTML: not tidied)."""
    for lang in ("zh", "en"):
        ctx = report_context(store, 70001, lang)
        whole = render_context(ctx, "html")
        parts = [render_context(ctx, "html", (name,)) for name in ORDER]
        assert all(parts) and "".join(parts) == whole
        # a section alone says its own heading and no other's
        risks_only = render_context(ctx, "md", ("risks",))
        heading = "## 风险与影响" if lang == "zh" else "## Risks and impact"
        assert risks_only.startswith(heading) and risks_only.count("\n## ") == 0


def test_each_section_has_its_template_and_report_j2_only_orders_them() -> None:
    folder = templates_dir() / "report" / "sections"
    assert sorted(p.stem for p in folder.glob("*.j2")) == sorted(ORDER)
    main = (templates_dir() / "report" / "report.j2").read_text(encoding="utf-8")
    # no heading and no sentence of a section in the ordering template
    assert "F.h2" not in main and "F.h1" not in main
    assert main.count('_("') == 3  # unknown, and the generic words for the profile's classes


def test_an_unknown_section_is_refused_with_its_name(store: Store) -> None:
    ctx = report_context(store, 70001, "en")
    with pytest.raises(InputError, match=r"'risk'.*header, summary"):
        render_context(ctx, "md", ("risk",))


def test_a_changed_fact_reaches_only_the_sections_that_say_it(store: Store) -> None:
    """PrFacts is the one input: the same facts with another recommended action's input
    (a test file added) change the summary and the risks, not the review or the related."""
    profile = load_profile()
    f = read_pr(store, 70001, profile)
    tested = dataclasses.replace(
        f, risk_tags=[t for t in f.risk_tags if t.code != "missing-tests"],
        facts={**f.facts, "risk_tags": [t for t in f.facts["risk_tags"]
                                        if t["code"] != "missing-tests"]})
    assert summary.build(tested).action == "lowered"
    assert "missing-tests" not in [t["code"] for t in risks.build(tested).tags]
    assert review.build(tested) == review.build(f)
    assert related.build(tested) == related.build(f)
    assert isinstance(f, PrFacts) and prfacts.KEY_FILES == 15


def test_the_sections_are_written_into_the_report_template(tmp_path: Path) -> None:
    """``SectionsInline`` hands out report.j2 with each section's template written in, in
    order, under its name's guard; a changed section file makes the template out of date."""
    import jinja2

    from prkb.render.report import REPORT, SectionsInline

    root = tmp_path / "templates"
    (root / "report" / "sections").mkdir(parents=True)
    main = (templates_dir() / "report" / "report.j2").read_text(encoding="utf-8")
    (root / "report" / "report.j2").write_text(main, encoding="utf-8")
    for name in ORDER:
        (root / "report" / "sections" / f"{name}.j2").write_text(f"<{name}>\n",
                                                                  encoding="utf-8")
    loader = SectionsInline(jinja2.FileSystemLoader(str(root)))
    env = jinja2.Environment(loader=loader, trim_blocks=True, keep_trailing_newline=True)
    source, _file, uptodate = loader.get_source(env, REPORT)
    assert "{% include" not in source and source.count("{% if ") >= len(ORDER)
    assert uptodate is not None and uptodate()
    section = root / "report" / "sections" / "risks.j2"
    section.write_text("<risks, changed>\n", encoding="utf-8")
    stat = section.stat()
    os.utime(section, (stat.st_atime, stat.st_mtime + 5))
    assert not uptodate()
    # what the loop of includes says, the inlined sections say: in order, or only those asked
    template = env.from_string(loader.get_source(env, REPORT)[0])
    ctx = {"changes": [], "pr": {"number": 1}, "labels": {"colon": ": "},
           "profile": {"wording": {}}, "sentences": {"changes": {"change": None}},
           "_": lambda s: s}
    whole = template.render(ctx, section_order=ORDER)
    assert re.findall(r"<(\w+)", whole) == list(ORDER) and "<risks, changed>" in whole
    assert template.render(ctx, section_order=("summary",)) == "<summary>\n"
