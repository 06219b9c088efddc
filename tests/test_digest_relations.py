"""The digest's new relations written in Python (prkb/publish/digest_relations.py) say what
the template said (report/_relations.j2's ``between`` and the loop of digest/section.j2,
kept as tests/golden/digest_relations_before.j2), byte for byte, in text and HTML, in both
languages."""

from __future__ import annotations

from typing import Any

import pytest
from markupsafe import Markup, escape
from section_oracle import GOLDEN

from prkb import evidence
from prkb.graph.relations import RELATION_TYPES
from prkb.publish import digest
from prkb.publish.digest import RelationItem

OLD = (GOLDEN / "digest_relations_before.j2").read_text()
HOSTILE = '<script>alert("x")</script> & %(source)s 100%'


def _node(html: bool) -> Any:
    """A node as the digest names it for the output: a link or escaped text in HTML (a
    hostile one too), plain text otherwise."""

    def node(key: str) -> Any:
        text = digest.node_text(key, "en") if not key.startswith("x:") else HOSTILE
        if not html:
            return digest.plain(text)
        if key.startswith("pr:"):
            return Markup('<a href="../pr/{}.html">{}</a>').format(key[3:], text)
        return escape(text)

    return node


def _relations(store: Any) -> list[list[RelationItem]]:
    """Every week's relations of the bundled data as the digest gathers them, then crafted
    ones: every type (and one unknown) both inferred and not, with evidence or none, a
    commit, an issue and a hostile node at an end."""
    weeks = [digest.gather(store, digest.week_period(k)).relations
             for k in digest.digest_weeks(store)]
    assert sum(len(w) for w in weeks) > 10
    ev = evidence.loads(evidence.make({"kind": "quote", "where": "body", "pr": "#7",
                                       "text": HOSTILE}, {"kind": "revert-title", "pr": "#8"}))
    crafted = []
    for n, type_ in enumerate([*RELATION_TYPES, "unknown-type<b>"]):
        for inferred in (False, True):
            for items in (ev, evidence.loads(""), []):
                crafted.append(RelationItem(f"pr:{100 + n}", "commit:abc1234" if n % 3 == 0
                                            else "x:hostile" if n % 3 == 1 else "issue:9",
                                            type_, items, 100 + n, None, inferred))
    return [*weeks, crafted, []]


@pytest.mark.parametrize("html", [True, False])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_relations_are_what_the_template_wrote(bundled: Any, lang: str, html: bool) -> None:
    env = digest._env(lang, html)
    writer = env.globals["relation_items"]
    before = env.from_string(OLD)
    lines = env.globals["sentences"]["evidence"].lines
    node = _node(html)
    said = 0
    for relations in _relations(bundled):
        want = before.render(relations=relations, node=node, evidence_lines=lines)
        got = writer(relations, node)
        assert str(got) == want, relations
        assert isinstance(got, Markup) == html
        said += len(relations)
    assert said > 60


def test_a_week_page_says_each_relation_once(bundled: Any) -> None:
    """Through the section's template: the relations' list holds an item per relation, in
    both formats (the items are the writer's)."""
    for key in digest.digest_weeks(bundled):
        dg = digest.gather(bundled, digest.week_period(key))
        if len(dg.relations) < 2:
            continue
        html = digest.render_section(dg, "en", "html")
        part = html.split("<h2>New relations</h2>", 1)[1]
        assert part.count("<li>") >= len(dg.relations)
        text = digest.render_section(dg, "en", "text")
        assert "New relations" in text
        return
    pytest.fail("no week of the bundled data has two relations")
