"""The structure rules of ARCHITECTURE.md, checked on prkb's source (``tests/test_structure.py``).

Run as a script to list what breaks them: ``python3 tests/structure.py``.

- **SQL only in the store**: no SQL text, ``.conn`` or ``.execute*`` outside ``prkb/store/``.
- **No private cross-module use**: no ``from m import _x`` and no ``obj._x`` on a name the
  module itself never defines.
- **No import cycle** between modules (imports inside functions count).
- **Imports point down** the layers below.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "prkb"

# Layers, lowest first: a module may import its own layer's package and any lower layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "prkb.errors",
            "prkb.paths",
            "prkb.secrets",
            "prkb.dates",
            "prkb.atomic",
            "prkb.progress",
            "prkb.lifetime",
            "prkb.models",
            "prkb.profile",
            "prkb.glossary",
            "prkb.gitrepo",
            "prkb.records",
            "prkb.evidence",
        ),
    ),
    ("analyze", ("prkb.analyze",)),
    ("store", ("prkb.store",)),
    ("graph", ("prkb.graph",)),
    ("collect", ("prkb.collect", "prkb.ingest")),
    ("render", ("prkb.render",)),
    ("publish", ("prkb.site", "prkb.publish", "prkb.check", "prkb.profile_check")),
    ("app", ("prkb.commands", "prkb.cli", "prkb.demo", "prkb.__main__")),
]
# Which layers each layer may import (besides the base, which everyone may).
ALLOWED: dict[str, set[str]] = {
    "base": {"base"},
    "analyze": {"analyze"},
    "store": {"store"},
    "graph": {"analyze", "store", "graph"},
    "collect": {"analyze", "store", "graph", "collect"},
    "render": {"analyze", "store", "graph", "render"},
    "publish": {"analyze", "store", "graph", "render", "publish"},
    "app": {"analyze", "store", "graph", "collect", "render", "publish", "app"},
}

_SQL = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
    r"|CREATE\s+(TABLE|INDEX|TRIGGER|VIEW)|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE)\b"
)
_DB_ATTRS = {"conn", "execute", "executemany", "executescript"}


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_pkg(path: Path) -> bool:
    return path.name == "__init__.py"


def imports(name: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """The prkb modules ``name`` imports (anywhere in it), with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if _is_pkg(path) else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("prkb"):
                    yield _known(a.name, known), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("prkb"):
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                yield (sub if sub in known else _known(mod, known)), node.lineno


def _known(mod: str, known: set[str]) -> str:
    while mod not in known and "." in mod:
        mod = mod.rpartition(".")[0]
    return mod


def layer_of(mod: str) -> str | None:
    for layer, prefixes in LAYERS:
        if any(mod == p or mod.startswith(p + ".") for p in prefixes):
            return layer
    return None


def sql_outside_store() -> list[str]:
    out = []
    for name, path in modules().items():
        if name == "prkb.store" or name.startswith("prkb.store."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if _SQL.search(node.value):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: SQL text")
            elif isinstance(node, ast.Attribute) and node.attr in _DB_ATTRS:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    return out


def _defined_private(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if n.startswith("_")}


def private_use() -> list[str]:
    out = []
    for path in modules().values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _defined_private(tree)
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or node.level):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        out.append(f"{rel}:{node.lineno}: imports private {a.name}")
            elif isinstance(node, ast.Attribute):
                attr = node.attr
                if not attr.startswith("_") or attr.startswith("__") or attr in own:
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                    continue
                if attr in {"_fields", "_replace", "_asdict", "_make"}:  # namedtuple API
                    continue
                out.append(f"{rel}:{node.lineno}: uses private .{attr}")
    return out


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for target, _ in imports(name, path, known):
            if target != name and target in known and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


def import_cycles() -> list[str]:
    import networkx as nx

    g = nx.DiGraph()
    for a, bs in import_graph().items():
        if a == "prkb":  # the public API names everything, lazily
            continue
        for b in bs:
            if b != "prkb":
                g.add_edge(a, b)
    out = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1:
            out.append("cycle: " + ", ".join(sorted(comp)))
    return out


def upward_imports() -> list[str]:
    mods = modules()
    known = set(mods)
    out = []
    for name, path in mods.items():
        if name == "prkb":
            continue
        src = layer_of(name)
        if src is None:
            out.append(f"{path.relative_to(ROOT)}: module in no layer")
            continue
        for target, line in imports(name, path, known):
            if target == "prkb" or target == name:
                continue
            dst = layer_of(target)
            if dst is None or (dst == "base" and src != "base") or dst in ALLOWED[src]:
                continue
            out.append(f"{path.relative_to(ROOT)}:{line}: {src} imports {dst} ({target})")
    return out


MAX_RENDER_FUNCTION = 80  # lines of one function under prkb/render/ (docstring included)


def long_render_functions() -> list[str]:
    """Functions of ``prkb/render/`` longer than :data:`MAX_RENDER_FUNCTION` lines: a report
    fix should land in one small section builder, not in a long function."""
    out = []
    for name, path in modules().items():
        if not (name == "prkb.render" or name.startswith("prkb.render.")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_RENDER_FUNCTION:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name} is "
                               f"{length} lines (at most {MAX_RENDER_FUNCTION})")
    return out


def sections_read_the_store() -> list[str]:
    """A report section builds from a PR's facts (``render/prfacts.py``), never the store."""
    mods = modules()
    known = set(mods)
    out = []
    for name, path in mods.items():
        if name.startswith("prkb.render.sections"):
            out += [f"{path.relative_to(ROOT)}:{line}: imports {target}"
                    for target, line in imports(name, path, known)
                    if target == "prkb.store" or target.startswith("prkb.store.")]
    return out


CHECKS = {
    "sql outside the store": sql_outside_store,
    "long functions in render": long_render_functions,
    "report sections reading the store": sections_read_the_store,
    "private cross-module use": private_use,
    "import cycles": import_cycles,
    "imports against the layers": upward_imports,
}

if __name__ == "__main__":
    bad = 0
    for title, check in CHECKS.items():
        found = check()
        bad += len(found)
        print(f"## {title}: {len(found)}")
        for line in found:
            print("  " + line)
    sys.exit(1 if bad else 0)
