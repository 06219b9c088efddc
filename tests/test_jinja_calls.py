"""The shorter call paths of compiled templates (``prkb.render.jinja_calls``) say what Jinja
itself says: every way a macro can be called, with and without autoescape."""

from __future__ import annotations

import jinja2
import pytest

from prkb.render.jinja_calls import FastTemplate, PlainCallContext

TEMPLATE = """
{%- macro two(a, b) %}[{{ a }}|{{ b }}]{% endmacro -%}
{%- macro dflt(a, b="d") %}({{ a }},{{ b }}){% endmacro -%}
{%- macro args() %}<{{ varargs|join(",") }}>{% endmacro -%}
{%- macro kws(a) %}{{ a }}:{{ kwargs|dictsort }}{% endmacro -%}
{%- macro wrap(a) %}{ {{ a }} {{ caller() }} }{% endmacro -%}
{{ two(x, "<b>") }} {{ two(a=x, b=1) }} {{ two(x, b=2) }} {{ dflt(x) }} {{ dflt(x, y) }}
{{ args(1, x) }} {{ kws(x, k=3) }} {% call wrap(x) %}in {{ x }}{% endcall %}
{% for i in [1, 2] %}{{ two(i, loop.index) }}{% endfor %} {{ two(x) }}
{% set m = two %}{{ m(y, x) }} {{ dflt(*[x]) }}
"""


def _env(fast: bool, autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(autoescape=autoescape)
    if fast:
        env.context_class = PlainCallContext
        env.template_class = FastTemplate
    return env


@pytest.mark.parametrize("autoescape", [True, False])
def test_macro_calls_render_as_jinja_renders_them(autoescape: bool) -> None:
    values = {"x": "<i>&", "y": "y'\""}
    want = _env(False, autoescape).from_string(TEMPLATE).render(values)
    got = _env(True, autoescape).from_string(TEMPLATE).render(values)
    assert got == want
    assert ("&lt;i&gt;&amp;" in got) is autoescape  # (the values really are escaped, or not)


def test_a_wrong_call_is_refused_as_jinja_refuses_it() -> None:
    for text in ("{% macro two(a, b) %}{% endmacro %}{{ two(1, 2, 3) }}",
                 "{% macro two(a, b) %}{% endmacro %}{{ two(1, c=2) }}"):
        with pytest.raises(TypeError) as want:
            _env(False, True).from_string(text).render()
        with pytest.raises(TypeError) as got:
            _env(True, True).from_string(text).render()
        assert str(got.value) == str(want.value)
