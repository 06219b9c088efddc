"""The report's implementation breakdown written in Python (prkb/render/implementation_items.py)
says what the section's template said, line for line, in every format and language."""

from __future__ import annotations

from typing import Any

import pytest
from markupsafe import Markup
from section_oracle import assert_same_text, sources

from prkb.profile import load_profile
from prkb.render import report
from prkb.render.implementation_items import ENUM_NAMES, SAID_ALONE
from prkb.render.sections.implementation import Implementation

# report/sections/implementation.j2 before it moved to Python (commit 5acaa21): the oracle
# the new code is held to, rendered by the same environment
OLD, NEW = sources("implementation_before.j2", "implementation.j2")

HOSTILE = '<script>alert("x")</script> & `code` **b** [a](javascript:x)'


def _side(i: int) -> dict[str, Any]:
    """One side of an effective-state change, of each kind the state sentence tells apart."""
    kinds = ("declared", "inherited", "init", "method", "stale", "no-builder", "unknown",
             "default")
    kind = kinds[i % len(kinds)]
    return {"kind": kind, "value": None if i % 9 == 4 else f"AttentionCGSupport.V{i}",
            "written": "_cg_support" if i % 3 == 0 else None,
            "via": ("__init__", "setup()", None)[i % 3], "from": f"Base{i}<b>",
            "origin_file": f"vllm/{HOSTILE}.py" if i % 4 == 0 else "vllm/a.py",
            "stale": ["_old_attr", "_older"], "raises": [("ValueError", "x < 0")] if i % 5 == 0
            else [], "reason": HOSTILE if i % 2 else None}


def _framework() -> list[dict[str, Any]]:
    """A framework change of every kind, the base's declaration with the reading site that
    reads the new spelling, another one, or none; with classes left behind or none."""
    base = {"class": f"Base{HOSTILE}", "file": "vllm/base.py", "new": "_new", "old": "_old"}
    out: list[dict[str, Any]] = [
        {**base, "kind": "base", "read": {"attr": "_new", "where": "vllm/r.py:3"},
         "left": ["A", HOSTILE], "restored": [{"by": "#7", "class": "A"},
                                              {"by": None, "class": "B"}]},
        {**base, "kind": "base", "read": {"attr": "_other", "where": "vllm/r.py:9"},
         "left": [], "restored": []},
        {**base, "kind": "base", "read": None, "left": ["C"], "restored": []},
    ]
    for kind in ENUM_NAMES:
        out.append({"kind": kind, "enum": f"Enum{HOSTILE}", "names": ["A", "B<i>"],
                    "left": ["X"], "restored": []})
    out.append({"kind": "levels-renamed", "enum": "Lv", "pairs": [("A", "B"), ("C", HOSTILE)],
                "left": [], "restored": []})
    out.append({"kind": "file", "file": f"vllm/{HOSTILE}.py", "additions": None,
                "deletions": 3, "what": {"en": HOSTILE, "zh": f"中文{HOSTILE}"},
                "left": ["Y"], "restored": []})
    out.append({"kind": "file", "file": "vllm/f.py", "additions": 4, "deletions": None,
                "what": {"en": "what", "zh": "什么"}, "left": [], "restored": []})
    out.append({"kind": "read-start", "new": "_new", "where": f"vllm/{HOSTILE}.py:1",
                "left": ["Z"], "restored": []})
    out.append({"kind": "read-spelling", "new": "_new", "old": "_old", "where": "vllm/x.py:2",
                "left": [], "restored": []})
    assert {x["kind"] for x in out} >= set(SAID_ALONE)
    return out


def _state(i: int) -> dict[str, Any]:
    framework = _framework()
    rotated = framework[i % len(framework):] + framework[:i % len(framework)]
    if i % 7 == 0:
        return {"known": False, "reason": "no-audit", "changes": [], "outside": 0,
                "framework": [], "framework_files": []}
    if i % 7 == 1:
        return {"known": False, "reason": "no-clone", "changes": [], "outside": 0,
                "framework": [], "framework_files": []}
    changes = [] if i % 7 == 2 else [
        {"class": f"Cls{j}{HOSTILE if j == 1 else ''}", "file": f"vllm/c{j}.py",
         "value": "_cudagraph_support", "before": _side(i + j), "after": _side(i + j + 3),
         "previous_file": "vllm/old.py" if j % 2 else None, "outside": j % 3 == 0}
        for j in range(i % 4 + 1)]
    return {"known": True, "reason": None, "changes": changes, "outside": 0,
            "framework": rotated[: i % 4], "framework_files": ["vllm/f.py"]}


def _changes(i: int) -> list[dict[str, Any]]:
    return [{"file": f"vllm/{HOSTILE if j == 0 else 'd'}.py",
             "before": None if (i + j) % 5 == 0 else "FULL",
             "after": "FULL" if (i + j) % 4 == 0 else "NEVER",
             "before_meaning": HOSTILE if j % 2 else "", "after_meaning": "full graphs",
             "conditional": (i + j) % 3 == 0} for j in range(i % 3)]


def _files(i: int) -> list[dict[str, Any]]:
    roles = ("declaration", "related-call", "test", "docs", "build", "core", "other")
    return [{"path": "vllm/f.py" if j == 2 else f"vllm/{HOSTILE if j == 3 else j}.py",
             "role": roles[(i + j) % len(roles)], "additions": j, "deletions": 2 * j}
            for j in range(i % 5)]


def _crafted(base_profile: dict[str, Any]) -> list[tuple[Implementation, dict[str, Any]]]:
    out = []
    for i in range(42):
        calls = [{"kind": ("added", "removed")[j % 2], "file": f"vllm/{HOSTILE}.py",
                  "class": None if j else "Cls", "name": "_cudagraph_support",
                  "line": f"x = {HOSTILE}"} for j in range(i % 3)]
        files = _files(i)
        tests = {"touched": [] if i % 4 == 0 else ["tests/a.py", f"tests/{HOSTILE}.py"],
                 "touched_more": i % 3, "commands": [] if i % 2 else
                 ["pytest tests/a.py", f"echo '{HOSTILE}'"]}
        impl = Implementation(state=_state(i), calls=calls, calls_more=i % 2 * 5,
                              files=files, files_more=None if i % 3 else {"count": 4,
                                                                          "lines": 99},
                              tests=tests)
        ctx = {"changes": _changes(i), "profile": base_profile,
               "pr": {"text": ("description", "paraphrase", "commit")[i % 3]}}
        out.append((impl, ctx))
    return out


def _cases(store: Any, lang: str, env: Any) -> list[dict[str, Any]]:
    profile = load_profile(None)
    out = []
    for p in store.all_prs():
        ctx = report.localize(report.report_facts(store, p["ref"], profile), lang, profile)
        out.append((ctx["implementation"], {"changes": ctx["changes"], "profile": ctx["profile"],
                                            "pr": {"text": ctx["pr"]["text"]}}))
    out += _crafted(out[0][1]["profile"])
    labels = env.globals["labels"]
    cases = []
    for n, (impl, ctx) in enumerate(out):
        words = {"holder": "backend" if n % 2 else "", "holders": "backends" if n % 2 else ""}
        cases.append({
            "implementation": impl, "changes": ctx["changes"],
            "change_lines": [f"change {j} {HOSTILE}" if n % 2 else Markup(f"<b>{j}</b>")
                             for j in range(len(ctx["changes"]))],
            "profile": ctx["profile"], "pr": ctx["pr"], "words": words,
            "HOLDER": words["holder"] or "class", "HOLDERS": words["holders"] or "classes",
            "colon": labels.colon,
        })
    return cases


@pytest.mark.parametrize("fmt", ["html", "md", "txt"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subject", ["", "commit"])
def test_implementation_is_what_the_template_wrote(bundled: Any, fmt: str, lang: str,
                                                   subject: str) -> None:
    env = report._report_env(lang, fmt, subject, "")
    cases = _cases(bundled, lang, env)
    assert len(cases) > 60
    want = assert_same_text(env, OLD, NEW, cases)
    c = cases[-1]
    got = env.globals["implementation_items"](
        c["implementation"], c["changes"], c["change_lines"], c["profile"], c["pr"]["text"],
        c["words"], c["HOLDER"], c["HOLDERS"])
    assert isinstance(got, Markup) == (fmt == "html")
    if fmt == "html":
        assert "<script>" not in want and "&lt;script&gt;" in want
