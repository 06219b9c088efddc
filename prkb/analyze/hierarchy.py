"""Class hierarchies across the modules of a source tree, resolved from imports.

A base written in a class statement is resolved, in order, through: a class of the same module,
the module's imports (``from a.b import C as D``, ``import a.b as m`` then ``m.C``, relative
imports, re-exports followed a few steps), and finally a class of that name that is unique in
the whole tree. Bases that cannot be resolved stay in the MRO as *unresolved* names, so a class
whose base is only known by name (defined outside the scanned paths) still reports it.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

from .symbols import ClassFacts


@dataclass(frozen=True)
class ClassRef:
    """A class by (file, qualified name); ``file`` is empty for an unresolved base."""

    file: str
    qual: str

    @property
    def name(self) -> str:
        return self.qual.rsplit(".", 1)[-1]

    @property
    def resolved(self) -> bool:
        return bool(self.file)


@dataclass
class ModuleFacts:
    """What the audit needs from one Python file, independent of its path (cached by blob)."""

    classes: dict[str, ClassFacts]
    # local name -> (module, attribute or None when the name binds a module)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def module_name(path: str) -> str:
    """``a/b/c.py`` -> ``a.b.c``; ``a/b/__init__.py`` -> ``a.b``."""
    p = path[:-3] if path.endswith(".py") else path
    parts = p.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def read_imports(
    source: str, module: str, is_package: bool, tree: ast.Module | None = None
) -> dict[str, tuple[str, str | None]]:
    """Module-level imports (also inside ``if``/``try`` blocks), relative ones made absolute.

    ``tree`` is the already parsed ``source`` when the caller has it (saves a second parse).
    """
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return {}
    package = module if is_package else module.rpartition(".")[0]
    out: dict[str, tuple[str, str | None]] = {}

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        out[alias.asname] = (alias.name, None)
                    else:
                        top = alias.name.split(".")[0]
                        out.setdefault(top, (top, None))
                        out[alias.name] = (alias.name, None)
            elif isinstance(stmt, ast.ImportFrom):
                base = stmt.module or ""
                if stmt.level:
                    pkg_parts = package.split(".") if package else []
                    up = stmt.level - 1
                    if up > len(pkg_parts):
                        continue
                    anchor = ".".join(pkg_parts[: len(pkg_parts) - up])
                    base = ".".join(x for x in (anchor, base) if x)
                for alias in stmt.names:
                    if alias.name == "*":
                        continue
                    out[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(stmt, ast.If):
                walk(stmt.body)
                walk(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                walk(stmt.body)
                for h in stmt.handlers:
                    walk(h.body)
                walk(stmt.orelse)
                walk(stmt.finalbody)

    walk(tree.body)
    return out


class Hierarchy:
    """All classes of a set of modules, with bases resolved across modules."""

    def __init__(self, modules: dict[str, ModuleFacts]) -> None:
        self.modules = modules  # path -> facts
        self.by_module: dict[str, str] = {module_name(p): p for p in modules}
        self.by_name: dict[str, list[ClassRef]] = {}
        for path, mf in modules.items():
            for qual in mf.classes:
                if "." not in qual:
                    self.by_name.setdefault(qual, []).append(ClassRef(path, qual))
        self._bases: dict[ClassRef, list[ClassRef]] = {}
        self._mro: dict[ClassRef, list[ClassRef]] = {}

    def facts(self, ref: ClassRef) -> ClassFacts | None:
        mf = self.modules.get(ref.file)
        return mf.classes.get(ref.qual) if mf else None

    def all_classes(self) -> list[ClassRef]:
        return [ClassRef(p, q) for p, mf in sorted(self.modules.items()) for q in mf.classes]

    # --- name resolution ------------------------------------------------------------------

    def _in_module(self, module: str, name: str, depth: int) -> ClassRef | None:
        path = self.by_module.get(module)
        if path is None or depth > 6:
            return None
        mf = self.modules[path]
        if name in mf.classes:
            return ClassRef(path, name)
        imp = mf.imports.get(name)
        if imp is not None:
            src_mod, src_name = imp
            if src_name is not None:
                return self._in_module(src_mod, src_name, depth + 1)
        return None

    def _module_of(self, module: str, local: str) -> str | None:
        """The module a local name binds in ``module``: ``import a.b as m``, ``from a import b``."""
        path = self.by_module.get(module)
        if path is None:
            return None
        imp = self.modules[path].imports.get(local)
        if imp is None:
            return None
        src_mod, src_name = imp
        return src_mod if src_name is None else f"{src_mod}.{src_name}"

    def resolve(self, path: str, written: str) -> ClassRef | None:
        module = module_name(path)
        if "." not in written:
            ref = self._in_module(module, written, 0)
        else:
            head, _, name = written.rpartition(".")
            ref = None
            target = self._module_of(module, head.split(".")[0])
            if target is not None:
                rest = head.split(".")[1:]
                full = ".".join([target, *rest])
                ref = self._in_module(full, name, 0)
            if ref is None:
                ref = self._in_module(head, name, 0)
            written = name
        if ref is not None:
            return ref
        cands = self.by_name.get(written, [])
        if len(cands) == 1:
            return cands[0]
        # imported from a package whose __init__ is not read (a re-export): the one class of
        # that name defined in a module under the package
        mf = self.modules.get(path)
        imp = mf.imports.get(written) if mf is not None else None
        if imp is not None and len(cands) > 1:
            under = [c for c in cands
                     if f"{module_name(c.file)}.".startswith(f"{imp[0]}.")]
            if len(under) == 1:
                return under[0]
        return None

    def bases(self, ref: ClassRef) -> list[ClassRef]:
        if ref in self._bases:
            return self._bases[ref]
        facts = self.facts(ref)
        out: list[ClassRef] = []
        if facts is not None:
            for written in facts.bases:
                target = self.resolve(ref.file, written)
                if target == ref or target is None:
                    target = ClassRef("", written.rsplit(".", 1)[-1])
                out.append(target)
        self._bases[ref] = out
        return out

    def mro(self, ref: ClassRef) -> list[ClassRef]:
        """C3 linearisation (depth-first order when C3 has no solution); ``ref`` first."""
        return self._mro_of(ref, set())

    def _mro_of(self, ref: ClassRef, active: set[ClassRef]) -> list[ClassRef]:
        if ref in self._mro:
            return self._mro[ref]
        if ref in active or not ref.resolved:
            return [ref]
        active = active | {ref}
        bases = self.bases(ref)
        seqs = [list(self._mro_of(b, active)) for b in bases] + [list(bases)]
        merged: list[ClassRef] = [ref]
        ok = True
        while any(seqs):
            for seq in seqs:
                if not seq:
                    continue
                head = seq[0]
                if not any(head in s[1:] for s in seqs):
                    break
            else:
                ok = False
                break
            merged.append(head)
            for s in seqs:
                if s and s[0] == head:
                    del s[0]
        if not ok:
            merged = [ref]
            for b in bases:
                for c in self._mro_of(b, active):
                    if c not in merged:
                        merged.append(c)
        self._mro[ref] = merged
        return merged
