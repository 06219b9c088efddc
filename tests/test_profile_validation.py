"""A profile is checked as a whole when it is loaded, on every command: a wrong type, an unknown
key, a level that is not a level, an unknown rule module, a missing or unreadable file each
give one error line naming the file and the key (exit 2), never a silently empty audit."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from prkb.errors import InputError
from prkb.paths import data_dir
from prkb.profile import load_profile, validate_profile

BUNDLED = data_dir() / "profiles" / "vllm-cudagraph.toml"


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


BASE = BUNDLED.read_text(encoding="utf-8")

# (what is wrong, the profile's text, words the one error line must hold)
CASES: list[tuple[str, str, tuple[str, ...]]] = [
    ("a string where a list goes",
     _edit(BASE, 'order = ["NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS"]',
           'order = "NEVER"'),
     ("levels.order", "is not of type 'array'")),
    ("a number where a name goes",
     _edit(BASE, 'enum = "AttentionCGSupport"', "enum = 3"),
     ("symbol.enum", "is not of type 'string'")),
    ("a typo in a key",
     _edit(BASE, "[levels.aliases]", "[levels.alias]"),
     ("levels", "unknown key 'alias'")),
    ("an unknown section",
     BASE + "\n[extra]\nx = 1\n",
     ("(top level)", "unknown key 'extra'")),
    ("a missing required key",
     _edit(BASE, 'repo = "vllm-project/vllm"\n', ""),
     ("profile", "'repo' is a required property")),
    ("a default that is not a level",
     _edit(BASE, 'default = "NEVER"', 'default = "SOMETIMES"'),
     ("levels.default", "'SOMETIMES' is not one of levels.order")),
    ("an alias to no level",
     _edit(BASE, 'PURE_DECODE_ONLY = "UNIFORM_SINGLE_TOKEN_DECODE"',
           'PURE_DECODE_ONLY = "PURE_DECODE"'),
     ("levels.aliases.PURE_DECODE_ONLY", "not one of levels.order")),
    ("a flagged level that is not a level",
     _edit(BASE, 'flag_levels = ["UNIFORM_BATCH", "ALWAYS"]', 'flag_levels = ["UNIFORM"]'),
     ("audit.flag_levels[0]", "'UNIFORM'")),
    ("an unknown rule module",
     _edit(BASE, 'rules = "cudagraph"', 'rules = "cudagraphs"'),
     ("profile.rules", "unknown rule module 'cudagraphs'", "known: cudagraph")),
    ("a list item of the wrong type",
     _edit(BASE, 'scan_paths = ["vllm/"]', 'scan_paths = ["vllm/", 7]'),
     ("audit.scan_paths[1]", "is not of type 'string'")),
    ("a flag position that is not a count",
     _edit(BASE, "reorder_flag_position = 1", 'reorder_flag_position = "1"'),
     ("audit.reorder_flag_position", "is not of type 'integer'")),
    ("a family spelling that is not an identifier",
     _edit(BASE, '"full_cudagraph_supported", "attn_cudagraph_support"',
           '"full cudagraph", "attn_cudagraph_support"'),
     ("symbol.family[0]", "does not match")),
    ("a wording placeholder the key does not take",
     _edit(BASE, 'no longer claims batches it cannot capture ({before}',
           'no longer claims batches it cannot capture ({level}'),
     ("wording.lower_gain.en", "unknown placeholder {level}", "{after}, {before}, {cls}")),
    ("a wording text in one language only",
     _edit(BASE, 'level = { en = "effective CUDA graph level", zh = "有效 CUDA Graph 级别" }',
           'level = { en = "effective CUDA graph level" }'),
     ("wording.level", "'zh' is a required property")),
    ("an unknown wording key",
     _edit(BASE, "[wording]\n", '[wording]\nsubject = { en = "x", zh = "x" }\n'),
     ("wording", "unknown key 'subject'")),
    ("invalid TOML",
     BASE + "\n[levels\n",
     ("invalid TOML",)),
]

# commands that read the profile late, or (before) not at all
COMMANDS = (("list",), ("audit", "{repo}", "--rev", "HEAD"), ("report", "1"),
            ("matrix", "{repo}"))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PRKB_DB"}


@pytest.mark.parametrize("what,text,words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_profile_is_one_line_naming_file_and_key(what: str, text: str,
                                                       words: tuple[str, ...],
                                                       tmp_path: Path, figures) -> None:
    prof = tmp_path / "bad.toml"
    prof.write_text(text, encoding="utf-8")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for cmd in COMMANDS:
        args = [a.format(repo=repo) for a in cmd]
        r = subprocess.run([sys.executable, "-m", "prkb", "--db", str(tmp_path / "kb.sqlite"),
                            "--profile", str(prof), *args],
                           capture_output=True, text=True, env=_env(), timeout=60)
        assert r.returncode == 2, (what, cmd, r.stdout[-300:], r.stderr[-1000:])
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("prkb: error: profile "), (what, lines)
        assert str(prof) in lines[0], lines[0]
        for w in words:
            assert w in lines[0], (what, w, lines[0])
        figures.add("input", "profile validation cases")


def test_a_missing_profile_file_is_refused_by_every_command(tmp_path: Path) -> None:
    for cmd in (("list",), ("report", "1")):
        r = subprocess.run([sys.executable, "-m", "prkb", "--db", str(tmp_path / "kb.sqlite"),
                            "--profile", str(tmp_path / "nowhere.toml"), *cmd],
                           capture_output=True, text=True, env=_env(), timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "unknown profile" in r.stderr and "nowhere.toml" in r.stderr, r.stderr


def test_the_bundled_profiles_are_valid() -> None:
    for path in sorted((data_dir() / "profiles").glob("*.toml")):
        validate_profile(tomllib.loads(path.read_text(encoding="utf-8")), path)
        assert load_profile(str(path)).content_hash


def test_validation_reports_the_first_problem_and_counts_the_rest(tmp_path: Path) -> None:
    raw = tomllib.loads(BASE)
    raw["levels"]["order"] = "NEVER"
    raw["symbol"]["enum"] = 3
    with pytest.raises(InputError, match=r"levels\.order: .* \(and 1 more problems\)"):
        validate_profile(raw, "x.toml")


def test_a_renamed_key_says_what_replaced_it() -> None:
    """``[audit] mla_bases`` (read until the rule's groups became the profile's) is refused
    with the key that replaced it, at the key."""
    raw = tomllib.loads(BASE)
    raw.setdefault("audit", {})["mla_bases"] = ["MLACommonMetadataBuilder"]
    with pytest.raises(InputError, match=r"unknown key 'mla_bases': it was renamed, write "
                                         r"base_groups = \{ mla = \[\.\.\.\] \}"):
        validate_profile(raw, "x.toml")
    raw["audit"]["base_groups"] = {"mla": raw["audit"].pop("mla_bases")}
    validate_profile(raw, "x.toml")


def _fresh_load(path: Path) -> object:
    """load_profile as a new process would call it (nothing parsed yet in this one)."""
    import prkb.profile as profile_mod

    profile_mod._CACHE.pop(str(path), None)
    return load_profile(str(path))


def test_a_profile_passes_the_schema_once_per_text(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema check (jsonschema, tens of milliseconds of every command's start) runs once
    for a profile's text: a stamp in the cache folder says that very text passed. An edited
    text is checked again, and a text that fails leaves no stamp."""
    import prkb.profile as profile_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    stamps = tmp_path / "cache" / "prkb" / "profiles-valid"
    prof = tmp_path / "mine.toml"
    prof.write_text(BASE, encoding="utf-8")
    first = _fresh_load(prof)
    assert len(list(stamps.iterdir())) == 1

    calls: list[int] = []
    real = profile_mod.schema_validator

    def counted() -> object:
        calls.append(1)
        return real()

    monkeypatch.setattr(profile_mod, "schema_validator", counted)
    again = _fresh_load(prof)
    assert calls == [] and again == first  # the same text: the stamp, and the same profile

    # a schema error in an edited text is found (the stamp is of the other text)
    prof.write_text(_edit(BASE, 'enum = "AttentionCGSupport"', "enum = 3"), encoding="utf-8")
    with pytest.raises(InputError, match=r"symbol\.enum"):
        _fresh_load(prof)
    assert calls == [1] and len(list(stamps.iterdir())) == 1  # no stamp for a failed text
    # the checks beyond the schema run with a stamp too
    prof.write_text(BASE, encoding="utf-8")
    monkeypatch.setattr(profile_mod, "validate_profile", _no_schema_only(profile_mod))
    with pytest.raises(InputError, match="no schema"):
        _fresh_load(prof)


def _no_schema_only(profile_mod: object) -> object:
    real = profile_mod.validate_profile  # type: ignore[attr-defined]

    def check(raw: dict, path: object, *, schema: bool = True) -> None:
        if not schema:
            raise InputError("no schema: the other checks were called")
        real(raw, path, schema=schema)

    return check


def test_a_profile_loads_without_a_writable_cache(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache folder to write (here a file stands where it would go): checked every time,
    loaded all the same."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    prof = tmp_path / "mine.toml"
    prof.write_text(BASE, encoding="utf-8")
    assert _fresh_load(prof) == _fresh_load(prof)
    prof.write_text(_edit(BASE, 'enum = "AttentionCGSupport"', "enum = 3"), encoding="utf-8")
    with pytest.raises(InputError, match=r"symbol\.enum"):
        _fresh_load(prof)
