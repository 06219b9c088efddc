"""The digest's long lists, each item written here, not by its template: the PRs merged,
opened and closed, the risk highlights and the rows of the declaration changes' table.

At 10,000 PRs a week's digest lists about 170 PRs, 90 risk highlights and 70 declaration
changes; in ``digest/section.j2`` each item took half a dozen template expressions and calls,
and they were most of what a week's page costs once its week is read (a week page is rendered
twice, in two languages, and again in the feeds). :class:`DigestLists` writes the same text
through the environment's own markup (``markup``: ``DigestText`` or ``DigestHtml``), ``_``,
``plain`` and labels. ``tests/test_digest_lists.py`` holds it to the loops it replaced
(``tests/golden/digest_lists_before.j2``) in text and HTML, in both languages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jinja2

from ..render.section_writer import SectionWriter

SECTION = "digest/section.j2"


class DigestLists(SectionWriter):
    """The global ``lists`` of a digest environment; each method writes the items of one list
    of ``digest/section.j2`` as the environment writes them (Markup under autoescape).
    ``link``: a PR item's address for this output (None: none)."""

    TEMPLATE = SECTION  # the section's autoescape

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.li, self.end_li = self.structure("li", "end_li")
        self.urls = bool(self.markup.urls)  # each PR's address on a line of its own (text)
        self.plain: Callable[[Any], str] = env.filters["plain"]
        self.comma = self.say(", ")  # between risk tags (the text's; HTML writes boxes)

    def prs(self, items: Iterable[Any], link: Callable[[Any], str | None]) -> str:
        """The items of one list of PRs (merged, opened, closed): each PR's reference, title
        and day (in text, its address on the next line)."""
        shown, plain, pr_ref, date = self.shown, self.plain, self.markup.pr_ref, self.markup.date
        li, end_li, urls = self.li, self.end_li, self.urls
        parts: list[str] = []
        add = parts.append
        for it in items:
            url = link(it)
            add(f"{li}{shown(pr_ref(it.label, url))} {shown(plain(it.title))} "
                f"{shown(date(it.when))}{end_li}\n")
            if urls and url:
                add(f"  {shown(url)}\n")
        return self.made("".join(parts))

    def risks(self, risks: Iterable[Any], link: Callable[[Any], str | None],
              labels: Callable[[list[str]], list[str]]) -> str:
        """The risk highlights: each PR's reference and title, then its tags' ``labels``."""
        shown, plain, pr_ref, tags = self.shown, self.plain, self.markup.pr_ref, self.markup.tags
        li, end_li, colon, comma = self.li, self.end_li, self.colon, self.comma
        return self.made("".join([
            f"{li}{shown(pr_ref(r.pr.label, link(r.pr)))} {shown(plain(r.pr.title))}{colon}"
            f"{shown(tags(labels(r.codes), comma))}{end_li}\n"
            for r in risks
        ]))

    def change_rows(self, changes: Iterable[Any], link: Callable[[Any], str | None],
                    direction: Callable[[str], str]) -> str:
        """The rows of the HTML table of declaration changes: class (and file when another
        file holds a class of that name), values before and after, direction, PR."""
        shown, plain, pr_ref = self.shown, self.plain, self.markup.pr_ref
        parts: list[str] = []
        add = parts.append
        for c in changes:
            file = f"<br>{shown(plain(c.file))}" if c.name_file else ""
            add(f"<tr><td><code>{shown(plain(c.class_name))}</code>{file}</td> "
                f"<td>{shown(plain(c.before_text or '-'))}</td> "
                f"<td>{shown(plain(c.after_text or '-'))}</td> "
                f"<td>{shown(direction(c.direction))}</td> "
                f"<td>{shown(pr_ref(c.pr.label, link(c.pr)))}</td></tr>\n")
        return self.made("".join(parts))
