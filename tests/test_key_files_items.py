"""The report's key files written in Python (prkb/render/key_files_items.py) say what the
section's template said, line for line, in every format and language."""

from __future__ import annotations

from typing import Any

import pytest
from markupsafe import Markup
from section_oracle import assert_same_text, sources

from prkb.profile import load_profile
from prkb.render import report
from prkb.render.sections.key_files import KeyFiles

OLD, NEW = sources("key_files_before.j2", "key_files.j2")
HOSTILE = '<script>alert("x")</script> & `code` **b** [a](javascript:x)'


def _files() -> list[dict[str, Any]]:
    """A file of every role, category and type the labels know, with a module or none,
    symbols or none, and hostile paths, modules and symbols."""
    roles = ("declaration", "test", "docs", "build", "core", "related-call", "other")
    categories = ("source", "test", "docs", "build")
    types = ("core-logic", "config", "supporting", "test", "docs", "build")
    return [{"path": f"vllm/{i}/{HOSTILE if i % 4 == 0 else 'x'}.py",
             "module": None if i % 3 == 0 else f"vllm.m{i}<b>",
             "category": categories[i % len(categories)], "type": types[i % len(types)],
             "symbols": [] if i % 5 == 0 else [f"Sym{i}", HOSTILE][: 1 + i % 2],
             "role": roles[i % len(roles)], "additions": i * 3, "deletions": i}
            for i in range(14)]


def _cases(store: Any, lang: str) -> list[tuple[KeyFiles, dict[str, Any]]]:
    profile = load_profile(None)
    out = []
    for p in store.all_prs():
        ctx = report.localize(report.report_facts(store, p["ref"], profile), lang, profile)
        out.append((ctx["key_files"], ctx["profile"]))
    base = out[0][1]
    files, more = _files(), {"count": 7, "lines": 1234}
    for kind in ("level", "enum", "value"):
        prof = {**base, "kind": kind}
        out += [(KeyFiles(files=files, more=None), prof), (KeyFiles(files=files, more=more), prof),
                (KeyFiles(files=[], more=more), prof), (KeyFiles(files=[], more=None), prof)]
    return out


@pytest.mark.parametrize("fmt", ["html", "md", "txt"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subject", ["", "commit"])
def test_key_files_are_what_the_template_wrote(bundled: Any, fmt: str, lang: str,
                                               subject: str) -> None:
    env = report._report_env(lang, fmt, subject, "")
    cases = _cases(bundled, lang)
    assert len(cases) > 60
    want = assert_same_text(env, OLD, NEW, [
        {"key_files": kf, "profile": prof, "colon": env.globals["labels"].colon}
        for kf, prof in cases])
    got = env.globals["key_files_items"](cases[-3][0], cases[-3][1])
    assert isinstance(got, Markup) == (fmt == "html")
    if fmt == "html":
        assert "<script>" not in str(got) and "&lt;script&gt;" in str(got)
    assert want.endswith("\n")
