"""Class-level declarations of the tracked symbol family, read with ``ast``.

``parse_classes`` turns one Python source into per-class facts (bases, declared values,
overridden methods, calls made in the methods, what each overridden dynamic-support method can
return and under which conditions, how ``__init__`` sets the instance attributes the audit
watches);
``diff_declarations`` compares two such readings of one file and yields one
:class:`SymbolChange` per (class, attribute or method) that differs.
"""

from __future__ import annotations

import ast
import bisect
import warnings
from dataclasses import dataclass, field, replace

from ..models import SymbolChange
from ..profile import Profile
from .declscan import class_rows as class_rows_of


@dataclass
class CallFact:
    args: list[str]
    keywords: dict[str, str]


def call_fact(node: ast.Call) -> CallFact:
    """A call's arguments as written (keyword ones by name; ``**`` ones left out)."""
    return CallFact(args=[_text(a) for a in node.args],
                    keywords={k.arg: _text(k.value) for k in node.keywords if k.arg})


def call_argument(call: CallFact, keyword: str, position: int) -> str | None:
    """The argument ``call`` passes as ``keyword`` (when one is named), else the one at
    ``position``, as written; None when it passes neither."""
    if keyword and keyword in call.keywords:
        return call.keywords[keyword]
    return call.args[position] if 0 <= position < len(call.args) else None


@dataclass(frozen=True)
class SupportReturn:
    """One value a dynamic-support method can return, with the conditions that lead to it.

    ``kind``: ``level`` (one level, ``value`` is its name), ``declared`` (the class's own
    declared or inherited level, e.g. ``return cls._cudagraph_support``; ``value`` is the
    expression as written), ``super`` (the parent's method, ``value`` as written), or ``value``
    (any other expression, as text; prkb does not evaluate it).
    ``when``: the conditions, outermost first (``if`` tests, negated for ``else`` branches and
    after an earlier ``return``). ``otherwise``: every condition comes from an earlier branch
    not being taken, so the return reads as the ``else`` of the ones before it.
    """

    kind: str
    value: str
    when: tuple[str, ...] = ()
    otherwise: bool = False


# The test of a local name's value that may have been replaced in an ``if`` or loop of
# ``__init__``: ``InstanceSet.bound`` keeps both values as ``(new) if __if__ else (old)``.
UNKNOWN_TEST = "__if__"


@dataclass(frozen=True)
class InstanceSet:
    """One statement of ``__init__`` (or a call in another method) that sets a watched
    attribute of the instance (``instance_attrs`` of :func:`parse_classes`), in source order.

    ``kind``: ``assign`` (``self.x = value``), ``augassign`` (``self.x op= value``, ``op``
    the operator), ``call`` (a watched call; ``value`` its first positional argument or None,
    ``call`` its arguments) or ``raise`` (``if value: raise op(...)`` in ``__init__``).
    ``conditional``: inside an ``if``, loop or ``except`` block, so it may not run. ``bound``:
    the local names the statement uses that ``__init__`` assigned before it, with the assigned
    expression's text (the last such assignment; one made in a block that may not run keeps the
    value before it too, see ``UNKNOWN_TEST``).
    """

    kind: str
    attr: str
    value: str | None
    op: str | None = None
    call: CallFact | None = None
    conditional: bool = False
    bound: tuple[tuple[str, str], ...] = ()


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
    # the code of each watched method (the profile's dynamic-support methods) as an AST dump,
    # without decorators or docstring and with family spellings made one: its decision logic
    method_asts: dict[str, str] = field(default_factory=dict)

    def span_of_line(self, line: int) -> str | None:
        """The attribute or method whose declaration covers ``line``, if any."""
        for name, (first, last) in self.spans.items():
            if first <= line <= last:
                return name
        return None
    # overridden dynamic-support methods (profile.methods) -> what they can return
    support: dict[str, list[SupportReturn]] = field(default_factory=dict)
    # how the instance's watched attributes are set (``instance_attrs`` of parse_classes)
    sets: list[InstanceSet] = field(default_factory=list)
    # class-body names bound to a literal (bool, int, None), for reading flags: name -> text
    consts: dict[str, str] = field(default_factory=dict)
    # whether __init__ runs the parent's __init__ (None: the class defines no __init__)
    init_calls_super: bool | None = None
    # every name the class body assigns, in order (an enum's members)
    names: list[str] = field(default_factory=list)


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


def _decision_logic(fn: ast.FunctionDef | ast.AsyncFunctionDef, profile: Profile) -> str:
    """What a dynamic-support method computes besides its branches and returns (which its
    returns' text already says): its arguments and every other statement, as AST dumps, with
    family spellings made one. Decorators, the docstring and the shape of the ``if``/``return``
    structure (an early return or an ``else``) do not count."""
    body = fn.body[1:] if ast.get_docstring(fn) else fn.body
    parts = [ast.dump(fn.args)]
    for node in ast.walk(ast.Module(body=[*body], type_ignores=[])):
        if isinstance(node, ast.stmt) and not isinstance(node, ast.If | ast.Return | ast.Pass):
            parts.append(ast.dump(node))
    return profile.family_regex.sub(profile.display, "\n".join(sorted(parts)))


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
    instance_attrs: tuple[str, ...] = (),
) -> dict[str, ClassFacts]:
    """Facts for every class in ``source`` (nested classes as ``Outer.Inner``).

    ``extra_attrs``: class-body attributes read besides the family. ``calls``: method calls
    recorded (``ClassFacts.calls``). ``instance_attrs``: instance attributes whose setting in
    ``__init__`` is recorded in order, with the ``calls`` made there (``ClassFacts.sets``).
    ``tree`` is ``parse_source(source)`` when the caller has it already. Raises
    :class:`SourceError` when the source is not valid Python 3.
    """
    if tree is None:
        tree = parse_source(source, filename)
    names = set(profile.family) | set(extra_attrs)
    watched_methods = set(profile.methods)
    # method bodies are walked for calls only when the file names the call at all
    wanted_calls = {c for c in calls if c in source}
    wanted_attrs = {a for a in instance_attrs if a in source}
    methods = set(profile.methods)
    out: dict[str, ClassFacts] = {}
    # the lines that name a wanted call or attribute: a method whose lines hold none of them
    # has nothing to record and is not walked (most methods of a large backend file)
    hits = _lines_naming(source, wanted_calls | wanted_attrs)

    class_rows = [row + 1 for row, _ in class_rows_of(source)]  # 1-based, as ast's

    def holds_class(node: ast.AST, inner: bool = False) -> bool:
        """Whether a ``class`` statement starts within ``node``'s lines (after its first line
        when ``inner``): only such statements are walked into, looking for classes."""
        first = getattr(node, "lineno", 0) + (1 if inner else 0)
        i = bisect.bisect_left(class_rows, first)
        return i < len(class_rows) and class_rows[i] <= (getattr(node, "end_lineno", 0) or 0)

    def mentions(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        i = bisect.bisect_left(hits, fn.lineno)
        return i < len(hits) and hits[i] <= (fn.end_lineno or fn.lineno)

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
                )
                if facts.values:  # the statements behind them (none to find otherwise)
                    facts.spans = _declaration_spans(child.body, names)
                if profile.level_aliases and facts.values:
                    facts.spelled = _collect_assignments(child.body, names, profile, False)
                facts.consts = _class_consts(child.body)
                facts.names = _body_names(child.body)
                later: list[InstanceSet] = []
                for stmt in child.body:
                    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                        facts.methods.add(stmt.name)
                        first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                        facts.spans[stmt.name] = (first, stmt.end_lineno or stmt.lineno)
                        if stmt.name in watched_methods:
                            facts.method_asts[stmt.name] = _decision_logic(stmt, profile)
                        named = mentions(stmt)
                        _method_facts(stmt, facts, wanted_calls if named else set())
                        if stmt.name in methods:
                            facts.support[stmt.name] = support_returns(stmt, profile)
                        if stmt.name == "__init__":
                            facts.init_calls_super = _calls_parent_init(stmt)
                            if named and (wanted_attrs or wanted_calls):
                                facts.sets = instance_sets(
                                    stmt, wanted_attrs, wanted_calls, raises=True
                                )
                        elif wanted_calls and named:
                            later.extend(
                                s for s in instance_sets(stmt, set(), wanted_calls)
                                if s.kind == "call"
                            )
                facts.sets.extend(later)
                out[qual] = facts
                if holds_class(child, inner=True):
                    visit(child, f"{qual}.")
            elif not holds_class(child):
                continue  # no class statement among its lines: nothing to find inside
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


def _lines_naming(source: str, names: set[str]) -> list[int]:
    """Sorted 1-based numbers of the lines where any of ``names`` occurs (as text)."""
    rows: set[int] = set()
    for name in names:
        at = source.find(name)
        while at >= 0:
            rows.add(source.count("\n", 0, at) + 1)
            at = source.find(name, at + len(name))
    return sorted(rows)


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
                facts.calls.setdefault(name, []).append(call_fact(node))


def _text(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def negate(test: ast.expr) -> str:
    """The text of ``not test``: ``not not x`` reads as ``x``, ``not a == b`` as ``a != b``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _text(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        inverse = _INVERSE.get(type(test.ops[0]))
        if inverse is not None:
            return _text(ast.Compare(left=test.left, ops=[inverse()], comparators=test.comparators))
    return _text(ast.UnaryOp(op=ast.Not(), operand=test))


_INVERSE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
    ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


def _body_names(body: list[ast.stmt]) -> list[str]:
    """The simple names a class body assigns (``X = ...``, ``X: T = ...``), in order."""
    out: list[str] = []
    for stmt in body:
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        out.extend(t.id for t in targets if isinstance(t, ast.Name) and t.id not in out)
    return out


def _class_consts(body: list[ast.stmt]) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt in body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and (value.value is None or isinstance(value.value, bool | int))
        ):
            out[target.id] = repr(value.value)
    return out


def _calls_parent_init(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``super().__init__(...)`` or ``Base.__init__(self, ...)`` anywhere in ``fn``."""
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
        ):
            return True
    return False


def _instance_attr(node: ast.expr, attrs: set[str]) -> str | None:
    """``self.x`` / ``self.__class__.x`` / ``type(self).x`` with ``x`` in ``attrs``."""
    if not isinstance(node, ast.Attribute) or node.attr not in attrs:
        return None
    owner = node.value
    if isinstance(owner, ast.Name) and owner.id == "self":
        return node.attr
    if (
        isinstance(owner, ast.Attribute)
        and owner.attr == "__class__"
        and isinstance(owner.value, ast.Name)
        and owner.value.id == "self"
    ):
        return node.attr
    if (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "type"
        and len(owner.args) == 1
        and isinstance(owner.args[0], ast.Name)
        and owner.args[0].id == "self"
    ):
        return node.attr
    return None


def _op_symbol(op: ast.operator) -> str:
    text = ast.unparse(ast.BinOp(left=ast.Name("x"), op=op, right=ast.Name("y")))
    parts = text.split()
    return parts[1] if len(parts) == 3 else "?"


def instance_sets(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, attrs: set[str], calls: set[str],
    *, raises: bool = False,
) -> list[InstanceSet]:
    """The statements of ``fn`` that set one of ``attrs`` on the instance, or call one of
    ``calls``, in source order (nested functions and classes are not entered). ``raises``:
    also each ``if <test>: raise E(...)`` of the method (kind ``raise``: ``value`` the test,
    ``op`` the exception's name) and each ``assert <test>`` (``value`` the negated test, ``op``
    ``AssertionError``), which bound what the settings after them can reach."""
    out: list[InstanceSet] = []
    local: dict[str, str] = {}

    def bound(node: ast.AST) -> tuple[tuple[str, str], ...]:
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        return tuple(sorted((k, v) for k, v in local.items() if k in used))

    def calls_in(node: ast.AST, conditional: bool) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and _call_name(sub) in calls:
                fact = call_fact(sub)
                first = fact.args[0] if fact.args else None
                out.append(
                    InstanceSet("call", str(_call_name(sub)), first, call=fact,
                                 conditional=conditional, bound=bound(sub))
                )

    def walk(body: list[ast.stmt], conditional: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                value = stmt.value
                if value is not None:
                    calls_in(value, conditional)
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for tgt in targets:
                    attr = _instance_attr(tgt, attrs)
                    if attr is not None and value is not None:
                        if isinstance(stmt, ast.AugAssign):
                            out.append(InstanceSet("augassign", attr, _text(value),
                                                    op=_op_symbol(stmt.op),
                                                    conditional=conditional,
                                                    bound=bound(value)))
                        else:
                            out.append(InstanceSet("assign", attr, _text(value),
                                                    conditional=conditional,
                                                    bound=bound(value)))
                    elif isinstance(tgt, ast.Name) and value is not None:
                        if isinstance(stmt, ast.AugAssign):
                            local.pop(tgt.id, None)
                        elif conditional and tgt.id in local:
                            # either value: a conditional expression on an unknown test
                            old = local[tgt.id]
                            local[tgt.id] = f"({_text(value)}) if {UNKNOWN_TEST} else ({old})"
                        elif not conditional:
                            local[tgt.id] = _text(value)
                continue
            if isinstance(stmt, ast.If):
                calls_in(stmt.test, conditional)
                if raises and stmt.body and isinstance(stmt.body[0], ast.Raise) \
                        and not stmt.orelse and stmt.body[0].exc is not None:
                    exc = stmt.body[0].exc
                    name = exc.func if isinstance(exc, ast.Call) else exc
                    out.append(InstanceSet("raise", "", _text(stmt.test),
                                            op=ast.unparse(name), conditional=conditional))
                walk(stmt.body, True)
                walk(stmt.orelse, True)
            elif isinstance(stmt, ast.Assert):
                calls_in(stmt.test, conditional)
                if raises:  # ``assert t`` raises when ``not t`` (unless Python runs with -O)
                    out.append(InstanceSet("raise", "", negate(stmt.test),
                                            op="AssertionError", conditional=conditional))
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                calls_in(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, conditional)
                walk(stmt.body, True)
                walk(stmt.orelse, True)
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                for item in stmt.items:
                    calls_in(item.context_expr, conditional)
                walk(stmt.body, conditional)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                walk(stmt.body, conditional)
                for h in stmt.handlers:
                    walk(h.body, True)
                walk(stmt.orelse, True)
                walk(stmt.finalbody, conditional)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    walk(case.body, True)
            else:
                calls_in(stmt, conditional)

    walk(fn.body, False)
    return out


def _receiver_is_class(node: ast.expr) -> bool:
    """``cls``, ``self``, ``type(self)`` or ``self.__class__``: the class being asked."""
    if isinstance(node, ast.Name):
        return node.id in ("cls", "self")
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__" and isinstance(node.value, ast.Name)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
    )


def _is_super_call(node: ast.expr, methods: set[str]) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "super"
    )


def support_returns(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, profile: Profile
) -> list[SupportReturn]:
    """What the dynamic-support method ``fn`` can return, each with its conditions.

    Conditions are the enclosing ``if`` tests (negated in ``else`` branches); a branch that
    always returns makes the statements after it conditional on its test not holding; a
    conditional expression (``A if c else B``) splits a return in two. Loops, ``with`` and
    ``try`` blocks add no condition of their own. Nested functions are not entered.
    """
    levels = set(profile.levels) | set(profile.level_aliases)
    family = set(profile.family)
    methods = set(profile.methods)
    out: list[SupportReturn] = []
    # a condition: (text, whether it comes from a branch not taken)

    def add(expr: ast.expr | None, conds: list[tuple[str, bool]]) -> None:
        if isinstance(expr, ast.IfExp):
            add(expr.body, [*conds, (_text(expr.test), False)])
            add(expr.orelse, [*conds, (negate(expr.test), True)])
            return
        when = tuple(c for c, _ in conds)
        otherwise = bool(conds) and all(d for _, d in conds)
        if expr is None:
            out.append(SupportReturn("value", "None", when, otherwise))
        elif isinstance(expr, ast.Attribute) and expr.attr in levels:
            out.append(SupportReturn("level", profile.normalize_level(expr.attr), when, otherwise))
        elif isinstance(expr, ast.Name) and expr.id in levels:
            out.append(SupportReturn("level", profile.normalize_level(expr.id), when, otherwise))
        elif (
            isinstance(expr, ast.Attribute)
            and expr.attr in family
            and _receiver_is_class(expr.value)
        ):
            out.append(SupportReturn("declared", _text(expr), when, otherwise))
        elif _is_super_call(expr, methods):
            out.append(SupportReturn("super", _text(expr), when, otherwise))
        else:
            out.append(SupportReturn("value", normalize_value(expr, profile), when, otherwise))

    def walk(body: list[ast.stmt], conds: list[tuple[str, bool]]) -> bool:
        """Walk a block; True when every path through it returns or raises."""
        cur = list(conds)
        for stmt in body:
            if isinstance(stmt, ast.Return):
                add(stmt.value, cur)
                return True
            if isinstance(stmt, ast.Raise):
                return True
            if isinstance(stmt, ast.If):
                yes = walk(stmt.body, [*cur, (_text(stmt.test), False)])
                no = walk(stmt.orelse, [*cur, (negate(stmt.test), True)])
                if yes and no:
                    return True
                if yes:
                    cur = [*cur, (negate(stmt.test), True)]
                elif no:
                    cur = [*cur, (_text(stmt.test), True)]
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                walk(stmt.body, cur)
                walk(stmt.orelse, cur)
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                if walk(stmt.body, cur):
                    return True
            elif isinstance(stmt, ast.Try | ast.TryStar):
                body_ends = walk(stmt.body, cur)
                handlers_end = [walk(h.body, cur) for h in stmt.handlers]
                walk(stmt.orelse, cur)
                if walk(stmt.finalbody, cur):
                    return True
                if body_ends and all(handlers_end):
                    return True
            elif isinstance(stmt, ast.Match):
                subject = _text(stmt.subject)
                for case in stmt.cases:
                    walk(case.body, [*cur, (f"{subject} matches {_text(case.pattern)}", False)])
        return False

    walk(fn.body, [])
    return out


def support_text(returns: list[SupportReturn]) -> str:
    """The returns as one readable line: ``UNIFORM_BATCH if c; else NEVER``."""
    if not returns:
        return "no return"
    parts = []
    for i, r in enumerate(returns):
        if not r.when:
            parts.append(r.value)
        elif r.otherwise and i > 0:
            parts.append(f"else {r.value}")
        else:
            parts.append(f"{r.value} if {' and '.join(r.when)}")
    return "; ".join(parts)


def _int(text: str) -> int | None:
    """An int literal as written (``512``, ``-1``, ``1_024``, ``0x10``); None otherwise."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = node.operand
        if isinstance(inner, ast.Constant) and type(inner.value) is int:
            return -inner.value if isinstance(node.op, ast.USub) else inner.value
        return None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def direction_of(before: str | None, after: str | None, profile: Profile,
                 attr: str | None = None) -> str:
    """How a value went from ``before`` to ``after`` (None: absent), by the kind of value
    (``Profile.kind_of``): an int is compared as a number, an enum by the profile's order of
    levels, a bool of a ``bool`` profile is enabled or disabled; a value without an order (a
    ``str``, an ``expr``, an expression of an ordered kind) only "changed"."""
    if before is None and after is None:
        return "changed"
    if before is None:
        return "added"
    if after is None:
        return "removed"
    kind = profile.kind_of(attr) if attr is not None else profile.kind
    if kind == "int":
        b, a = _int(before), _int(after)
        if b is None or a is None:
            return "changed" if before != after else "unchanged"
        return "raised" if a > b else "lowered" if a < b else "unchanged"
    if kind in ("str", "expr"):
        return "changed" if before != after else "unchanged"
    if before in ("True", "False") and after in ("True", "False"):
        if profile.kind == "bool":
            return "unchanged" if before == after else (
                "enabled" if after == "True" else "disabled")
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
    old_path: str | None = None,
) -> list[SymbolChange]:
    """One entry per (class, attribute) whose value differs; renames folded into one entry.

    ``old_path``: the file's path on the ``before`` side when the change renamed it. A class
    only on that side is filed there (where it lived; it never was at ``path``); a change of
    a class on both sides, which went along with its file, is filed at ``path`` and names
    ``old_path`` as its ``before_file``."""
    if old_path is not None and old_path != path:
        return [
            replace(c, file=old_path) if c.class_name not in (after or {})
            else replace(c, before_file=old_path) if c.class_name in (before or {}) else c
            for c in diff_declarations(path, before, after, profile)
        ]
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
                direction = direction_of(bv, av, profile, new_attr)
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
                direction = direction_of(bo, ao, profile, attr)
                if direction == "unchanged":
                    direction = "changed"
                out.append(SymbolChange(path, cls, attr, bo, ao, direction))
        bm = (b.methods if b else set()) & methods
        am = (a.methods if a else set()) & methods
        for m in sorted(am | bm):
            bt = _override_text(b, m) if m in bm else None
            at = _override_text(a, m) if m in am else None
            if bt is None and at is not None:
                out.append(SymbolChange(path, cls, m, None, at, "dynamic-added"))
            elif at is None and bt is not None:
                out.append(SymbolChange(path, cls, m, bt, None, "dynamic-removed"))
            elif bt != at and _spelling_free(bt, profile) != _spelling_free(at, profile):
                # (a return of the class's attribute under its new spelling is no change)
                out.append(SymbolChange(path, cls, m, bt, at, "dynamic-changed"))
            elif b is not None and a is not None and b.method_asts.get(m) != a.method_asts.get(m):
                # the same returns, decided by conditions now computed another way
                out.append(SymbolChange(path, cls, m, bt, f"{at} {COMPUTED_ANEW}",
                                        "dynamic-changed"))
    return out


COMPUTED_ANEW = "(conditions now computed differently)"


def _spelling_free(text: str | None, profile: Profile) -> str | None:
    """``text`` with every family spelling made one (renames of the returned attribute)."""
    return None if text is None else profile.family_regex.sub(profile.display, text)


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
            bt, at = _override_text(b, m), _override_text(a, m)
            if bt == at:
                out.append(SymbolChange(path, cls, m, bt, at, "moved", before_file=old_path))
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
def _override_text(facts: ClassFacts | None, method: str) -> str:
    """The value text of an overridden dynamic-support method (its returns with conditions);
    ``overridden`` when the method's returns were not read."""
    if facts is None or method not in facts.support:
        return "overridden"
    return support_text(facts.support[method])
