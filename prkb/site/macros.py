"""The site's small HTML pieces (``level_badge``, ``pr_link``, ``change_line``,
``state_name``), written once, in Python: globals of the site's page environment
(``site.render.escaping_env``), called from every page template.

A Jinja macro call costs a new context and frame each time; the PR and builder pages call
these hundreds of times, so they are Python. Every value from the knowledge base is escaped
here exactly as autoescape would escape it in a template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from markupsafe import Markup, escape

Gettext = Callable[..., Markup]


def make_helpers(
    gettext: Gettext, label: Callable[[str, str], str]
) -> dict[str, Callable[..., Markup]]:
    """The helpers of one language (``gettext`` of its catalog, ``label`` its glossary
    filter), as globals for the environment."""
    no_declaration = gettext("no declaration")
    # the profile's methods are named by the matrix legend; a badge's title says no name
    dyn_title, dyn_word = gettext("decided at run time"), gettext("dynamic")
    dynamic = Markup(' <span class="dyn" title="{}">{}</span>').format(dyn_title, dyn_word)
    states = {"merged": gettext("merged"), "open": gettext("open"),
              "closed": gettext("closed, not merged")}

    def level_badge(run: Mapping[str, Any] | None, levels: Any = None) -> Markup:
        del levels  # the macro's signature
        if run is None or run["value"] is None:
            return Markup(f'<span class="badge lvl-none">{no_declaration}</span>')
        level = run["level"]
        # a bool is no level: its spelling and value (``text``, Profile.value_text)
        shown = level or run.get("text") or run["value"]
        cls = (escape(f"lvl-r{run['rank']}") if level
               else "lvl-bool" if run.get("bool") else "lvl-cond")
        title = run["value"] if level else shown
        html = f'<span class="badge {cls}" title="{escape(title)}">{escape(shown)}</span>'
        if not run["dynamic"]:
            return Markup(html)
        text = run.get("level_text")
        if not text or text == shown:  # the badge says the levels already
            return Markup(html) + dynamic
        # the levels the builder can report, with their conditions
        return Markup(html) + Markup(' <span class="dyn" title="{}">{}: {}</span>').format(
            dyn_title, dyn_word, text
        )

    def pr_link(here: str, p: Mapping[str, Any]) -> Markup:
        if p["slug"]:
            return Markup(f'<a class="prlink" href="{escape(here)}pr/{escape(p["slug"])}.html">'
                          f"{escape(p['label'])}</a>")
        return Markup(f'<span class="prlink ext">{escape(p["label"])}</span>')

    def change_line(c: Mapping[str, Any]) -> Markup:
        d = c["direction"]
        return Markup(
            f"<code>{escape(c['class'])}</code>: {escape(c['before'] or '–')} → "
            f"{escape(c['after'] or '–')} <span class=\"dir dir-{escape(d)}\">"
            f"{escape(label(d, 'directions'))}</span>"
        )

    def state_name(s: str) -> Markup:
        got = states.get(s)
        return got if got is not None else escape(s)

    return {"level_badge": level_badge, "pr_link": pr_link, "change_line": change_line,
            "state_name": state_name}
