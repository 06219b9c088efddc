"""Scope and impact facts (prkb.analyze.scope) from synthetic records and changes."""

from __future__ import annotations

from typing import Any

from prkb.analyze import scope as s
from prkb.models import Finding, SymbolChange
from prkb.profile import load_profile

P = load_profile()
RULE = P.audit["rule"]
BACKENDS = "vllm/v1/attention/backends/"


def rec(title: str = "", body: str = "", labels: tuple[str, ...] = (),
        files: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"title": title, "body": body, "labels": [{"name": x} for x in labels],
            "files": [{"filename": f} for f in files]}


def ch(direction: str, before: str | None, after: str | None, cls: str = "DemoBuilder",
       file: str = BACKENDS + "rocm_demo.py") -> SymbolChange:
    return SymbolChange(file, cls, "_cudagraph_support", before, after, direction)


def test_features_are_words_with_where_they_were_found() -> None:
    r = rec(title="[MTP] faster drafts", body="Runs with deepseek and EAGLE3 drafts.",
            labels=("speculative-decoding",))
    got = {f.name: f.where for f in s.features_of(r, P)}
    assert got == {"MTP": ("title",), "EAGLE": ("body",), "speculative decoding": ("labels",),
                   "DeepSeek": ("body",)}
    assert s.features_of(rec(body="mail goes through SMTP"), P) == ()


def test_features_are_found_where_each_features_own_scan_finds_them() -> None:
    """Terms that overlap, nest or repeat (one feature's term inside another's): a feature is
    found where a search with its own pattern finds it, whatever the other features' terms."""
    import dataclasses
    import random

    prof = dataclasses.replace(P, features={
        "A": ("spec", "spec decode"), "B": ("decode", "c dec"), "C": ("MTP",),
        "D": ("e-d", "spec_decode"), "E": ()})
    words = ["spec", "decode", "spec decode", "specdecode", "MTP", "SMTP", "MTPs", "c dec",
             "e-d", "spec_decode", "_spec", "x", " ", "-", "\n"]
    rng = random.Random(7)
    for _ in range(400):
        texts = ["".join(rng.choice(words) for _ in range(rng.randrange(0, 8)))
                 for _ in range(3)]
        r = rec(title=texts[0], body=texts[1], labels=(texts[2],) if texts[2] else ())
        places = {"title": texts[0], "body": texts[1], "labels": texts[2]}
        want = {}
        for name, terms in prof.features.items():
            if terms:
                where = tuple(k for k, t in places.items() if s._terms_pattern(terms).search(t))
                if where:
                    want[name] = where
        assert {f.name: f.where for f in s.features_of(r, prof)} == want, texts


def test_platforms_by_where_they_were_recognised() -> None:
    r = rec(title="[ROCm] fix", files=(BACKENDS + "mla/triton_demo.py",))
    assert s.platforms_of(r, P) == (s.PlatformFact("portable", "portable"),
                                    s.PlatformFact("rocm", "title"))
    r = rec(files=(BACKENDS + "mla/rocm_demo.py", "tests/test_demo.py"))
    assert s.platforms_of(r, P) == (s.PlatformFact("rocm", "code"),)


def test_raise_into_uniform_batch_gains_and_pays_for_spec_decode_users() -> None:
    c = ch("raised", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH")
    gains, pays = s.effects_of(c, P, [], {("DemoBuilder", c.file): True})
    assert (gains.side, gains.reason, gains.party) == (s.GAINS, "more-batches-captured",
                                                       s.RULE_USERS)
    assert (pays.side, pays.reason, pays.audit) == (s.PAYS, "correctness-risk", "ready")
    finding = Finding(RULE, c.file, "DemoBuilder", "m", "m")
    assert s.effects_of(c, P, [finding], {})[1].audit == "finding"
    assert s.effects_of(c, P, [], {})[1].audit == "not-checked"
    assert s.effects_of(c, P, [], {("DemoBuilder", c.file): False})[1].audit == "not-ready"


def test_raise_below_the_flag_levels_is_for_backend_users_without_audit() -> None:
    c = ch("raised", "NEVER", "UNIFORM_SINGLE_TOKEN_DECODE")
    gains, pays = s.effects_of(c, P, [], {})
    assert gains.party == s.BACKEND_USERS and pays.audit is None


def test_lowering_is_the_reverse() -> None:
    c = ch("lowered", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE")
    assert [(e.side, e.reason, e.party) for e in s.effects_of(c, P, [], {})] == [
        (s.GAINS, "correctness-fix", s.RULE_USERS),
        (s.PAYS, "fewer-batches-captured", s.RULE_USERS),
    ]


def test_added_removed_dynamic_renamed() -> None:
    added = s.effects_of(ch("added", None, "UNIFORM_BATCH"), P, [], {})
    assert [(e.side, e.basis) for e in added] == [(s.GAINS, "versus-default"),
                                                  (s.PAYS, "versus-default")]
    same = s.effects_of(ch("added", None, "NEVER"), P, [], {})
    assert [(e.side, e.reason) for e in same] == [(s.NEITHER, "same-as-default")]
    removed = s.effects_of(ch("removed", "ALWAYS", None), P, [], {})
    assert [(e.side, e.reason) for e in removed] == [(s.UNKNOWN, "falls-back-to-inherited")]
    dyn = s.effects_of(ch("dynamic-added", None, "UNIFORM_BATCH if c; else NEVER"), P, [], {})
    assert [(e.side, e.reason) for e in dyn] == [(s.DEPENDS, "decided-at-run-time")]
    ren = s.effects_of(ch("renamed", "ALWAYS", "ALWAYS"), P, [], {})
    assert [(e.side, e.reason) for e in ren] == [(s.NEITHER, "no-value-change")]


def test_a_bool_spelling_is_no_level_either_side() -> None:
    # vLLM #22721: full_cudagraph_supported = True became cudagraph_support = ALWAYS; the
    # profile maps no bool to a level, so neither "raised" nor "an expression"
    for c in (ch("changed", "True", "ALWAYS"), ch("added", None, "True"),
              ch("changed", "ALWAYS", "False")):
        assert [(e.side, e.reason) for e in s.effects_of(c, P, [], {})] == [
            ("unknown", "bool-value")], c


def test_scope_of_a_pr() -> None:
    core = "vllm/v1/worker/gpu_model_runner.py"
    r = rec(title="[ROCm][MTP] raise", files=(BACKENDS + "mla/rocm_demo.py", core))
    c = ch("raised", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH",
           file=BACKENDS + "mla/rocm_demo.py")
    sc = s.scope_of(r, [c], [], P)
    assert sc.core_paths == (core,)
    assert sc.builders == (s.BuilderFact("DemoBuilder", c.file, c.attr, c.before, c.after,
                                         "raised", ("rocm",)),)
    assert [f.name for f in sc.features] == ["MTP"]
    assert [e.reason for e in sc.effects] == ["more-batches-captured", "correctness-risk"]
    assert s.scope_of(rec(), [], [], P).effects == ()


def test_a_conditional_value_is_read_where_its_test_changed() -> None:
    """vLLM #43043's shape: the test of ``ALWAYS if ... else UNIFORM_BATCH`` gained an "or":
    a raise there (with the audit's reading of the builder), not an unknown effect."""
    c = ch("changed", "AttentionCGSupport.ALWAYS if fa3() else AttentionCGSupport.UNIFORM_BATCH",
           "AttentionCGSupport.ALWAYS if fa3() or is_xpu() else AttentionCGSupport.UNIFORM_BATCH")
    read, gains, pays = s.effects_of(c, P, [], {("DemoBuilder", c.file): False})
    assert (read.reason, read.side) == ("condition-shift", s.NEITHER)
    for e in (read, gains, pays):
        assert (e.when, e.unless, e.level_before, e.level_after) == (
            "is_xpu()", "fa3()", "UNIFORM_BATCH", "ALWAYS")
        assert e.file == c.file
    assert (gains.reason, pays.reason, pays.audit) == (
        "more-batches-captured", "correctness-risk", "not-ready")
    # narrowed by an "and": a lowering there
    c = ch("changed", "ALWAYS if fa3() else UNIFORM_SINGLE_TOKEN_DECODE",
           "ALWAYS if fa3() and not dcp() else UNIFORM_SINGLE_TOKEN_DECODE")
    read, gains, pays = s.effects_of(c, P, [], {})
    assert (read.when, read.unless) == ("fa3()", "not dcp()")
    assert (gains.reason, pays.reason) == ("correctness-fix", "fewer-batches-captured")
    assert read.party == gains.party == s.RULE_USERS  # crosses the flag levels' boundary there


def test_other_expression_changes_stay_unknown() -> None:
    c = ch("changed", "ALWAYS if fa3() else UNIFORM_BATCH", "ALWAYS if fa4() else UNIFORM_BATCH")
    assert [(e.reason, e.when) for e in s.effects_of(c, P, [], {})] == [
        ("expression-changed", None)]


def test_a_class_that_sets_the_value_first_is_no_new_class_without_builder_bases() -> None:
    """Without builder bases (the query-length profile), the holders are the classes that set
    the value: one that sets it for the first time may long have existed (#26541 on the fork
    introduced ``query_len_support`` in ``MLACommonMetadataBuilder``), so it is not "a new
    builder"; with builder bases, a class below them that was no builder at the parent is."""
    for name, reason in (("vllm-query-len", "new-holder"), ("vllm-cudagraph", "new-builder")):
        profile = load_profile(name)
        ch = SymbolChange("pkg/x.py", "XBuilder", profile.display, None, profile.default_level,
                          "added")
        prior = {("XBuilder", "pkg/x.py"): s.Prior(None, None, None, profile.default_level,
                                                   "declared", "pkg/x.py", None)}
        got = s.scope_of({"files": [{"filename": "pkg/x.py"}], "title": ""}, [ch], [], profile,
                         prior=prior)
        assert [e.reason for e in got.effects][:1] == [reason], name


def test_platform_split_is_found_once_per_paths_and_title() -> None:
    """A report asks for the same split three times (its tags, its scope, its risks): it is
    made once per profile, and other paths or another title are another split."""
    from prkb.analyze.risk import platform_split

    profile = load_profile(None)
    paths = ["vllm/v1/attention/backends/rocm_aiter_fa.py", "vllm/v1/worker/x.py"]
    first = platform_split(paths, "[Bugfix] fix", profile)
    assert [p.code for p in first.code] == ["rocm"] and first.title_only == []
    assert platform_split(list(paths), "[Bugfix] fix", profile) is first
    titled = platform_split(paths, "[XPU] fix", profile)
    assert titled is not first and [p.code for p in titled.title_only] == ["xpu"]
    other = platform_split(paths[1:], "[Bugfix] fix", profile)
    assert other.code == [] and other is not first
    # a title and paths that would read alike if joined are still two questions
    assert platform_split(["b"], "a", profile) is not platform_split([], "a\nb", profile)
