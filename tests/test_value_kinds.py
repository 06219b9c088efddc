"""Value kinds (#33): a profile whose symbol is an int or a bool, with no levels, collected
from a git history built in ``tmp_path``; directions follow the kind (an int compares as a
number), ``show --json`` carries it, and no CUDA-graph reason word is given to a number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder

from prkb.analyze.symbols import direction_of
from prkb.cli import main
from prkb.collect.git import collect_git
from prkb.profile import load_profile
from prkb.profile_check import check_profile
from prkb.render.report import render_report
from prkb.store import Store

INT_PROFILE = """\
[profile]
name = "toy-threshold"
repo = "example/toy"
title = { en = "Decode thresholds of toy builders", zh = "玩具构建器的解码阈值" }
rules = ""

[symbol]
family = ["reorder_batch_threshold"]
kind = "int"
"""


def profile_file(tmp_path: Path, text: str, name: str) -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_an_int_profile_needs_no_levels_and_compares_numbers(tmp_path: Path) -> None:
    f = profile_file(tmp_path, INT_PROFILE, "int")
    res = check_profile(f)
    assert res.ok and res.profile is not None
    p = load_profile(str(f))
    assert (p.kind, p.levels) == ("int", ())
    assert direction_of("512", "128", p) == "lowered"
    assert direction_of("8", "16", p) == "raised"
    assert direction_of("1_024", "1024", p) == "unchanged"
    assert direction_of("1", "1 + self.k", p) == "changed"
    assert direction_of(None, "4", p) == "added" and direction_of("4", None, p) == "removed"
    # an enum profile still needs its levels
    bad = profile_file(tmp_path, INT_PROFILE.replace('kind = "int"', 'kind = "enum"'), "enum")
    assert [x.message for x in check_profile(bad).problems] == [
        "'levels' is a required property"]


def test_a_bool_profile_is_enabled_or_disabled(tmp_path: Path) -> None:
    p = load_profile(str(profile_file(tmp_path, INT_PROFILE.replace('"int"', '"bool"'), "b")))
    assert direction_of("False", "True", p) == "enabled"
    assert direction_of("True", "False", p) == "disabled"
    assert direction_of("True", "True", p) == "unchanged"


@pytest.fixture
def collected(tmp_path: Path) -> tuple[Store, Path]:
    f = profile_file(tmp_path, INT_PROFILE, "int")
    r = GitRepoBuilder.init(tmp_path / "src")
    mod = "toy/builders.py"

    def src(n: int) -> str:
        return f"class ToyBuilder:\n    reorder_batch_threshold: int = {n}\n"

    r.commit({mod: src(512)}, "Toy builder (#1)")
    r.commit({mod: src(128)}, "Lower the toy threshold (#2)")
    store = Store(tmp_path / "kb.sqlite")
    collect_git(store, str(r.path), load_profile(str(f)), quiet=True, warn=lambda m: None,
                repo="example/toy")
    return store, f


def test_a_lowered_int_is_said_as_such(collected, capsys) -> None:
    store, f = collected
    (c,) = store.pr_facts("2")["symbol_changes"]
    assert (c["before"], c["after"], c["direction"]) == ("512", "128", "lowered")
    text = render_report(store, "2", lang="en", fmt="md", profile=load_profile(str(f)))
    assert "`reorder_batch_threshold` lowered from `512` to `128` (value changed)" in text
    for word in ("performance", "correctness fix", "CUDA", "level", "raised or added"):
        assert word not in text, word
    zh = render_report(store, "2", lang="zh", fmt="md", profile=load_profile(str(f)))
    assert "`reorder_batch_threshold` 由 `512` 降低为 `128`（值已变更）" in zh
    assert "级别" not in zh  # no word of levels for a number
    assert "`ToyBuilder` declares `128`." in text and "changes the declared value" in text
    assert main(["--db", str(store.path), "--profile", str(f), "show", "2", "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["symbol_changes"]
    assert (shown["kind"], shown["direction"]) == ("int", "lowered")


@pytest.mark.parametrize(("name", "path", "values", "directions"), [
    ("vllm-decode-threshold", "vllm/v1/attention/backends/x_attn.py",
     ["512", "128", "256"], ["added", "lowered", "raised"]),
    ("vllm-kv-update-in-forward", "vllm/v1/attention/backends/x_attn.py",
     ["False", "True", "False"], ["added", "enabled", "disabled"]),
])
def test_the_bundled_int_and_bool_profiles_end_to_end(
    tmp_path: Path, name: str, path: str, values: list[str], directions: list[str],
) -> None:
    """Each bundled profile of another kind, collected from a generated history: its
    directions, and every report (3 formats x 2 languages) without a word of the CUDA-graph
    profile's levels."""
    p = load_profile(name)
    attr = p.family[0]
    r = GitRepoBuilder.init(tmp_path / "src")
    base = p.audit["builder_bases"][0]  # the class whose subclasses hold the value
    for i, v in enumerate(values, 1):
        typ = "int" if p.kind == "int" else "bool"
        r.commit({path: f"class {base}:\n    pass\n\n\nclass XThing({base}):\n"
                        f"    {attr}: {typ} = {v}\n"}, f"Set it to {v} (#{i})")
    store = Store(tmp_path / "kb.sqlite")
    collect_git(store, str(r.path), p, quiet=True, warn=lambda m: None)
    got = [store.pr_facts(str(i))["symbol_changes"][0]["direction"]
           for i in range(1, len(values) + 1)]
    assert got == directions
    md = render_report(store, "2", lang="en", fmt="md", profile=p)
    # no builder bases: the classes that set the value are read, with their hierarchy
    before, after = values[0], values[1]
    assert (f"- `XThing` in `{path}`, `{attr}`: `{before}` (declared in the class) → "
            f"`{after}` (declared in the class)") in md
    for lang in ("en", "zh"):
        for fmt in ("md", "txt", "html"):
            text = render_report(store, "2", lang=lang, fmt=fmt, profile=p)
            for word in ("CUDA", "level", "级别", "performance", "correctness", "a bool"):
                assert word not in text, (lang, fmt, word)
