"""The one-PR rebuild: a plan from a partial read, when a few PRs changed only what is shown of
them.

The common change between two builds is a PR edited in place: a new title, labels, a longer
description, a comment. Such a change moves nothing on the site: the PR stays in the same
month, weeks, builders' lists and graph part, and no count or history changes. Only pages that
show the PR's own data change: its pages, the pages of the PRs at the other end of its
relations, its builders' pages, its month of the timeline, its graph part, its digest weeks,
and the home page and feeds when it is among the newest.

:func:`partial_plan` checks that this is the case, from the change journal and the model the
previous build kept (:attr:`prkb.site.plan.Plan.model`: every PR's place hash, the months,
weeks and builders with their PRs, the counts): the journal names only PRs (and their own
graph nodes), no builder reading, and each of those PRs has the place hash it had
(:func:`prkb.site.plan.place_hash`), is named on no audit page and in no row of the graph
page's table. Then it reads only the PRs those pages need (:func:`prkb.site.gather.gather`
with ``only``), plans them with :func:`prkb.site.plan.plan_pages` as a full build would (what
only the whole site can tell, from the model: :class:`prkb.site.plan.Whole`), keeps the
pages that read covers and carries every other page over from the previous manifest, with
its hashes. Anything else (more PRs, a new or removed PR, a changed state or date, a builder's
new reading, search turned on or off, a damaged or missing model) returns None: the build
plans every page from a full read. The incremental site equals a fresh one either way
(tests/test_site_incremental*.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..profile import Profile
from ..store import Store
from .fragments import FragmentCache
from .gather import gather
from .page import ReportHtml, holder_dir
from .plan import GRAPH_PART_PRS, HOME_ROWS, Plan, Whole, current_hashes, place_hash, plan_pages
from .state import State, unchanged_hashes

LIMIT = 20  # PRs changed at most, for a partial read


class Replan(Exception):
    """A page the patched plan carries over is not in the previous site: plan in full."""


@dataclass
class PartialJob:
    """What a patched plan is made from: the build's options, the previous build and what
    changed since."""

    store: Store
    profile: Profile
    langs: list[str]
    base_url: str | None
    report_html: ReportHtml
    search_on: bool
    old: State
    changed: dict[str, set[str]] | None
    fragments: FragmentCache | None = None  # kept fragments this build may read


def partial_plan(b: PartialJob, model: dict[str, Any] | None) -> Plan | None:
    """The plan of a build where only what is shown of a few PRs changed (see the module);
    None when that is not the case, or when the kept model is not what this code wrote (a
    damaged file: its entries of the wrong shape). Call inside the read snapshot of the
    gather stage."""
    try:
        return _partial_plan(b, model)
    except (LookupError, TypeError, ValueError, AttributeError):
        return None


def _partial_plan(b: PartialJob, model: dict[str, Any] | None) -> Plan | None:
    changed, old = b.changed, b.old
    if model is None or changed is None or changed.get("class") or not old.pages:
        return None
    if b.search_on != old.search:
        return None  # search turned on or off: the search pages (and every hash) change
    try:
        ids = {int(k) for k in changed.get("pr", ())}
    except ValueError:
        return None
    prs: dict[str, list[Any]] = model["prs"]
    node_id = {v[1]: int(k) for k, v in prs.items()}
    nodes = set(changed.get("node", ()))
    if nodes - node_id.keys():
        return None  # a node that is no PR of the site (an issue, a reference) changed
    # a PR's own node (its title) stands for the PR (a relation row names both of its ends
    # too: the place hash below tells whether a relation of theirs changed)
    ids |= {node_id[n] for n in nodes}
    if not ids or len(ids) > LIMIT or any(str(i) not in prs for i in ids):
        return None
    slugs = {prs[str(i)][2] for i in ids}
    if slugs & set(model["audit"]) or slugs & set(model["graph_ends"]):
        return None
    need = _needed(b, model, ids, node_id)
    data = gather(b.store, b.profile, only=need, builders=model["builders"])
    for i in ids:
        pr = data.by_id.get(i)
        if pr is None or place_hash(pr) != prs[str(i)][0]:
            return None
    currents = current_hashes(data)
    if currents != old.currents:
        return None  # the kept histories are not what the previous build had
    pr_hashes = {int(k): (v[0], v[1]) for k, v in old.prs.items()}
    own = {i: both[0] for i, both in pr_hashes.items()}
    whole = Whole(
        counts=model["counts"], total=model["total"],
        builder_hashes={slug: h["h"] for slug, h in model["builders"].items()},
        own=own, weeks=model["weeks"], week_ends=model["week_ends"],
        slugs=frozenset(v[2] for v in prs.values()),
        builders=[(slug, h["class"], h["file"]) for slug, h in model["builders"].items()
                  if h["ids"]],
    )
    known = unchanged_hashes(data, old, changed, currents)
    plan = plan_pages(b.store, data, b.profile, b.langs, base_url=b.base_url,
                      report_html=b.report_html, known=known, currents=currents,
                      search=b.search_on, whole=whole, fragments=b.fragments)
    covered = _covered(model, ids, data, b.langs, holder_dir(b.profile))
    # a PR page of the read is whole: its hash is the previous build's (unchanged) or made
    # from all it shows (the read holds the PRs at the other end of its relations)
    pages = [p for p in plan.pages if p.path in covered or p.template == "site/pr.html"]
    made = {p.path for p in pages}
    search = dict(model["search"])  # path -> shard, of each searchable page
    carried = [(path, search.get(path)) for path in old.pages if path not in made]
    pr_hashes.update(plan.pr_hashes)
    return Plan(pages, pr_hashes, currents, None, carried)


def _needed(
    b: PartialJob, model: dict[str, Any], ids: set[int], node_id: dict[str, int]
) -> set[int]:
    """The PRs the pages of the changed ones need: themselves; the PRs at the other end of
    their relations, and at the other end of those PRs' relations (a related PR's page shows
    its own related PRs); the PRs of their builders, months and graph parts; the newest when
    one of them is among them (the home page and feeds). ``node_id``: graph node -> PR id."""
    prs: dict[str, list[Any]] = model["prs"]
    need = set(ids)
    frontier = [prs[str(i)][1] for i in ids]
    in_graph = set()
    for step in range(2):
        rows = b.store.site_relations(frontier)
        ends = {node_id[k] for r in rows for k in r[:2] if k in node_id}
        if step == 0:
            in_graph = ends & ids  # the changed PRs with a relation: in a graph part
        frontier = [prs[str(i)][1] for i in ends - need]
        need |= ends
    for h in model["builders"].values():
        if ids.intersection(h["ids"]):
            need.update(h["ids"])
    for i in ids:
        need.update(model["months"][prs[str(i)][3]])
    parts = {i // GRAPH_PART_PRS for i in in_graph}
    need.update(int(k) for k in prs if int(k) // GRAPH_PART_PRS in parts)
    if ids.intersection(model["newest"]):
        need.update(model["newest"])
    return need


def _covered(
    model: dict[str, Any], ids: set[int], data: Any, langs: list[str], folder: str,
) -> set[str]:
    """The pages besides PR pages that a partial read of the PRs ``_needed`` names covers:
    the changed PRs' builders, months, graph parts and digest weeks (with the digest index
    and feeds, which the model's weeks make whole), and the home page and feeds when one of
    them is among the newest."""
    prs: dict[str, list[Any]] = model["prs"]
    out: set[str] = set()
    for slug, h in model["builders"].items():
        if ids.intersection(h["ids"]):
            out.update(f"{lang}/{folder}/{slug}.html" for lang in langs)
    for i in ids:
        out.add(f"timeline/{prs[str(i)][3]}.json")
        if data.by_id[i]["relations"]:
            out.add(f"graph/{i // GRAPH_PART_PRS}.json")
    for key, week in model["weeks"].items():
        if ids.intersection(week):
            out.update(f"{lang}/digest/{key}.html" for lang in langs)
    out.update(f"{lang}/digest/index.html" for lang in langs)
    out.update(f"digest-{lang}.xml" for lang in langs)
    if ids.intersection(model["newest"][:HOME_ROWS]):
        out.update(f"{lang}/index.html" for lang in langs)
        out.update(f"{lang}/feed.xml" for lang in langs)
        out.add("feed.xml")
    return out

