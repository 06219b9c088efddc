"""A builder page's long lists written in Python (prkb/site/builder_lists.py) say what the
loops of site/builder.html said (kept as tests/golden/builder_before.html), byte for byte, in
both languages: every builder page of the site knowledge base (the seeds, a hostile PR), and
pages whose runs, chart points and PRs are crafted to take every branch with hostile
values."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jinja2
import pytest
from section_oracle import GOLDEN
from sitekb import make_kb

from prkb.profile import load_profile
from prkb.site.gather import gather
from prkb.site.page import Page
from prkb.site.plan import current_hashes, plan_pages
from prkb.site.render import RenderJob, _env, render_page

OLD = (GOLDEN / "builder_before.html").read_text(encoding="utf-8")
HOSTILE = '<script>alert("x")</script> & %(v)s 100%\u202e "q" \'s\''
TEMPLATE = "site/builder.html"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[RenderJob, list[Page]]:
    store = make_kb(tmp_path_factory.mktemp("builders") / "kb.sqlite")
    profile = load_profile(None)
    data = gather(store, profile)
    plan = plan_pages(store, data, profile, ["zh", "en"], base_url=None,
                      report_html=lambda *a: "", known={}, currents=current_hashes(data),
                      search=False)
    job = RenderJob(plan.pages, store, ["zh", "en"], None, Path("."), search=False)
    built = [p for p in plan.pages if p.template == TEMPLATE]
    assert len(built) >= 4
    return job, built


def _both(job: RenderJob, page: Page) -> tuple[bytes, bytes]:
    """The page by the template as it is, then by the loops it replaced."""
    lang = page.lang or "en"
    job.templates.pop((lang, TEMPLATE), None)
    new = render_page(job, page)
    env = _env(lang, job.envs)
    # by a name, as the site's templates are: autoescape is chosen by the name's ending
    golden = env.overlay(loader=jinja2.ChoiceLoader(
        [jinja2.DictLoader({"site/builder_before.html": OLD}), env.loader]))
    job.templates[lang, TEMPLATE] = golden.get_template("site/builder_before.html")
    try:
        old = render_page(job, page)
    finally:
        job.templates.pop((lang, TEMPLATE))
    return new, old


def test_every_builder_page_is_what_the_loops_wrote(pages: Any) -> None:
    job, built = pages
    for page in built:
        new, old = _both(job, page)
        assert new == old, page.path
    assert any(b"dynpt" in _both(job, p)[0] for p in built)  # a dynamic run among them


def _crafted(ctx: dict[str, Any]) -> dict[str, Any]:
    """``ctx`` with runs, points and PRs that take every branch of the lists, most values
    hostile."""
    ctx = copy.deepcopy(ctx)
    b = ctx["b"]
    base = b["runs"][0]
    runs = [
        {**base, "pr": "42", "pr_label": HOSTILE, "sha": None, "at": HOSTILE + "2026"},
        {**base, "pr": None, "pr_label": None, "sha": HOSTILE * 2},
        {**base, "pr": None, "pr_label": None, "sha": None},
        {**base, "level": None, "value": HOSTILE, "bool": False, "text": HOSTILE,
         "pr": None, "sha": None},
        {**base, "level": None, "value": "True", "bool": True, "text": "flag = True"},
        {**base, "level": None, "value": "", "bool": False},
        {**base, "dynamic": True, "level_text": HOSTILE},
        {**base, "value": None},
    ]
    b["runs"] = runs
    ctx["chart"] = {**ctx["chart"], "points": [
        {"x": 1.5, "y": 20, "cls": HOSTILE, "run": {**runs[0], "dynamic": True}},
        {"x": 3, "y": 4.25, "cls": "lvl-r1", "run": {**runs[1], "text": None}},
        {"x": 0, "y": 0, "cls": "", "run": {**runs[3], "pr_label": ""}},
    ]}
    pr = ctx["prs"][0] if ctx["prs"] else None
    assert pr is not None
    other = {**pr["changes"][0], "slug": "another-builder", "class": HOSTILE}
    ctx["prs"] = [
        {**pr, "title": HOSTILE, "label": HOSTILE, "slug": HOSTILE, "date": HOSTILE,
         "state": "closed", "changes": [{**pr["changes"][0], "before": HOSTILE}, other]},
        {**pr, "state": HOSTILE, "changes": [other]},
        {**pr, "state": "open", "changes": []},
    ]
    return ctx


def test_crafted_lists_are_what_the_loops_wrote(pages: Any) -> None:
    job, built = pages
    for page in built:
        if not page.context()["prs"]:
            continue
        crafted = _crafted(page.context())
        for ctx in (crafted, {**crafted, "prs": []}):  # and no PR: the list's one item
            made = Page(page.path, page.template, None, lambda c=ctx: c, lang=page.lang)
            new, old = _both(job, made)
            assert new == old, page.path
            assert HOSTILE.encode() not in old  # escaped everywhere
        assert b"No PR in the knowledge base" in _both(job, made)[0] or page.lang == "zh"
