"""The report's risks and impact written in Python (prkb/render/risks_items.py) say what the
section's template said, line for line, in every format and language, with the profile's own
wording and without it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from markupsafe import Markup
from section_oracle import assert_same_text, sources

from prkb.analyze.scope import Effect
from prkb.profile import load_profile
from prkb.render import report
from prkb.render.risks_items import BASIS, CLASS_ONLY, PAYS_AUDIT, READINGS
from prkb.render.sections.risks import Risks

# report/sections/risks.j2 before its list moved to Python (commit 7f806b0): the oracle the
# new code is held to, rendered by the same environment (catalog, filters, formatter, labels)
OLD, NEW = sources("risks_before.j2", "risks.j2")

HOSTILE = '<script>alert("x")</script> & `code` **b** [a](javascript:x)'
REASONS = ("condition-shift", "more-batches-captured", "correctness-risk", "correctness-fix",
           "fewer-batches-captured", "same-as-default", "no-gain-not-ready", "left-stale",
           "new-holder", "new-builder", "class-removed", *CLASS_ONLY, "kind-no-effect",
           "bool-value", "expression", "a-reason-nobody-wrote")


def _effects() -> list[dict[str, Any]]:
    """An effect of every reason, audit reading, basis and party, some with a condition,
    some with values missing; the class, condition and values written to break out."""
    out = []
    bases = (*BASIS, "declared", "no-such-basis")
    audits = (*PAYS_AUDIT, None, "unheard-of")
    for i, reason in enumerate(REASONS):
        noted = reason in ("more-batches-captured", "correctness-fix",
                           "fewer-batches-captured", "no-gain-not-ready")
        for j, audit in enumerate(audits if reason == "correctness-risk" else
                                  bases if noted else (None,)):
            when = HOSTILE if (i + j) % 3 == 0 else None
            e = Effect(builder=f"Builder{i}<b>", party="rule-users" if (i + j) % 2 else
                       "backend-users", side="gains", reason=reason,
                       basis=bases[(i + j) % len(bases)] if not noted else str(audit),
                       audit=None if noted else audit, file=f"f{i}.py",
                       when=when, unless="x & y" if when else None,
                       level_before=None if i % 4 == 0 else "UNIFORM_BATCH",
                       level_after=None if i % 5 == 0 else "ALWAYS",
                       from_class=None if i % 2 else "Base<i>", from_file=f"b{i}.py",
                       stale_attr=None if i % 3 else "_old_attr")
            out.append({**vars(e), "before": None if j % 2 else "NEVER",
                        "after": None if i % 6 == 0 else f"ALWAYS {HOSTILE}"})
    return out


def _crafted(lang: str) -> list[Risks]:
    effects = _effects()
    tags = [{"code": c, "details": d} for c, d in (
        ("core-path", ["vllm/a.py", HOSTILE]), ("missing-tests", []),
        ("platform-specific", ["CUDA", HOSTILE]), ("level-raised", ["A: NEVER -> ALWAYS"]),
        ("made-up-tag", [HOSTILE]))]
    findings = [
        {"rule": "r1", "file": "a.py", "class": "A<b>", "message": HOSTILE, "commit": "c",
         "fixed_by": {"ref": "pr:9", "number": 9, "commit": "abc", "date": "2025-03-01T00:00:00Z"}},
        {"rule": "r2", "file": HOSTILE, "class": "B", "message": "m", "commit": "c",
         "fixed_by": {"ref": "commit:x", "number": None, "commit": "0123456789abcdef0",
                      "date": None}},
        {"rule": "r3", "file": "c.py", "class": "C", "message": "", "commit": "c",
         "fixed_by": None},
    ]
    readings = [{"state": s, "classes": ["A", HOSTILE], "levels": ["ALWAYS"]}
                for s in (*READINGS, "unchecked", "what")]
    full = Risks(
        tags=tags,
        core_rule={"applies": True, "files": ["vllm/v1/attention/backends/utils.py"],
                   "prefixes": ["vllm/v1/attention/", "x<y"], "why": f"because {HOSTILE}"},
        core_paths=["vllm/v1/attention/backends/utils.py", HOSTILE],
        platforms=["CUDA", f"ROCm {HOSTILE}"], portable="Python", title_platforms=["TPU"],
        features=[{"name": "x", "where": ["title", "body"], "label": f"spec {HOSTILE}"},
                  {"name": "y", "where": [], "label": "full graphs"}],
        builders=[
            {"class_name": "FlashBuilder", "file": "vllm/flash.py", "platforms": ["CUDA"],
             "effects": effects[: len(effects) // 2], "holder": True},
            {"class_name": HOSTILE, "file": HOSTILE, "platforms": [],
             "effects": effects[len(effects) // 2:], "holder": False},
            {"class_name": "Quiet", "file": "q.py", "platforms": ["CUDA", "ROCm"],
             "effects": [], "holder": True},
        ],
        findings=findings, readings=readings)
    return [
        full,
        dataclasses.replace(full, builders=[], tags=[], findings=[], readings=[],
                            core_rule={**full.core_rule, "applies": False}, core_paths=[],
                            platforms=[], portable=None, title_platforms=[], features=[]),
        dataclasses.replace(full, platforms=[], title_platforms=[]),
        dataclasses.replace(full, portable=None, findings=[]),
    ]


WORDS = {"raise_gain": "more batches {before} → {after} <i>", "raise_risk": "{cls} may break",
         "lower_gain": "{cls}: {before}/{after} & safe", "lower_cost": "slower <b>",
         "core_tag": "every backend & more", "holder": "builder", "holders": "builders"}


def _cases(store: Any, lang: str) -> list[tuple[Risks, str, dict[str, Any]]]:
    """Every bundled PR's risks as its report reads them, then the crafted ones, each with
    the profile's wording and with none, and with and without audit rules."""
    profile = load_profile(None)
    out = []
    for p in store.all_prs():
        ctx = report.localize(report.report_facts(store, p["ref"], profile), lang, profile)
        out.append((ctx["risks"], ctx["pr"]["text"], ctx["profile"]))
    base = out[0][2]
    blank = {k: "" for k in base["wording"]}
    for risks in _crafted(lang):
        for text in ("description", "commit", "paraphrase"):
            out.append((risks, text, {**base, "wording": {**blank, **WORDS}}))
        out.append((risks, "description", {**base, "wording": blank, "rules": ""}))
    return out


@pytest.mark.parametrize("fmt", ["html", "md", "txt"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subject", ["", "commit"])
def test_risks_are_what_the_template_wrote(bundled: Any, fmt: str, lang: str,
                                           subject: str) -> None:
    env = report._report_env(lang, fmt, subject, "")
    cases = _cases(bundled, lang)
    assert len(cases) > 60
    say = env.globals["_"]
    contexts = [{"risks": risks, "pr": {"text": text}, "profile": profile,
                 "words": profile["wording"], "colon": env.globals["labels"].colon,
                 "HOLDER": profile["wording"]["holder"] or say("class"),
                 "HOLDERS": profile["wording"]["holders"] or say("classes")}
                for risks, text, profile in cases]
    want = assert_same_text(env, OLD, NEW, contexts)
    got = env.globals["risks_items"](cases[-1][0], cases[-1][1], cases[-1][2], "class",
                                     "classes")
    assert isinstance(got, Markup) == (fmt == "html")
    if fmt == "html":  # the crafted text is escaped, never markup
        assert "<script>" not in want and "&lt;script&gt;" in want


def test_every_reason_is_said(bundled: Any) -> None:
    """The crafted effects reach every sentence: none falls to the last branch unless it is
    an expression or a reason nobody wrote."""
    env = report._report_env("en", "md", "", "")
    risks = _crafted("en")[0]
    profile = {**_cases(bundled, "en")[0][2]}
    out = str(env.globals["risks_items"](risks, "description", profile, "class", "classes"))
    assert out.count("is an expression") == 2
    for needle in ("Compared with the base class's default", "now inherits", "inherited before",
                   "did not change itself", "declared a spelling", "effective values at",
                   "flags", "meeting its rule, so that risk", "does not apply to it",
                   "has not checked it", "is left on", "for the first time", "is a new class",
                   "no longer exists", "keeps its value", "run-time conditions",
                   "maps no bool", "Effect not said", "where ``<script>"):
        assert needle in out, needle
