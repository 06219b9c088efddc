"""Shorter paths for what compiled templates do most: calls of plain Python functions, and
the escaping of values that are already safe.

Jinja calls every function from a template through ``Context.call``, which looks for
``pass_context``-style markers on each call. Pages that call a few helpers hundreds of times
mark those helpers with :func:`plain_call` and render with :class:`PlainCallContext`
(``env.context_class``): a marked function is called directly, as Jinja itself would call a
function that takes no context. Two kinds of callable the templates call most are known
without looking: a macro (:class:`jinja2.runtime.Macro`, whose ``__call__`` takes the eval
context) and a built-in function or method (``dict.get``: it carries no marker).

Under autoescape, every ``{{ value }}`` goes through ``markupsafe.escape``, which makes a new
:class:`~markupsafe.Markup` even of a value that is one already (catalog messages, the
formatter's tags and filters' results: most of a report's values). :class:`FastTemplate`
(``env.template_class``) gives its compiled code an ``escape`` that hands such a value back
as it is (and escapes a short plain string once), a ``Markup`` that wraps a plain string
without the checks of ``Markup.__new__``, and a ``markup_join`` (``a ~ b``) that does not copy
the markup it joins. :class:`DirectCodeGenerator` (``env.code_generator_class``) writes
``x.name`` and gettext calls shorter. Output is unchanged.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from types import BuiltinFunctionType, CodeType
from typing import Any, TypeVar, cast

import jinja2
import jinja2.runtime
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.runtime import Macro, missing
from markupsafe import Markup, escape

F = TypeVar("F", bound=Callable[..., Any])

_new_str = str.__new__


def plain_call(fn: F) -> F:
    """Mark ``fn`` (a function that takes no Jinja context) for the direct call."""
    setattr(fn, "_plain_call", True)  # noqa: B010 (a function attribute)
    return fn


class PlainCallContext(jinja2.runtime.Context):
    """Jinja's context; calls of functions marked by :func:`plain_call`, of macros and of
    built-in functions skip the checks (each is called as ``Context.call`` would call it)."""

    def call(__self, __obj: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        kind = type(__obj)
        if kind is FastMacro or kind is Macro:
            if kwargs:  # what Jinja adds inside loops and blocks for context functions
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
            try:
                if kind is FastMacro:
                    macro = cast(FastMacro, __obj)
                    direct, count = macro.direct, macro.count
                    if direct is not None and not kwargs and len(args) <= count:
                        # what Macro.__call__ does with positional arguments only: the
                        # missing ones are `missing` (the macro's body puts in their defaults)
                        rv = direct(*args, *(missing,) * (count - len(args)))
                        return as_markup(rv) if __self.eval_ctx.autoescape else rv
                # Macro.__call__ is pass_eval_context: Context.call hands it the eval context
                return __obj(__self.eval_ctx, *args, **kwargs)
            except StopIteration:  # as Context.call answers it
                return __self.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception")
        if kind is BuiltinFunctionType or getattr(__obj, "_plain_call", False):
            # a built-in (dict.get, str.split...) cannot carry Jinja's pass_* marker
            if kwargs:  # what Jinja adds inside loops and blocks for context functions
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
            return __obj(*args, **kwargs)
        return super().call(__obj, *args, **kwargs)


class FastMacro(Macro):
    """Jinja's :class:`~jinja2.runtime.Macro` (what a template's ``{% macro %}`` makes, see
    :class:`FastTemplate`), which :class:`PlainCallContext` calls without the argument
    matching of ``Macro.__call__`` when it can: a macro that takes no ``caller``, ``varargs``
    or ``kwargs``, called with positional arguments only. ``direct``: the macro's function
    for that call (None: every call goes through ``Macro.__call__``); ``count``: how many
    arguments it takes. Called any other way, it is Jinja's ``Macro``."""

    def __init__(
        self,
        environment: jinja2.Environment,
        func: Callable[..., str],
        name: str,
        arguments: list[str],
        catch_kwargs: bool,
        catch_varargs: bool,
        caller: bool,
        default_autoescape: bool | None = None,
    ) -> None:
        super().__init__(environment, func, name, arguments, catch_kwargs, catch_varargs,
                         caller, default_autoescape)
        plain = not (catch_kwargs or catch_varargs or caller or environment.is_async
                     or "caller" in arguments)
        self.direct: Callable[..., str] | None = func if plain else None
        self.count = len(arguments)


# short plain strings already escaped, by their text: a site's pages escape the same few
# thousand values (relative paths, labels, level names, dates) millions of times. Bounded: a
# full table is emptied (the frequent values come back at once). A Markup is immutable, so one
# object serves every page.
_ESCAPED: dict[str, Markup] = {}
_ESCAPED_LIMIT = 8192
_ESCAPED_LEN = 120  # longer values (titles, quotes) rarely repeat


class LinkMarkup(Markup):
    """The markup of a link whose reader sees ``text`` (a Chinese sentence spaces the link by
    that text, as it spaces the text alone: ``render.i18n.cjk_spaced``)."""

    text: str

    @classmethod
    def of(cls, html: str, text: str) -> LinkMarkup:
        """The link ``html`` (already markup: not escaped again) a reader sees as ``text``."""
        made: LinkMarkup = _new_str(cls, html)
        made.text = text
        return made


def safe_escape(value: Any) -> Markup:
    """``markupsafe.escape``, but a :class:`Markup` is returned as it is (its ``__html__``
    is itself: ``escape`` would copy it into a new, equal one), and a short plain string is
    escaped once (the same Markup for the same text)."""
    kind = type(value)
    if kind is Markup:
        return value
    if kind is str:
        got = _ESCAPED.get(value)
        if got is not None:
            return got
        got = escape(value)
        if len(value) <= _ESCAPED_LEN:
            if len(_ESCAPED) >= _ESCAPED_LIMIT:
                _ESCAPED.clear()
            _ESCAPED[value] = got
        return got
    return escape(value)


def markup_join(seq: Iterable[Any]) -> str:
    """``jinja2.runtime.markup_join`` (what ``a ~ b`` compiles to under autoescape): the parts
    as text, or, when one of them is markup, the parts joined as markup (each plain part
    escaped), with :func:`safe_escape` (a Markup part is not copied)."""
    parts = [x if isinstance(x, str) else str(x) for x in seq]  # what Jinja's soft_str does
    for x in parts:
        if hasattr(x, "__html__"):
            return _new_str(Markup, "".join([safe_escape(p) for p in parts]))
    return "".join(parts)


def as_markup(value: Any = "") -> Markup:
    """``Markup(value)``: a plain string (what compiled templates join) wrapped directly."""
    if type(value) is str:
        return _new_str(Markup, value)
    return Markup(value)


# the names a template calls directly when the environment's global of that name is a
# plain_call function (its gettext; the report formatter's codes and num): not through
# Context.call
DIRECT_CALLS = frozenset({"_", "gettext", "codes", "num"})
# what FastTemplate's compiled code calls for ``x.name`` (the environment's getattr), the
# names its inline test of a plain dict reads, and the local that holds the object tested
_GETATTR = "_prkb_getattr"
_TYPE, _DICT, _OBJ = "_prkb_type", "_prkb_dict", "_prkb_obj"
# the names a dict has as attributes: for those, ``x.name`` is the attribute (Jinja's getattr
# tries the attribute first), never the item
_DICT_ATTRS = frozenset(dir(dict))


class DirectCodeGenerator(CodeGenerator):
    """Jinja's code generator, with two shorter paths in the code it writes (the same
    result):

    - ``x.name`` calls the environment's ``getattr`` bound once per template
      (``_prkb_getattr``, set by :class:`FastTemplate`), not looked up on the environment
      at every access (a report does it hundreds of times);
    - a call of a name of :data:`DIRECT_CALLS` (``_("...", n=x)``, ``codes(xs, sep)``) is a
      direct call when the environment's global of that name is a :func:`plain_call`
      function when the template compiles (its escaping gettext, the formatter's methods:
      what ``Context.call`` would call the same way). The templates never bind those names
      themselves (``tests/test_jinja_calls.py``), no render passes a value of those names,
      and an environment sets its globals before it compiles a template; its compiled
      templates are kept in a bytecode cache of their own (``render.i18n.language_cache``).
    """

    @optimizeconst  # as Jinja's: a constant expression is folded first
    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        if self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        attr = node.attr
        if attr in _DICT_ATTRS:  # a dict's own attribute: what getattr finds first
            self.write(f"{_GETATTR}(")
            self.visit(node.node, frame)
            self.write(f", {attr!r})")
            return
        # a plain dict's item inline, without a call; anything else (a missing key, another
        # object) through the environment's getattr. The object is evaluated once, into a
        # local of the render function (each use is read right after it is set)
        self.write(f"({_OBJ}[{attr!r}] if {_TYPE}({_OBJ} := ")
        self.visit(node.node, frame)
        self.write(f") is {_DICT} and {attr!r} in {_OBJ} else {_GETATTR}({_OBJ}, {attr!r}))")

    @optimizeconst
    def visit_Call(self, node: nodes.Call, frame: Frame, forward_caller: bool = False) -> None:
        callee = node.node
        env = self.environment
        if (forward_caller or env.is_async or env.sandboxed
                or not isinstance(callee, nodes.Name) or callee.name not in DIRECT_CALLS
                or not getattr(env.globals.get(callee.name), "_plain_call", False)):
            super().visit_Call(node, frame, forward_caller=forward_caller)
            return
        self.visit(callee, frame)
        self.write("(*()")  # the arguments are written each after a comma
        self.signature(node, frame)
        self.write(")")


class FastTemplate(jinja2.Template):
    """A template whose compiled code escapes with :func:`safe_escape`, wraps with
    :func:`as_markup` and joins with :func:`markup_join` (the names it imports from
    ``jinja2.runtime``, replaced in its own namespace only), and reads ``x.name`` through the
    environment's ``getattr`` bound once (:class:`DirectCodeGenerator`)."""

    @classmethod
    def from_code(
        cls,
        environment: jinja2.Environment,
        code: CodeType,
        globals: MutableMapping[str, Any],
        uptodate: Callable[[], bool] | None = None,
    ) -> jinja2.Template:
        rv = super().from_code(environment, code, globals, uptodate)
        # the namespace the template's code ran in: every render function of it reads these
        namespace = rv.root_render_func.__globals__
        namespace["escape"] = safe_escape
        namespace["Markup"] = as_markup
        namespace["markup_join"] = markup_join
        namespace[_GETATTR] = environment.getattr
        namespace[_TYPE] = type
        namespace[_DICT] = dict
        namespace["Macro"] = FastMacro
        return rv

    def new_context(
        self,
        vars: dict[str, Any] | None = None,
        shared: bool = False,
        locals: Mapping[str, Any] | None = None,
    ) -> jinja2.runtime.Context:
        """Jinja's ``new_context``: a context of the template's globals and ``vars`` (``vars``
        first), with the globals read map by map (``dict.update``), not key by key through
        the ``ChainMap`` Jinja keeps them in (a tenth of a small template's rendering)."""
        globals_ = self.globals
        if shared or locals or type(globals_) is not ChainMap:
            return super().new_context(vars, shared, locals)
        flat: dict[str, Any] = {}
        for layer in reversed(globals_.maps):  # the first map wins, as in the ChainMap
            flat.update(layer)
        parent = dict(flat)
        if vars:
            parent.update(vars)
        return self.environment.context_class(self.environment, parent, self.name,
                                              self.blocks, globals=flat)
