"""The long lists of a builder's page written in Python: the points of its chart, its runs
(each value it held, newest first) and the PRs that changed it.

A builder that many PRs changed has hundreds of each; as loops of ``site/builder.html`` they
took most of the page (5.5 ms at 10,000 PRs, thousands of escapes and expressions). These
write the same text: every value from the knowledge base escaped as autoescape escapes it,
the markup the template wrote, its whitespace (``trim_blocks``, ``lstrip_blocks``) included.
``tests/test_site_builder_lists.py`` holds them to the loops they replaced
(``tests/golden/builder_before.html``), in both languages, with hostile values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

Helper = Callable[..., Markup]


def make_builder_lists(
    gettext: Helper, level_badge: Helper, state_name: Helper, change_line: Helper,
) -> dict[str, Helper]:
    """The lists of one language: globals ``chart_points``, ``run_items`` and ``pr_items`` of
    the site's page environment (``gettext`` its catalog, the others ``site/macros.py``'s)."""
    no_declaration = gettext("no declaration")
    nobody = gettext("No PR in the knowledge base changed its declaration.")

    def chart_points(points: Iterable[Mapping[str, Any]], here: str) -> Markup:
        """Each point of the chart: a circle with its date and value, a link to its PR."""
        to = escape(here)
        parts: list[str] = []
        add = parts.append
        for p in points:
            run = p["run"]
            pr, label = run["pr"], run["pr_label"]
            add(f'<a href="{to}pr/{escape(pr)}.html">' if pr else "")
            add(f'<circle cx="{escape(p["x"])}" cy="{escape(p["y"])}" r="7" '
                f'class="pt {escape(p["cls"])}{" dynpt" if run["dynamic"] else ""}"><title>'
                f'{escape(run["at"][:10])} {escape(run["text"] or no_declaration)}'
                f'{f" · {escape(label)}" if label else ""}</title></circle>\n')
            add("</a>" if pr else "")
        return Markup("".join(parts))

    def run_items(runs: Sequence[Mapping[str, Any]], here: str) -> Markup:
        """An item per run, newest first: its date, its level, its PR or commit."""
        to = escape(here)
        parts: list[str] = []
        add = parts.append
        for r in reversed(runs):
            at = r["at"]
            add(f'<li><time datetime="{escape(at)}">{escape(at[:10])}</time> '
                f"{level_badge(r, None)}")
            if r["level"] is None and r["value"] and not r["bool"]:
                add(f' <code>{escape(r["value"])}</code>')
            if r["pr"]:
                add(f' <a href="{to}pr/{escape(r["pr"])}.html">{escape(r["pr_label"])}</a>')
            elif r["sha"]:
                add(f' <code>{escape(r["sha"][:10])}</code>')
            add("</li>\n")
        return Markup("".join(parts))

    def pr_items(prs: Sequence[Mapping[str, Any]], here: str, slug: str) -> Markup:
        """An item per PR that changed the builder ``slug``, with its changes of it."""
        if not prs:
            return Markup(f'<li class="muted">{nobody}</li>\n')
        to = escape(here)
        parts: list[str] = []
        add = parts.append
        for p in prs:
            changes = "".join([f"<li>{change_line(c)}</li>" for c in p["changes"]
                               if c["slug"] == slug])
            add(f'<li><a href="{to}pr/{escape(p["slug"])}.html"><span class="num">'
                f'{escape(p["label"])}</span> {escape(p["title"])}</a> <span class="muted">'
                f'{escape(p["date"][:10])} · {state_name(p["state"])}</span>\n'
                f'<ul class="changes">{changes}</ul></li>\n')
        return Markup("".join(parts))

    return {"chart_points": chart_points, "run_items": run_items, "pr_items": pr_items}
