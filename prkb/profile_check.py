"""``prkb profile check``: everything wrong with a profile file at once, each problem with its
line, what the profile will track, and, given a clone, what its choices find there; and
``prkb profile keys``: every key a profile may write, read from the schema.

``check_profile(path)`` reads and validates the file (every schema error, not only the first,
then the rules a schema cannot say), names the line of each problem (``key_line``), and
summarises what a valid profile tracks. ``clone_facts(profile, clone, branch)`` asks git which
files declare a family spelling but hold none of the audit's ``file_markers`` (the audit never
reads them: their classes are left out), and how many commits the pickaxe finds, timed.
``schema_keys()`` lists every key of ``data/profiles/profile.schema.json`` with its type,
default and description, so the listing can never disagree with what validation accepts.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analyze.audit import file_markers
from .gitrepo import GitRepo
from .paths import data_dir
from .profile import SCHEMA, Profile, build_profile, key_text, profile_problems


@dataclass
class Problem:
    key: str  # dotted key path ("levels.order", "platforms[2].code"; "(top level)")
    line: int | None  # 1-based line of the file where that key (or its table) is written
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "line": self.line, "message": self.message}


@dataclass
class ProfileCheck:
    path: str
    problems: list[Problem] = field(default_factory=list)
    profile: Profile | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:\"[^\"]*\"|'[^']*'|"
                  r"[A-Za-z0-9_-]+))*)\s*=")


def _parts(dotted: str) -> list[str]:
    out = []
    for m in re.finditer(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_-]+)", dotted):
        out.append(next(g for g in m.groups() if g is not None))
    return out


def key_line(text: str, path: list[str | int]) -> int | None:
    """The line where the key at ``path`` is written (a table's header for a table, the
    longest written prefix otherwise); None when nothing of it is written (a missing key of
    the top level)."""
    table: list[str | int] = []
    counts: dict[tuple[str | int, ...], int] = {}
    best: tuple[int, int] | None = None  # (matched parts, line)

    def consider(written: list[str | int], row: int) -> None:
        nonlocal best
        n = 0
        while n < len(written) and n < len(path) and written[n] == path[n]:
            n += 1
        if n == len(written) and n and (best is None or n > best[0]):
            best = (n, row)

    for row, line in enumerate(text.splitlines(), 1):
        h = _HEADER.match(line)
        if h and not line.lstrip().startswith("#"):
            name: list[str | int] = list(_parts(h.group(2)))
            if h.group(1) == "[[":  # an array of tables: its n-th item
                key = tuple(name)
                counts[key] = counts.get(key, -1) + 1
                name.append(counts[key])
            table = name
            consider(table, row)
            continue
        k = _KEY.match(line)
        if k and not line.lstrip().startswith("#"):
            consider([*table, *_parts(k.group(1))], row)
    return best[1] if best else None


def check_profile(path: str | Path) -> ProfileCheck:
    """Every problem of the profile file at ``path``, each with its line; the profile itself
    when there is none."""
    p = Path(path)
    out = ProfileCheck(str(p))
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        out.problems.append(Problem("(file)", None, f"cannot read it: {e.strerror or e}"))
        return out
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = re.search(r"line (\d+)", str(e))
        out.problems.append(Problem("(file)", int(line.group(1)) if line else None,
                                    f"invalid TOML: {e}"))
        return out
    out.problems = sorted((Problem(key_text(x.path), key_line(text, list(x.at)), x.message)
                           for x in profile_problems(raw)), key=lambda x: (x.line or 0, x.key))
    if out.problems:
        return out
    out.profile = build_profile(raw)
    return out


def summary(profile: Profile) -> dict[str, Any]:
    """What the profile tracks, as ``profile check`` prints it."""
    audit = profile.audit
    return {
        "name": profile.name,
        "repo": profile.repo,
        "branch": profile.branch,
        "symbol": profile.display,
        "spellings": list(profile.family),
        "methods": list(profile.methods),
        "kind": profile.kind,
        "set_in": ["class", *(["init"] if profile.init_sets else [])],
        "setters": [{"call": c, "arg": a} for c, a in profile.setters.items()],
        "levels": list(profile.levels),
        "default": profile.default_level,
        "aliases": dict(profile.level_aliases),
        "enum": profile.enum or None,
        "rule": profile.rules or None,
        "scan_paths": [str(x) for x in audit.get("scan_paths", [])],
        "file_markers": file_markers(profile),
        "builder_bases": [str(x) for x in audit.get("builder_bases", [])],
        "reading_sites": [str(x) for x in audit.get("reading_sites", [])],
        "framework_files": sorted(profile.framework),
        "pickaxe_regex": profile.git_pickaxe_regex(),
    }


def clone_facts(profile: Profile, clone: str, branch: str | None = None) -> dict[str, Any]:
    """What the profile finds in a clone: the files under the scan paths that declare a family
    spelling but hold none of the ``file_markers`` (their classes, which the audit never reads),
    and the commits the pickaxe finds on the branch (with the seconds it took)."""
    branch = branch or profile.branch
    audit = profile.audit
    scan = [str(x) for x in audit.get("scan_paths", [])] or ["."]
    markers = [str(x) for x in audit.get("file_markers", [])]
    with GitRepo(clone) as git:
        rev = git.resolve(branch, "branch or revision (give one with --branch)")
        r = git.run(["grep", "-l", "-E", profile.git_declaring_regex(), rev, "--", *scan],
                    check=False)
        files = [line.split(":", 1)[1] for line in r.stdout.splitlines() if ":" in line]
        left: list[dict[str, Any]] = []
        for f in files if markers else []:
            text = git.run(["show", f"{rev}:{f}"], check=False).stdout
            if not any(m in text for m in markers):
                left.append({"file": f, "classes": re.findall(r"(?m)^\s*class\s+(\w+)", text)})
        t0 = time.perf_counter()
        r = git.run(["log", "--format=%H", f"-G{profile.git_pickaxe_regex()}", rev, "--",
                     profile.python_glob], check=False)
        seconds = time.perf_counter() - t0
    return {"branch": branch, "declaring_files": len(files), "left_out": left,
            "pickaxe_commits": len(r.stdout.split()), "pickaxe_seconds": round(seconds, 2)}


@dataclass(frozen=True)
class SchemaKey:
    """One key a profile may write (``prkb profile keys``): its dotted path (``[]`` an array's
    entry, ``<name>`` a name the profile chooses: ``levels.aliases.<name>``), its type in
    TOML's words, whether it is required (wherever its table is written), its default when the
    schema gives one (``has_default``), and its description."""

    key: str
    type: str
    required: bool
    description: str
    default: Any = None
    has_default: bool = False
    item: bool = False  # an array's entry (``platforms[]``), not a key of its own

    @property
    def status(self) -> str:
        """``required``, ``default <JSON>`` or ``no default`` (empty for an array's entry)."""
        if self.item:
            return ""
        if self.required:
            return "required"
        if self.has_default:
            return f"default {json.dumps(self.default, ensure_ascii=False)}"
        return "no default"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "type": self.type, "required": self.required}
        if self.has_default:
            out["default"] = self.default
        out["description"] = self.description
        return out


def schema_keys(schema: dict[str, Any] | None = None) -> list[SchemaKey]:
    """Every key of the profile schema (``data/profiles/profile.schema.json`` unless ``schema``
    is given), in the schema's order, each followed by the keys inside it: the ``properties``
    of every table, the entries of an array of tables, and the named entries of a table whose
    names the profile chooses (``additionalProperties``); a ``$ref`` is read through, its own
    keywords (a description) over the definition's. Conditions (``allOf``/``if``) add no key."""
    if schema is None:
        schema = json.loads((data_dir() / "profiles" / SCHEMA).read_text(encoding="utf-8"))
    defs = schema.get("$defs", {})

    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            ref = str(node["$ref"])
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {ref!r} (only #/$defs/NAME)")
            own = {k: v for k, v in node.items() if k != "$ref"}
            node = {**defs[ref.rsplit("/", 1)[1]], **own}
        return node

    def tables(node: dict[str, Any]) -> bool:
        return "properties" in node or isinstance(node.get("additionalProperties"), dict)

    def type_text(node: dict[str, Any]) -> str:
        if "enum" in node:
            return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
        kind = node.get("type")
        if isinstance(kind, list):
            return " or ".join(str(k) for k in kind)
        if kind == "array":
            inner = resolved(node.get("items", {}))
            words = "tables" if tables(inner) else type_text(inner)
            return f"array of {f'({words})' if words.startswith('one of') else words}"
        if kind == "object" or tables(node):
            return "table"
        if kind == "string":
            pattern = node.get("pattern")
            if pattern is not None and pattern == defs.get("ident", {}).get("pattern"):
                return "identifier"
            return f"string matching {pattern}" if pattern else "string"
        if kind == "integer" and "minimum" in node:
            return f"integer >= {node['minimum']}"
        return str(kind or "any value")

    out: list[SchemaKey] = []

    def add(key: str, node: dict[str, Any], required: bool, item: bool = False) -> None:
        node = resolved(node)
        out.append(SchemaKey(key, type_text(node), required, str(node.get("description", "")),
                             node.get("default"), "default" in node, item))
        if tables(node):
            inside(node, key)
        items = node.get("items")
        if node.get("type") == "array" and isinstance(items, dict) and tables(resolved(items)):
            add(f"{key}[]", items, False, item=True)

    def inside(node: dict[str, Any], prefix: str) -> None:
        needed = set(node.get("required", []))
        for name, sub in node.get("properties", {}).items():
            add(f"{prefix}.{name}" if prefix else name, sub, name in needed)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            add(f"{prefix}.<name>", extra, False)

    inside(resolved(schema), "")
    return out
