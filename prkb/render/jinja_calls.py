"""A shorter path for template calls of plain Python functions.

Jinja calls every function from a template through ``Context.call``, which looks for
``pass_context``-style markers on each call. Pages that call a few helpers hundreds of times
mark those helpers with :func:`plain_call` and render with :class:`PlainCallContext`
(``env.context_class``): a marked function is called directly, as Jinja itself would call a
function that takes no context. Output is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import jinja2.runtime

F = TypeVar("F", bound=Callable[..., Any])


def plain_call(fn: F) -> F:
    """Mark ``fn`` (a function that takes no Jinja context) for the direct call."""
    setattr(fn, "_plain_call", True)  # noqa: B010 (a function attribute)
    return fn


class PlainCallContext(jinja2.runtime.Context):
    """Jinja's context; calls of functions marked by :func:`plain_call` skip the checks."""

    def call(__self, __obj: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if getattr(__obj, "_plain_call", False):
            if kwargs:  # what Jinja adds inside loops and blocks for context functions
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
            return __obj(*args, **kwargs)
        return super().call(__obj, *args, **kwargs)
