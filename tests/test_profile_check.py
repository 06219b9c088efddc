"""``prkb profile check``: every problem of a profile at once with its line, what a valid one
tracks, and what it finds on a clone built in ``tmp_path``."""

from __future__ import annotations

import json
from pathlib import Path

from gitrepo import GitRepoBuilder

from prkb.cli import main
from prkb.paths import data_dir
from prkb.profile_check import check_profile, clone_facts, key_line

BAD = """\
[profile]
name = "bad"
repo = "x/y"
colour = "red"

[symbol]
family = ["a", 3]

[levels]
order = "NEVER"

[[platforms]]
code = "ok"
[[platforms]]
cod = "typo"
"""


def test_every_problem_is_listed_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(BAD, encoding="utf-8")
    got = [(p.line, p.key, p.message) for p in check_profile(f).problems]
    assert got == [
        (4, "profile", "unknown key 'colour'"),
        (7, "symbol.family[1]", "3 is not of type 'string'"),
        (10, "levels.order", "'NEVER' is not of type 'array'"),
        (14, "platforms[1]", "'code' is a required property"),
        (15, "platforms[1]", "unknown key 'cod'"),
    ]


def test_a_rule_beyond_the_schema_and_invalid_toml_have_lines_too(tmp_path: Path) -> None:
    text = (data_dir() / "profiles" / "vllm-query-len.toml").read_text(encoding="utf-8")
    f = tmp_path / "p.toml"
    f.write_text(text.replace('default = "SINGLE_ONLY"', 'default = "SOMETIMES"'),
                 encoding="utf-8")
    (p,) = check_profile(f).problems
    assert p.key == "levels.default" and "'SOMETIMES' is not one of levels.order" in p.message
    assert f.read_text().splitlines()[p.line - 1].strip().startswith("default = ")
    # every rule beyond the schema that is broken, each at its own line (not only the first)
    f.write_text(text.replace('default = "SINGLE_ONLY"', 'default = "SOMETIMES"')
                 .replace('rules = ""', 'rules = "nosuchrule"'), encoding="utf-8")
    got = [(x.key, x.line) for x in check_profile(f).problems]
    lines = f.read_text().splitlines()
    assert [k for k, _ in got] == ["profile.rules", "levels.default"]
    assert all(lines[n - 1].lstrip().startswith(k.rsplit(".", 1)[-1]) for k, n in got)
    f.write_text("[profile]\nname = \n", encoding="utf-8")
    (p,) = check_profile(f).problems
    assert p.line == 2 and p.message.startswith("invalid TOML")


def test_key_line_finds_tables_arrays_and_dotted_keys() -> None:
    text = ('[a]\nx = 1\n[[b]]\nc = 1\n[[b]]\nc = 2\n[d.e]\n"quoted key" = 1\n'
            'f.g = { en = "x" }\n')
    assert key_line(text, ["a", "x"]) == 2
    assert key_line(text, ["b", 1, "c"]) == 6
    assert key_line(text, ["d", "e", "quoted key"]) == 8
    assert key_line(text, ["d", "e", "f", "g", "en"]) == 9
    assert key_line(text, ["d", "e", "missing"]) == 7  # the table it belongs in
    assert key_line(text, ["nowhere"]) is None


def test_a_valid_profile_on_a_clone(tmp_path: Path, capsys) -> None:
    """A file that declares a spelling but holds no file marker is named with its classes;
    the pickaxe's commits are counted."""
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({"vllm/v1/attention/backends/a_attn.py":
              "class AMetadataBuilder(AttentionMetadataBuilder):\n    _cudagraph_support = 1\n"},
             "A (#1)")
    r.commit({"vllm/other/plain.py": "class Plain:\n    cudagraph_support = 2\n"}, "B (#2)")
    r.commit({"README.md": "x\n"}, "docs (#3)")
    profile = check_profile(data_dir() / "profiles" / "vllm-cudagraph.toml").profile
    assert profile is not None
    facts = clone_facts(profile, str(r.path), "HEAD")
    # "cudagraph_support" is itself a marker: plain.py holds it
    assert (facts["pickaxe_commits"], facts["declaring_files"], facts["left_out"]) == (2, 2, [])
    # with "MetadataBuilder" as the only marker, plain.py is never read by the audit
    narrow = tmp_path / "narrow.toml"
    narrow.write_text((data_dir() / "profiles" / "vllm-cudagraph.toml").read_text(
        encoding="utf-8").replace(
        'file_markers = ["MetadataBuilder", "cudagraph_support", "query_len_support"]',
        'file_markers = ["MetadataBuilder"]'), encoding="utf-8")
    narrowed = check_profile(narrow).profile
    assert narrowed is not None and narrowed.audit["file_markers"] == ["MetadataBuilder"]
    assert clone_facts(narrowed, str(r.path), "HEAD")["left_out"] == [
        {"file": "vllm/other/plain.py", "classes": ["Plain"]}]
    q = check_profile(data_dir() / "profiles" / "vllm-query-len.toml").profile
    assert q is not None
    r.commit({"vllm/mla/x.py": "class X:\n    query_len_support = QueryLenSupport.UNIFORM\n"},
             "C (#4)")
    facts = clone_facts(q, str(r.path), "HEAD")
    assert facts["pickaxe_commits"] == 1
    rc = main(["profile", "check", "vllm-cudagraph", "--clone", str(r.path), "--branch", "HEAD",
               "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ok"] and out["tracks"]["symbol"] == "_cudagraph_support"
    assert out["clone"]["pickaxe_commits"] == 2
    assert main(["profile", "check", "vllm-cudagraph"]) == 0
    text = capsys.readouterr().out
    assert "valid profile 'vllm-cudagraph'" in text and "reading sites:" in text


def test_the_cli_exits_1_and_names_each_problem(tmp_path: Path, capsys) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(BAD, encoding="utf-8")
    assert main(["profile", "check", str(f)]) == 1
    out = capsys.readouterr().out
    assert f"{f}:10: levels.order:" in out and out.rstrip().endswith("5 problems")


def test_the_fork_key_that_collect_git_names_is_accepted(tmp_path: Path) -> None:
    text = (data_dir() / "profiles" / "vllm-query-len.toml").read_text(encoding="utf-8")
    f = tmp_path / "fork.toml"
    f.write_text(text.replace('[profile]\n', '[profile]\nfork = "someone/vllm"\n', 1),
                 encoding="utf-8")
    res = check_profile(f)
    assert res.ok and res.profile is not None
    assert res.profile.raw["profile"]["fork"] == "someone/vllm"
