"""The shorter call paths of compiled templates (``prkb.render.jinja_calls``) say what Jinja
itself says: every way a macro can be called, with and without autoescape; attribute reads
and gettext calls as the direct code generator writes them."""

from __future__ import annotations

import jinja2
import pytest
from markupsafe import Markup

from prkb.paths import templates_dir
from prkb.render.formats import FORMATTERS, related_ref
from prkb.render.jinja_calls import (
    DIRECT_CALLS,
    DirectCodeGenerator,
    FastMacro,
    FastTemplate,
    LinkMarkup,
    PlainCallContext,
    markup_join,
    plain_call,
)

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
        env.code_generator_class = DirectCodeGenerator
    return env


@pytest.mark.parametrize("autoescape", [True, False])
def test_macro_calls_render_as_jinja_renders_them(autoescape: bool) -> None:
    values = {"x": "<i>&", "y": "y'\""}
    want = _env(False, autoescape).from_string(TEMPLATE).render(values)
    got = _env(True, autoescape).from_string(TEMPLATE).render(values)
    assert got == want
    assert ("&lt;i&gt;&amp;" in got) is autoescape  # (the values really are escaped, or not)


def test_plain_macros_are_called_directly_and_the_others_as_jinja_calls_them() -> None:
    """The macros of a fast template are FastMacros: one with plain arguments has its
    function for the direct call, one that reads caller, varargs or kwargs has none (each
    call goes through Macro.__call__)."""
    module = _env(True, True).from_string(TEMPLATE).module
    macros = {name: getattr(module, name) for name in ("two", "dflt", "args", "kws", "wrap")}
    assert all(type(m) is FastMacro for m in macros.values())
    assert {name for name, m in macros.items() if m.direct is not None} == {"two", "dflt"}
    assert (macros["two"].count, macros["dflt"].count) == (2, 2)
    # called from Python (no context), a FastMacro is Jinja's Macro
    assert macros["dflt"]("<x>") == Markup("(&lt;x&gt;,d)")


def test_a_macro_that_stops_an_iteration_renders_as_jinja_renders_it() -> None:
    text = ("{% macro stop(it) %}{{ next(it) }}{% endmacro %}"
            "[{{ stop(it) }}]")
    values = {"it": iter(()), "next": next}
    want = _env(False, True).from_string(text).render(values)
    assert _env(True, True).from_string(text).render(values) == want


def test_a_context_has_the_globals_and_values_jinja_gives_it() -> None:
    """FastTemplate.new_context: a value passed to render wins over a template's own global,
    which wins over the environment's; every name of them is seen, as Jinja sees it."""
    text = "{{ a }} {{ b }} {{ c }} {{ d }} {{ e is defined }}"
    renders = []
    for fast in (False, True):
        env = _env(fast, True)
        env.globals.update(a="env-a", b="env-b", c="env-c")
        template = env.from_string(text, globals={"b": "own-b", "c": "own-c"})
        renders.append(template.render(c="<c>", d="d"))
        if fast:
            context = template.new_context({"c": 1})
            assert context.globals_keys == {*env.globals, "b", "c"}
            assert context.parent["b"] == "own-b" and context.parent["c"] == 1
    assert renders[0] == renders[1] == "env-a own-b &lt;c&gt; d False"


def test_attribute_reads_inline_find_what_jinja_finds() -> None:
    """``x.name`` of a plain dict is read inline: a nested read, a missing key, a dict's own
    attribute, a dict subclass and other objects read as Jinja
    reads them."""
    from collections import defaultdict

    text = ("{{ a.b.c }}|{{ a.b.none is defined }}|{{ a.keys is callable }}|{{ dd.x }}|"
            "{{ dd|length }}|{{ s.upper is callable }}|{{ n.real }}|{{ (a.b).c ~ a.b.c }}|"
            "{% for k in [a, a.b] %}{{ k.b is defined }}{% endfor %}")
    for autoescape in (True, False):
        renders = []
        for fast in (False, True):
            values = {"a": {"b": {"c": "<c>"}}, "dd": defaultdict(str, {"y": 1}), "s": "s",
                      "n": 3}
            renders.append(_env(fast, autoescape).from_string(text).render(values))
        assert renders[0] == renders[1]
    # (Jinja reads a defaultdict by its item too, which adds the key: so does the fast path)
    assert renders[1] == "<c>|False|True||2|True|3|<c><c>|TrueFalse"


def test_a_wrong_call_is_refused_as_jinja_refuses_it() -> None:
    for text in ("{% macro two(a, b) %}{% endmacro %}{{ two(1, 2, 3) }}",
                 "{% macro two(a, b) %}{% endmacro %}{{ two(1, c=2) }}"):
        with pytest.raises(TypeError) as want:
            _env(False, True).from_string(text).render()
        with pytest.raises(TypeError) as got:
            _env(True, True).from_string(text).render()
        assert str(got.value) == str(want.value)


GETTEXT = """
{%- macro said(n) %}{{ _("%(n)s said", n=n) }}{% endmacro -%}
{{ _("plain") }} {{ _("%(a)s and %(b)s", a=x, b=y) }} {{ gettext("%(a)s!", a=d.k) }}
{% for i in [1, 2] %}{{ _("%(n)s said", n=i ~ loop.index) }}{{ said(d.k) }}{% endfor %}
{{ d.k }} {{ d.items }} {{ o.upper() }} {{ d.get("k") }} {{ (d.k ~ x)|length }}
{{ codes([x, d.k], ", ") }}{% for i in [1] %}{{ codes([i]) }}{% endfor %}
{%- block b %} {{ _("%(n)s said", n=y) }} {{ d.k }}{% endblock %}
"""


@pytest.mark.parametrize("autoescape", [True, False])
def test_direct_gettext_and_attributes_render_as_jinja_renders_them(autoescape: bool) -> None:
    calls: list[tuple[str, dict[str, object]]] = []

    @plain_call
    def gettext(msgid: str, **variables: object) -> str:
        calls.append((msgid, variables))
        return msgid % variables if variables else msgid

    @plain_call
    def codes(items: list[object], sep: str = "; ") -> str:
        return sep.join(f"[{x}]" for x in items)

    values = {"x": "<i>&", "y": "y'\"", "d": {"k": "<k>"}, "o": "abc"}
    out = []
    for fast in (False, True):
        env = _env(fast, autoescape)
        env.globals["_"] = env.globals["gettext"] = gettext
        env.globals["codes"] = codes
        out.append(env.from_string(GETTEXT).render(values))
    assert out[0] == out[1]
    # the same calls, with the same variables: none of Jinja's own keywords leak into them
    half = len(calls) // 2
    assert calls[:half] == calls[half:] and all(not k.startswith("_") for _m, v in calls
                                                  for k in v)
    # the compiled code calls gettext directly, and reads attributes through the bound getattr
    source = _env(True, autoescape)
    source.globals["_"] = source.globals["gettext"] = gettext
    source.globals["codes"] = codes
    code = source.compile(GETTEXT, raw=True)
    assert "context.call(l_0__" not in code and "_prkb_getattr(" in code
    assert "l_0_codes)(*()" in code and "context.call((undefined(name='codes')" not in code
    assert "environment.getattr(" not in code


def test_a_gettext_that_needs_the_context_is_called_through_it() -> None:
    env = _env(True, True)
    env.add_extension("jinja2.ext.i18n")
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    # Jinja's own newstyle gettext is a context function: no direct call of it
    assert "context.call(" in env.compile(GETTEXT, raw=True)
    assert env.from_string('{{ _("%(a)s!", a=x) }}').render(x="<b>") == "&lt;b&gt;!"


def test_no_template_binds_the_names_called_directly() -> None:
    env = jinja2.Environment(extensions=["jinja2.ext.i18n"])
    bound: list[str] = []
    files = [p for p in templates_dir().rglob("*") if p.suffix in (".j2", ".html")]
    assert len(files) > 20
    for path in files:
        tree = env.parse(path.read_text(encoding="utf-8"))
        names = {n.name for n in tree.find_all(jinja2.nodes.Name) if n.ctx in ("store", "param")}
        names |= {a.name for m in tree.find_all(jinja2.nodes.Macro) for a in m.args}
        bound += [f"{path.name}: {n}" for n in names & DIRECT_CALLS]
    assert bound == []


@pytest.mark.parametrize("parts", [
    ("#", 12), ("<b>", "&"), (Markup("<i>x</i>"), "<b>", 3), ("a", Markup("<br>")),
    (Markup("<a>"),), (), (1.5, None, "x"), ("q", LinkMarkup.of('<a href="1.html">#1</a>', "#1")),
])
def test_markup_join_joins_as_jinja_joins(parts: tuple[object, ...]) -> None:
    want = jinja2.runtime.markup_join(parts)
    got = markup_join(parts)
    assert got == want and type(got) is type(want)


def test_codes_and_links_keep_their_markup() -> None:
    fmt = FORMATTERS["html"]
    assert fmt.codes(["a<b", None, "c"], "、") == Markup("<code>a&lt;b</code>、、<code>c</code>")
    link = fmt.pr_link("7.html", "#7")
    assert str(link) == '<a class="prlink" href="7.html">#7</a>' and link.text == "#7"
    commit = fmt.pr_link("c.html", Markup("commit <code>abc</code>"))
    assert commit.text == "commit abc" and "<code>abc</code>" in commit
    assert fmt.pr_link('x".html', "<s>") == Markup(
        '<a class="prlink" href="x&#34;.html">&lt;s&gt;</a>')


def test_a_related_prs_reference_in_every_format() -> None:
    """formats.related_ref: ``#N`` or the node key as code, linked on the site when the page
    of that end is known; a commit as the caller words it in its language (None when it does
    not)."""
    html, md, txt = FORMATTERS["html"], FORMATTERS["md"], FORMATTERS["txt"]
    links = {"pr:7": "7.html", "issue:9": "i9.html"}
    got = html.related_ref({"number": 7, "other": 7}, links)
    assert str(got) == '<a class="prlink" href="7.html">#7</a>' and got.text == "#7"
    assert html.related_ref({"number": 8, "other": 8}, links) == "#8"
    assert html.related_ref({"number": 7, "other": 7}, None) == "#7"
    assert html.related_ref({"number": None, "other": "x/y<b>#1"}, links) == Markup(
        "<code>x/y&lt;b&gt;#1</code>")
    assert "<code>issue:9</code>" in html.related_ref({"number": None, "other": "issue:9"}, links)
    assert html.related_ref({"number": None, "other": "commit:abc"}, links) is None
    assert md.related_ref({"number": 7, "other": 7}, links) == "#7"
    assert md.related_ref({"number": None, "other": "x/y"}, None) == "`x/y`"
    assert txt.related_ref({"number": None, "other": "x/y"}, links) == "`x/y`"
    assert txt.related_ref({"number": None, "other": "commit:abc"}, None) is None
    # worded by the caller (render/related_items.py) from its short SHA, linked like a PR
    sha = "commit:0123456789abcdef0123"
    worded = related_ref({"number": None, "other": sha}, {sha: "c.html"}, html.code,
                         html.pr_link, lambda short: Markup(f"commit <code>{short}</code>"))
    assert str(worded) == '<a class="prlink" href="c.html">commit <code>0123456789ab</code></a>'
    assert related_ref({"number": None, "other": sha}, None, md.code, md.pr_link,
                       lambda short: f"commit `{short}`") == "commit `0123456789ab`"
