"""The report's related PRs written in Python (prkb/render/related_items.py) say what the
report's template said, item for item, in every format and language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from prkb import evidence
from prkb.profile import load_profile
from prkb.render import report
from prkb.render.prfacts import read_pr
from prkb.render.related_items import SEEN_FROM

# What report/sections/related.j2 and report/_relations.j2 said before the items moved to
# Python (commit 09bccf3): the oracle the new code is held to, rendered by the same
# environment (its catalog, filters, formatter, labels and evidence macro).
TEMPLATE = (Path(__file__).parent / "golden" / "related_items_before.j2").read_text()


def _old_sentences() -> str:
    branches = []
    for i, (type_, (out, into)) in enumerate(SEEN_FROM.items()):
        branches.append(f'{{% {"if" if i == 0 else "elif"} type == "{type_}" %}}\n'
                        f'{{% set s = _("{out}", other=other) if out else '
                        f'_("{into}", other=other) %}}')
    branches.append('{% else %}\n{% set s = _("This PR %(rel)s %(other)s", '
                    'rel=type|label("relations"), other=other) if out else '
                    '_("%(other)s %(rel)s this PR", rel=type|label("relations"), other=other) %}'
                    '\n{% endif %}')
    return "\n".join(branches)


def _relations(store: Any) -> list[dict[str, Any]]:
    """Every relation of the bundled PRs as their reports read them, and the cases the data
    lacks: each type in both directions, a type without a sentence of its own, a commit at
    the other end, an inferred relation, a title written to break out of the markup, no
    evidence at all."""
    profile = load_profile(None)
    out = [r for p in store.all_prs() for r in read_pr(store, p["ref"], profile).relations]
    hostile = '<script>alert("x")</script> & `code` **bold** [a](javascript:x)'
    ev = evidence.loads(evidence.make({"kind": "quote", "where": "body", "pr": "#7",
                                       "text": "Fixes #6 <b>now</b>"}))
    base = {"number": 6, "other": 6, "title": hostile, "confidence": 0.456,
            "origin": "text", "evidence": ev, "inferred": False}
    out += [{**base, "type": t, "direction": d, "inferred": d == "in"}
            for t in SEEN_FROM for d in ("out", "in")]
    out += [
        {**base, "type": "blocks", "direction": "out"},
        {**base, "type": "blocks", "direction": "in", "inferred": True, "origin": "lineage"},
        {**base, "type": "fixes-regression-from", "direction": "in", "inferred": True,
         "origin": "made-up-origin", "evidence": evidence.loads("")},
        {**base, "type": "reverts", "direction": "out", "number": None,
         "other": "commit:0123456789abcdef0123456789abcdef01234567", "title": None},
        {**base, "type": "follow-up-of", "direction": "out", "number": None,
         "other": "issue:9", "title": None, "evidence": []},
    ]
    return out


@pytest.mark.parametrize("fmt", ["html", "md", "txt"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subject", ["", "commit"])
def test_items_are_what_the_template_wrote(bundled: Any, fmt: str, lang: str,
                                           subject: str) -> None:
    relations = _relations(bundled)
    assert len(relations) > 40
    env = report._report_env(lang, fmt, subject, "")
    old = env.from_string(TEMPLATE.replace("OLD_SENTENCES", _old_sentences()))
    links = {"pr:6": "6.html", "commit:0123456789abcdef0123456789abcdef01234567": "c.html",
             **{f"pr:{r['number']}": f"{r['number']}.html" for r in relations[::2]
                if r["number"] is not None}}
    for pr_links in (None, links):
        want = old.render(related={"relations": relations}, pr_links=pr_links,
                          colon=env.globals["labels"].colon)
        got = env.globals["related_items"](relations, pr_links)
        assert str(got) == want
        # markup under autoescape ({{ related_items(...) }} writes it as it is), else text
        assert isinstance(got, Markup) == (fmt == "html")
    if fmt == "html":
        assert "<script>" not in want and "&lt;script&gt;" in want
        assert 'href="c.html"' in str(env.globals["related_items"](relations, links))
