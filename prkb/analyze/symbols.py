"""Class-level declarations of the tracked symbol family, read with ``ast``.

``parse_classes`` turns one Python source into per-class facts (bases, declared values,
overridden methods, calls made in ``__init__``); ``diff_declarations`` compares two such
readings of one file and yields one :class:`SymbolChange` per (class, attribute) that differs.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

from ..models import SymbolChange
from ..profile import Profile


@dataclass
class CallFact:
    args: list[str]
    keywords: dict[str, str]


@dataclass
class ClassFacts:
    name: str  # qualified within the module: Outer.Inner
    bases: list[str]  # as written: "MLACommonMetadataBuilder", "utils.Base", "Foo[Bar]" -> "Foo"
    lineno: int
    values: dict[str, str] = field(default_factory=dict)  # attr -> normalised value text
    methods: set[str] = field(default_factory=set)
    # calls made anywhere in the class's methods, by called attribute/function name
    calls: dict[str, list[CallFact]] = field(default_factory=dict)
    # method bodies that return a constant string, e.g. get_name() -> "FLASH_ATTN"
    returns_str: dict[str, str] = field(default_factory=dict)
    # method bodies that return a bare name, e.g. get_builder_cls() -> FooBuilder
    returns_name: dict[str, str] = field(default_factory=dict)
    # first and last line of the statements that declare each attribute of ``values`` (an
    # ``if`` block counts whole) and of each method definition (decorators included)
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    # ``values`` as spelled (old level names kept), to tell a level's new name from no change
    spelled: dict[str, str] = field(default_factory=dict)
    # the AST of each watched method (the profile's dynamic-support methods), as text
    method_asts: dict[str, str] = field(default_factory=dict)

    def span_of_line(self, line: int) -> str | None:
        """The attribute or method whose declaration covers ``line``, if any."""
        for name, (first, last) in self.spans.items():
            if first <= line <= last:
                return name
        return None


class SourceError(ValueError):
    """A source that could not be parsed; the message names why."""


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return ast.unparse(node)


def normalize_value(node: ast.expr, profile: Profile, aliases: bool = True) -> str:
    """The level name when ``node`` is exactly one level; else the expression's text. Old
    level names become today's unless ``aliases`` is false (the value as spelled)."""
    target = node
    # unwrap redundant parentheses (ast already drops them) and ClassVar-free forms
    if isinstance(target, ast.Attribute) and target.attr in (
        *profile.levels,
        *profile.level_aliases,
    ):
        return profile.normalize_level(target.attr) if aliases else target.attr
    if isinstance(target, ast.Name) and target.id in (*profile.levels, *profile.level_aliases):
        return profile.normalize_level(target.id) if aliases else target.id
    if isinstance(target, ast.Constant) and isinstance(target.value, bool):
        return "True" if target.value else "False"
    text = ast.unparse(target)
    for old, new in profile.level_aliases.items() if aliases else ():
        text = text.replace(f".{old}", f".{new}")
    return " ".join(text.split())


def _collect_assignments(
    body: list[ast.stmt], names: set[str], profile: Profile, aliases: bool = True
) -> dict[str, str]:
    """Class-body assignments to ``names``; ``if`` blocks become conditional texts."""
    out: dict[str, str] = {}

    def normalize_value(node: ast.expr, profile: Profile) -> str:
        return _normalize(node, profile, aliases)

    for stmt in body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id in names and stmt.value is not None:
                out[stmt.target.id] = normalize_value(stmt.value, profile)
        elif isinstance(stmt, ast.Assign):
            for tgt in stmt.targets:
                if isinstance(tgt, ast.Name) and tgt.id in names:
                    out[tgt.id] = normalize_value(stmt.value, profile)
                elif isinstance(tgt, ast.Tuple | ast.List):
                    for i, elt in enumerate(tgt.elts):
                        if isinstance(elt, ast.Name) and elt.id in names:
                            if isinstance(stmt.value, ast.Tuple | ast.List) and i < len(
                                stmt.value.elts
                            ):
                                out[elt.id] = normalize_value(stmt.value.elts[i], profile)
                            else:
                                out[elt.id] = f"{ast.unparse(stmt.value)}[{i}]"
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id in names:
                prev = out.get(stmt.target.id, "<inherited>")
                op = ast.unparse(ast.BinOp(left=ast.Name("x"), op=stmt.op, right=ast.Name("y")))
                sym = op.split()[1] if len(op.split()) == 3 else "?"
                out[stmt.target.id] = f"{prev} {sym} {ast.unparse(stmt.value)}"
        elif isinstance(stmt, ast.If):
            yes = _collect_assignments(stmt.body, names, profile, aliases)
            no = _collect_assignments(stmt.orelse, names, profile, aliases)
            cond = " ".join(ast.unparse(stmt.test).split())
            for name in set(yes) | set(no):
                a = yes.get(name, out.get(name, "<unset>"))
                b = no.get(name, out.get(name, "<unset>"))
                out[name] = f"{a} if {cond} else {b}"
        elif isinstance(stmt, ast.Try | ast.With):
            inner = list(getattr(stmt, "body", []))
            out.update(_collect_assignments(inner, names, profile, aliases))
    return out


_normalize = normalize_value


def _assigned_names(stmt: ast.stmt) -> set[str]:
    """Names a class-body statement assigns (through ``if``/``try``/``with`` blocks too)."""
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        todo.extend(
            child
            for child in ast.iter_child_nodes(node)
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            )
        )
    return out


def _declaration_spans(body: list[ast.stmt], names: set[str]) -> dict[str, tuple[int, int]]:
    """First and last line of the class-body statements that assign each watched name."""
    spans: dict[str, tuple[int, int]] = {}
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        hit = _assigned_names(stmt) & names
        end = stmt.end_lineno or stmt.lineno
        for name in hit:
            first, last = spans.get(name, (stmt.lineno, end))
            spans[name] = (min(first, stmt.lineno), max(last, end))
    return spans


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def parse_source(source: str, filename: str = "<source>") -> ast.Module:
    """``ast.parse`` with warnings silenced; :class:`SourceError` for invalid Python 3."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        line = getattr(e, "lineno", None)
        where = f" at line {line}" if line else ""
        raise SourceError(f"not valid Python{where}: {getattr(e, 'msg', e)}") from None


def parse_classes(
    source: str,
    profile: Profile,
    extra_attrs: tuple[str, ...] = (),
    calls: tuple[str, ...] = (),
    filename: str = "<source>",
    tree: ast.Module | None = None,
) -> dict[str, ClassFacts]:
    """Facts for every class in ``source`` (nested classes as ``Outer.Inner``).

    ``tree`` is ``parse_source(source)`` when the caller has it already. Raises
    :class:`SourceError` when the source is not valid Python 3.
    """
    if tree is None:
        tree = parse_source(source, filename)
    names = set(profile.family) | set(extra_attrs)
    watched_methods = set(profile.methods)
    # method bodies are walked for calls only when the file names the call at all
    wanted_calls = {c for c in calls if c in source}
    out: dict[str, ClassFacts] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        # classes are statements: walk statement lists only, never expressions
        for child in _child_statements(node):
            if isinstance(child, ast.ClassDef):
                qual = f"{prefix}{child.name}"
                facts = ClassFacts(
                    name=qual,
                    bases=[_base_name(b) for b in child.bases],
                    lineno=child.lineno,
                    values=_collect_assignments(child.body, names, profile),
                    spans=_declaration_spans(child.body, names),
                )
                if profile.level_aliases and facts.values:
                    facts.spelled = _collect_assignments(child.body, names, profile, False)
                for stmt in child.body:
                    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                        facts.methods.add(stmt.name)
                        first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                        facts.spans[stmt.name] = (first, stmt.end_lineno or stmt.lineno)
                        if stmt.name in watched_methods:  # decorators are not the body
                            facts.method_asts[stmt.name] = ast.dump(
                                ast.Module(body=[*stmt.body], type_ignores=[])
                            ) + ast.dump(stmt.args)
                        _method_facts(stmt, facts, wanted_calls)
                out[qual] = facts
                visit(child, f"{qual}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    try:
        visit(tree, "")
    except RecursionError:
        raise SourceError("nested too deeply to read") from None
    return out


_STMT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _child_statements(node: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    for name in _STMT_FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(
                v
                for v in value
                if isinstance(v, ast.stmt | ast.excepthandler) or type(v).__name__ == "match_case"
            )
    return out


def _method_facts(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: ClassFacts, wanted: set[str]
) -> None:
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        val = body[0].value
        if isinstance(val, ast.Constant) and isinstance(val.value, str):
            facts.returns_str[fn.name] = val.value
        elif isinstance(val, ast.Name):
            facts.returns_name[fn.name] = val.id
        elif isinstance(val, ast.Attribute):
            facts.returns_name[fn.name] = val.attr
    if not wanted:
        return
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in wanted:
                facts.calls.setdefault(name, []).append(
                    CallFact(
                        args=[" ".join(ast.unparse(a).split()) for a in node.args],
                        keywords={
                            k.arg: " ".join(ast.unparse(k.value).split())
                            for k in node.keywords
                            if k.arg
                        },
                    )
                )


def direction_of(before: str | None, after: str | None, profile: Profile) -> str:
    if before is None and after is None:
        return "changed"
    if before is None:
        return "added"
    if after is None:
        return "removed"
    if before in ("True", "False") and after in ("True", "False"):
        return "raised" if after == "True" else "lowered"
    rb, ra = profile.level_rank(before), profile.level_rank(after)
    if rb is not None and ra is not None:
        if ra > rb:
            return "raised"
        if ra < rb:
            return "lowered"
        return "unchanged"
    return "changed"


def diff_declarations(
    path: str,
    before: dict[str, ClassFacts] | None,
    after: dict[str, ClassFacts] | None,
    profile: Profile,
) -> list[SymbolChange]:
    """One entry per (class, attribute) whose value differs; renames folded into one entry."""
    before = before or {}
    after = after or {}
    family = profile.family
    methods = set(profile.methods)
    out: list[SymbolChange] = []
    for cls in sorted(set(before) | set(after)):
        b = before.get(cls)
        a = after.get(cls)
        bvals = {k: v for k, v in (b.values if b else {}).items() if k in family}
        avals = {k: v for k, v in (a.values if a else {}).items() if k in family}
        gone = [k for k in bvals if k not in avals]
        new = [k for k in avals if k not in bvals]
        # a class that swaps one spelling for another: one "renamed" (or changed) entry
        if len(gone) == 1 and len(new) == 1:
            old_attr, new_attr = gone[0], new[0]
            bv, av = bvals[old_attr], avals[new_attr]
            if bv == av:
                direction = "renamed"
            else:
                direction = direction_of(bv, av, profile)
                if direction == "unchanged":
                    direction = "renamed"
            out.append(SymbolChange(path, cls, new_attr, bv, av, direction, before_attr=old_attr))
            gone, new = [], []
        for attr in sorted(set(bvals) | set(avals)):
            if attr in gone or attr in new or (attr in bvals and attr in avals):
                bo, ao = bvals.get(attr), avals.get(attr)
                if bo == ao:
                    # the same level under its new name (an old level name replaced)
                    bs = b.spelled.get(attr) if b else None
                    sa = a.spelled.get(attr) if a else None
                    if bo is not None and bs is not None and sa is not None and bs != sa:
                        out.append(SymbolChange(path, cls, attr, bs, ao, "renamed"))
                    continue
                direction = direction_of(bo, ao, profile)
                if direction == "unchanged":
                    direction = "changed"
                out.append(SymbolChange(path, cls, attr, bo, ao, direction))
        bm = (b.methods if b else set()) & methods
        am = (a.methods if a else set()) & methods
        for m in sorted(am - bm):
            out.append(SymbolChange(path, cls, m, None, "overridden", "dynamic-added"))
        for m in sorted(bm - am):
            out.append(SymbolChange(path, cls, m, "overridden", None, "dynamic-removed"))
    return out


def moved_declarations(
    old_path: str,
    path: str,
    before: dict[str, ClassFacts] | None,
    after: dict[str, ClassFacts] | None,
    profile: Profile,
) -> list[SymbolChange]:
    """A file renamed with its classes: one ``moved`` entry per declaration that arrived with
    the same value (what changed on the way is left to :func:`diff_declarations`)."""
    out: list[SymbolChange] = []
    family, methods = set(profile.family), set(profile.methods)
    for cls, a in sorted((after or {}).items()):
        b = (before or {}).get(cls)
        if b is None:
            continue
        for attr in sorted(set(a.values) & set(b.values) & family):
            if a.values[attr] == b.values[attr]:
                out.append(SymbolChange(path, cls, attr, b.values[attr], a.values[attr], "moved",
                                        before_file=old_path))
        for m in sorted(a.methods & b.methods & methods):
            out.append(SymbolChange(path, cls, m, "overridden", "overridden", "moved",
                                    before_file=old_path))
    return out


def pair_moves(changes: list[SymbolChange]) -> list[SymbolChange]:
    """A class that leaves one file and arrives in another in the same commit, with the same
    value: one ``moved`` entry instead of a removal and an addition (which would read as a new
    declaration, maybe a raise)."""
    gone: dict[tuple[str, str], SymbolChange] = {}
    for c in changes:
        if c.direction in ("removed", "dynamic-removed"):
            gone.setdefault((c.class_name.rsplit(".", 1)[-1], c.attr), c)
    used: set[int] = set()
    out: list[SymbolChange] = []
    for c in changes:
        r = gone.get((c.class_name.rsplit(".", 1)[-1], c.attr))
        if (
            c.direction in ("added", "dynamic-added")
            and r is not None
            and id(r) not in used
            and r.file != c.file
            and r.before == c.after
        ):
            used.add(id(r))
            out.append(SymbolChange(c.file, c.class_name, c.attr, r.before, c.after, "moved",
                                    before_file=r.file))
            continue
        out.append(c)
    return [c for c in out if id(c) not in used]
