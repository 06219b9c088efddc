"""Every key of the profile schema is documented (issue #33, "Every key documented"): each has a
description, each ``default`` is the value the code really takes when a profile leaves the key
out (seen through the loaded :class:`~prkb.profile.Profile`), and ``prkb profile keys`` lists
them from the schema itself."""

from __future__ import annotations

import copy
import dataclasses
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prkb.cli import main
from prkb.errors import InputError
from prkb.paths import data_dir
from prkb.profile import SCHEMA, Profile, load_profile
from prkb.profile_check import SchemaKey, check_profile, schema_keys

SCHEMA_PATH = data_dir() / "profiles" / SCHEMA
PROFILES = sorted((data_dir() / "profiles").glob("*.toml"))


def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


# --- every key has a description ---------------------------------------------------------------

# keywords whose value is data or a condition on other keys, not the schema of a key
_NOT_KEYS = {"if", "not", "const", "enum", "default", "examples"}


def undocumented(schema: dict[str, Any]) -> list[str]:
    """Where the schema (read as JSON, not through ``schema_keys``) has a key without a
    description of its own: an entry of ``properties`` at any depth (``$defs`` too), a schema of
    named entries (``additionalProperties``), the entry of an array of tables (``items``)."""
    out: list[str] = []

    def needs(node: Any, where: str) -> None:
        text = node.get("description") if isinstance(node, dict) else None
        if not isinstance(text, str) or not text.strip():
            out.append(where)

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for i, x in enumerate(node):
                walk(x, f"{where}/{i}")
            return
        if not isinstance(node, dict):
            return
        for key, sub in node.items():
            if key in _NOT_KEYS:
                continue
            if key == "properties" and isinstance(sub, dict):
                for name, prop in sub.items():
                    needs(prop, f"{where}/properties/{name}")
            elif key == "additionalProperties" and isinstance(sub, dict):
                needs(sub, f"{where}/additionalProperties")
            elif key == "items" and isinstance(sub, dict) and (
                    "properties" in sub or isinstance(sub.get("additionalProperties"), dict)):
                needs(sub, f"{where}/items")
            walk(sub, f"{where}/{key}")

    walk(schema, "#")
    return out


def test_every_key_has_a_description() -> None:
    assert undocumented(_schema()) == []
    # as `prkb profile keys` reads them ($refs read through): sentences, each its own
    keys = schema_keys()
    assert len({k.key for k in keys}) == len(keys)
    bad = [k.key for k in keys
           if not k.description[:1].isupper() or not k.description.rstrip().endswith(".")]
    assert bad == [], "a description is one or two sentences"


def test_a_key_without_a_description_is_caught() -> None:
    """The check bites: a key added anywhere without a description is named."""
    schema = _schema()
    schema["properties"]["symbol"]["properties"]["colour"] = {"type": "string"}
    schema["properties"]["audit"]["properties"]["bases"] = {"$ref": "#/$defs/idents"}
    platform = schema["properties"]["platforms"]["items"]
    platform["properties"]["vendor"] = {"$ref": "#/$defs/text"}
    del platform["description"]
    schema["properties"]["features"]["additionalProperties"].pop("description")
    schema["$defs"]["both"]["properties"]["zh"].pop("description")
    assert undocumented(schema) == [
        "#/$defs/both/properties/zh",
        "#/properties/symbol/properties/colour",
        "#/properties/platforms/items",
        "#/properties/platforms/items/properties/vendor",
        "#/properties/features/additionalProperties",
        "#/properties/audit/properties/bases",
    ]
    listed = {k.key: k for k in schema_keys(schema)}
    assert listed["symbol.colour"].description == ""
    assert listed["audit.bases"].type == "array of identifier"
    assert listed["wording.feed.zh"].description == ""  # (the $defs entry it comes from)


def test_the_listing_covers_every_key_the_bundled_profiles_write() -> None:
    """``schema_keys`` reads the whole schema: each key a bundled profile writes is listed
    (through arrays of tables and named entries)."""
    listed = {k.key for k in schema_keys()}
    missing: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
            for x in node:
                walk(x, f"{prefix}[]")
        elif isinstance(node, dict):
            for name, sub in node.items():
                here = f"{prefix}.{name}" if prefix else name
                key = here if here in listed else f"{prefix}.<name>"
                if key not in listed:
                    missing.append(here)
                    continue
                walk(sub, key)

    for path in PROFILES:
        walk(tomllib.loads(path.read_text(encoding="utf-8")), "")
    assert missing == []


# --- every default is the code's ----------------------------------------------------------------

MINIMAL: dict[str, Any] = {
    "profile": {"name": "minimal", "repo": "owner/repo"},
    "symbol": {"family": ["value_attr"]},
    "levels": {"order": ["LOW", "HIGH"]},
}
#: How a loaded profile shows the effective value of a key with a schema default; the audit's
#: keys are seen as ``Profile.audit[key]``. A key with a default and no way to see it here
#: fails the test: add it.
SEEN_AS: dict[str, Callable[[Profile], Any]] = {
    "profile.branch": lambda p: p.branch,
    "profile.python_glob": lambda p: p.python_glob,
    "symbol.kind": lambda p: p.kind,
    "symbol.set_in": lambda p: p.init_sets,
    "symbol.setters": lambda p: p.setters,
    "symbol.setters[].arg": lambda p: p.setters,
    "paths.tests": lambda p: p.tests_paths,
    "paths.docs": lambda p: p.docs_paths,
}
#: The entry written for a key inside an array of tables (its required keys).
ENTRY: dict[str, dict[str, Any]] = {"symbol.setters[]": {"call": "set_value"}}
#: A valid value other than the default, where changing the default's type does not give one.
OTHER: dict[str, Any] = {
    "symbol.kind": "int",
    "symbol.set_in": ["class", "init"],
    "symbol.setters": [{"call": "set_value"}],
}


def _other(key: SchemaKey) -> Any:
    if key.key in OTHER:
        return OTHER[key.key]
    d = key.default
    if isinstance(d, bool):
        return not d
    if isinstance(d, int):
        return d + 1
    if isinstance(d, str):
        return f"{d}_other"
    if isinstance(d, list) and all(isinstance(x, str) for x in d):
        return [*d, "other/"]
    raise AssertionError(f"{key.key}: give a value other than its default in OTHER")


def _seen(key: str) -> Callable[[Profile], Any]:
    if key.startswith("audit.") and key.count(".") == 1:
        name = key.split(".", 1)[1]
        return lambda p: p.audit.get(name, "(not in Profile.audit)")
    if key not in SEEN_AS:
        raise AssertionError(f"{key} has a schema default, but this test does not know how a "
                             "loaded Profile shows its value: add it to SEEN_AS")
    return SEEN_AS[key]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # (a TOML basic string too)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def _toml(raw: dict[str, Any]) -> str:
    out = []
    for table, body in raw.items():
        out.append(f"[{table}]")
        out += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in body.items()]
    text = "\n".join(out) + "\n"
    assert tomllib.loads(text) == raw
    return text


_ABSENT = object()


def _with(key: str, value: Any) -> dict[str, Any]:
    """The minimal profile with ``key`` (a dotted path; ``name[]`` an array of tables, one
    entry of ``ENTRY``) set to ``value``, or left out (``_ABSENT``)."""
    raw = copy.deepcopy(MINIMAL)
    node = raw
    parts = key.split(".")
    for i, part in enumerate(parts[:-1]):
        if part.endswith("[]"):
            entry = copy.deepcopy(ENTRY[".".join([*parts[:i], part])])
            node[part[:-2]] = [entry]
            node = entry
        elif part == "<name>":
            raise AssertionError(f"{key}: a default of a named entry: extend this test")
        else:
            node = node.setdefault(part, {})
    if value is not _ABSENT:
        node[parts[-1]] = value
    return raw


def default_problems(keys: list[SchemaKey], folder: Path) -> list[str]:
    """Each key whose schema default is not what a loaded profile takes when the key is left
    out (or whose value the loaded profile does not show at all)."""
    problems: list[str] = []
    for n, key in enumerate(k for k in keys if k.has_default):
        seen = _seen(key.key)
        values = []
        for case, value in (("absent", _ABSENT), ("default", key.default),
                            ("other", _other(key))):
            path = folder / f"{n}-{key.key.replace('[]', '-')}-{case}.toml"
            path.write_text(_toml(_with(key.key, value)), encoding="utf-8")
            try:
                values.append(seen(load_profile(str(path))))
            except InputError as e:
                raise AssertionError(f"{key.key} = {value!r}: {e}") from None
        absent, default, other = values
        if absent != default:
            problems.append(f"{key.key}: the schema's default {key.default!r} gives {default!r}, "
                            f"but a profile without the key gives {absent!r}")
        if other == absent:
            problems.append(f"{key.key}: another value ({_other(key)!r}) is not seen either")
    return problems


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # (the schema's stamps)
    (tmp_path / "profiles").mkdir()
    return tmp_path / "profiles"


def test_every_default_is_what_the_code_takes(folder: Path) -> None:
    keys = schema_keys()
    assert {k.key for k in keys if k.has_default} >= {
        "profile.branch", "symbol.kind", "paths.tests", "audit.reorder_flag_position"}
    assert default_problems(keys, folder) == []


def test_a_default_the_code_does_not_take_is_caught(folder: Path) -> None:
    """The check bites: a schema default that differs from the code's, or one whose value the
    loaded profile does not show."""
    keys = [dataclasses.replace(k, default="master") if k.key == "profile.branch"
            else dataclasses.replace(k, default=2) if k.key == "audit.reorder_flag_position"
            else k for k in schema_keys()]
    got = default_problems(keys, folder)
    assert len(got) == 2 and got[0].startswith("profile.branch: the schema's default 'master' "
                                               "gives 'master', but a profile without the key "
                                               "gives 'main'")
    assert got[1].startswith("audit.reorder_flag_position: the schema's default 2 gives 2")
    unseen = SchemaKey("profile.colour", "string", False, "A colour.", "red", True)
    with pytest.raises(AssertionError, match="add it to SEEN_AS"):
        default_problems([unseen], folder)


# --- the schema fix: the SARIF texts the check writer reads are required ----------------------


def test_a_rule_text_without_chinese_is_refused_with_its_line(tmp_path: Path) -> None:
    """``prkb check`` writes each rule's short, full and help texts in both languages: a
    profile that leaves one out is refused at load, at its line, not by a KeyError later."""
    text = (data_dir() / "profiles" / "vllm-cudagraph.toml").read_text(encoding="utf-8")
    start = text.index("\nshort = { en = ")
    end = text.index("\n", start + 1)
    line = text[start + 1:end]
    short_en = line[:line.index(", zh = ")] + " }"
    f = tmp_path / "p.toml"
    f.write_text(text[:start + 1] + short_en + text[end:], encoding="utf-8")
    (p,) = check_profile(f).problems
    assert (p.key, p.message) == ('check.rules.cg-uniform-without-spec-decode.short',
                                  "'zh' is a required property")
    assert p.line is not None
    assert f.read_text(encoding="utf-8").splitlines()[p.line - 1].startswith("short = ")
    f.write_text(text[:start + 1] + text[end + 1:], encoding="utf-8")
    (p,) = check_profile(f).problems
    assert p.message == "'short' is a required property"
    assert p.key == "check.rules.cg-uniform-without-spec-decode"


# --- prkb profile keys ---------------------------------------------------------------------------


def test_profile_keys_lists_the_schema_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "keys", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == [k.to_json() for k in schema_keys()]
    by_key = {x["key"]: x for x in got}
    assert by_key["profile.branch"]["default"] == "main"
    assert by_key["audit.reorder_flag_default"]["default"] is False
    assert by_key["levels.order"]["required"] is True
    assert "default" not in by_key["profile.fork"]  # (derived from another key: said in words)
    assert by_key["platforms[].code"]["type"] == "identifier"
    assert by_key["levels.aliases.<name>"]["type"] == "identifier"
    assert by_key["symbol.kind"]["type"] == 'one of "enum", "int", "bool", "str", "expr"'
    assert all(x["description"] for x in got)
    # every key of the schema, and nothing else
    schema = _schema()
    assert {x["key"] for x in got if "." not in x["key"] and "[" not in x["key"]} == set(
        schema["properties"])
    assert {x["key"].split(".")[1] for x in got if x["key"].startswith("audit.")} == set(
        schema["properties"]["audit"]["properties"])
    assert by_key["audit.base_groups.<name>"]["type"] == "array of identifier"


def test_profile_keys_prints_one_entry_per_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "keys"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert [h.split(" (", 1)[0] for h in heads] == [k.key for k in schema_keys()]
    assert 'profile.branch (string; default "main")' in heads
    assert "audit.reorder_flag_default (boolean; default false)" in heads
    assert "levels.order (array of identifier; required)" in heads
    assert "profile.fork (string; no default)" in heads
    assert "platforms[] (table)" in heads
    assert "    The branch `collect git` mines" in out


def test_profile_keys_help_explains_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["profile", "keys", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in ("profile.schema.json", "'<name>' a name the profile chooses",
                  "'no default'", "--json prints a list of objects"):
        assert words in text
