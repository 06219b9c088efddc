"""Stage 2 of the site build: the list of pages, each with its inputs and a lazy context.

A :class:`Page` names its output path, its template and the plain data it depends on
(``inputs``, hashed for incremental builds). ``context()`` is only called when the page has
to be rendered, so an unchanged PR page costs a hash, not a report.
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal
import pickle
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..evidence import is_inferred
from ..glossary import glossary
from ..profile import Profile
from ..store import Store
from ..store.graph_queries import first_after
from . import search as site_search
from . import svg as site_svg
from .digest_pages import digest_pages
from .feed import atom_feed, feed_title
from .fragments import FragmentCache
from .gather import SiteData
from .page import Page, ReportHtml, holder_dir

FEED_LIMIT = 200
HOME_ROWS = 300  # rows in the home page's HTML; its script loads the rest from timeline.json
GRAPH_ROWS = 500  # rows of the relation table under the graph (the graph itself has all)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_COMMIT_PAGE = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/commit/([0-9a-f]{40})")


def github_url(pr: dict[str, Any]) -> str | None:
    """A GitHub link built from trusted parts (never the stored URL text)."""
    repo = pr.get("repo") or ""
    if not _REPO.match(repo):
        return None
    if pr.get("number") is not None:
        return f"https://github.com/{repo}/pull/{int(pr['number'])}"
    sha = pr.get("sha") or ""
    if re.fullmatch(r"[0-9a-f]{7,40}", sha):
        # a commit without a PR is reachable where its record's page is (a fork's own commit
        # exists only on the fork): that repository when the stored URL is exactly a commit
        # page of this very sha, else the record's
        m = _COMMIT_PAGE.fullmatch(str(pr.get("url") or ""))
        if m is not None and m.group(2) == sha and _REPO.match(m.group(1)):
            repo = m.group(1)
        return f"https://github.com/{repo}/commit/{sha}"
    return None


def summary(pr: dict[str, Any]) -> dict[str, Any]:
    """What the timeline, graph and related-PR lists show of a PR."""
    return {
        "slug": pr["slug"],
        "label": pr["label"],
        "title": pr["title"],
        "state": pr["state"],
        "date": pr["date"],
        "author": pr["author"],
        "platforms": pr["platforms"],
        "tags": pr["tags"],
        "directions": pr["directions"],
        "changes": [
            {"class": c["class"], "slug": c["slug"], "before": c["before_text"],
             "after": c["after_text"], "direction": c["direction"]}  # values as shown
            for c in pr["changes"]
        ],
        "findings": len(pr["findings"]),
    }


def _other(data: SiteData, key: str) -> dict[str, Any]:
    pr = data.by_node.get(key)
    if pr is not None:
        return {"key": key, "slug": pr["slug"], "label": pr["label"], "title": pr["title"],
                "state": pr["state"]}
    node = data.nodes.get(key) or {}
    label = key
    if key.startswith(("pr:", "issue:")):
        label = "#" + key.split(":", 1)[1]
    elif key.startswith("commit:"):
        label = key[7:19]
    elif key.startswith("ext:"):
        label = key[4:]
    return {"key": key, "slug": None, "label": label, "title": node.get("title") or "",
            "state": None}


def related(data: SiteData, pr: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    # the evidence is worded in the report on the same page (report/_evidence.j2)
    for type_, direction, other, _evidence, confidence, origin in pr["relations"]:
        out.append({"type": type_, "direction": direction, "other": _other(data, other),
                    "confidence": confidence, "origin": origin,
                    "inferred": is_inferred(origin, confidence)})
    return out


def plan_pages(
    store: Store,
    data: SiteData,
    profile: Profile,
    langs: list[str],
    *,
    base_url: str | None,
    report_html: ReportHtml,
    known: dict[int, tuple[str, str]] | None = None,
    currents: dict[str, str] | None = None,
    search: bool = True,
    whole: Whole | None = None,
    fragments: FragmentCache | None = None,
) -> Plan:
    """Every page of the site, in write order.

    Each PR has two hashes: of its own data (what the timeline, builder and digest pages
    show of it, and whether each of its relations leads to a page of the site) and of its
    own page's inputs (its own data, the PRs at the other end of its relations, the current
    reading of its classes). ``known``: PR id -> both, for PRs the caller knows did not change
    since the build that computed them (site_state.unchanged_hashes); those are not hashed again.
    ``search``: whether the site gets a search index (its search page says when it does not).
    ``whole``: ``data`` is a partial read (the one-PR rebuild, :mod:`prkb.site.partial`); what
    only the whole site can tell comes from there, and the caller keeps only the pages the
    read covers. Without it, the plan's :attr:`Plan.model` is what a partial read of the next
    build needs. ``fragments``: where the digest feeds keep each week's rendered entry
    (:mod:`prkb.site.fragments`).
    """
    known = known or {}
    pages: list[Page] = []
    # what lists of PRs show of each PR: made only for the PRs a rendered page lists
    timeline = _Summaries(data)
    counts = whole.counts if whole is not None else _counts(data)
    total = whole.total if whole is not None else len(data.prs)
    # the timeline's builder filter: every builder a PR changed (the whole site's, also from
    # a partial read)
    builder_options = filter_builders(
        whole.builders if whole is not None
        else [(slug, b["class"], b["file"]) for slug, b in data.builders.items() if b["prs"]]
    )
    # each builder's history without its PRs (their own hashes stand for them), made once
    # for its hash and for the model
    histories = {} if whole is not None else {
        slug: {k: v for k, v in b.items() if k != "prs"} for slug, b in data.builders.items()
    }
    builder_hashes = whole.builder_hashes if whole is not None else {
        slug: input_hash(h) for slug, h in histories.items()
    }
    if currents is None:
        currents = current_hashes(data)
    audit = _audit_rows(data)
    levels = list(profile.levels)
    gl = glossary()
    common = {"langs": langs, "levels": levels, "base": base_url}
    # the matrix shows the builders' histories only (the span of the time axis included)
    h_matrix = input_hash(list(builder_hashes.items()))
    h_audit = input_hash(audit)
    per_pr = []
    pr_hashes: dict[int, tuple[str, str]] = {}
    by_node = data.by_node
    places: dict[int, str] = {}  # place_hash of the PRs hashed here (the model reads them)
    for pr in data.prs:
        both = known.get(pr["id"])
        if both is None:
            # everything of the PR: its place (all but what is only shown), what is only
            # shown, and which of its relations' other ends are nodes of the graph; the PR's
            # dict is serialized once (place_hash), not once more whole
            place = places[pr["id"]] = place_hash(pr)
            own = input_hash([place, {k: pr[k] for k in _SHOWN_ORDER if k in pr},
                              [r[2] in by_node for r in pr["relations"]]])
            both = (own, input_hash([own, related(data, pr), _now(data, pr)]))
        pr_hashes[pr["id"]] = both
        # languages, base URL and levels (``common``) are in the build's salt already
        per_pr.append((pr, both[1], pr["id"] in known))
    own_hashes = {i: both[0] for i, both in pr_hashes.items()}
    # the graph's data, in parts (a node with the PRs of its id's group, the edges with their
    # source), each shared by the languages: a changed PR writes its part again, not the
    # whole graph. A part shows its relations and, of each node, a PR's label, title and
    # state (its own hash stands for them) or a node's title
    graph_parts = _graph_parts(data)
    h_parts = {
        name: input_hash([
            part["edges"],
            [(k, own_hashes[data.by_node[k]["id"]]) if k in data.by_node
             else (k, (data.nodes.get(k) or {}).get("title")) for k in part["keys"]],
        ])
        for name, part in graph_parts.items()
    }
    # the graph page shows the legend and the first relations; its hash is of what it shows
    # (an edited title elsewhere does not make it again; the title's part of graph/ does)
    graph_page = _graph_page(data)
    h_graph_page = input_hash(graph_page)
    # a timeline row shows only fields of its PR, so the PRs' own hashes stand for the rows
    ordered = [own_hashes[p["id"]] for p in data.prs]
    h_home = hashlib.sha256("".join(ordered[:HOME_ROWS]).encode()).hexdigest()
    h_feed = hashlib.sha256("".join(ordered[:FEED_LIMIT]).encode()).hexdigest()
    # the whole timeline for the home page's script: one file per month of PRs (shared by
    # the languages), so that a changed PR rewrites its month only
    months: dict[str, list[dict[str, Any]]] = {}
    for p in data.prs:
        months.setdefault(_month(p["date"]), []).append(p)
    parts = [f"timeline/{m}.json" for m in months]
    per_builder = []
    for b in data.builders.values():
        # its PRs are shown by their summaries, which their hashes stand for
        ids = [p["id"] for p in reversed(b["prs"])]
        inputs = {**common, "h": input_hash([builder_hashes[b["slug"]],
                                         [own_hashes[i] for i in ids]])}
        per_builder.append((b, ids, inputs))

    pages.append(Page("index.html", "site/root.html", common,
                      partial(dict, langs=langs, profile=profile)))
    pages.append(
        Page("404.html", "site/404.html", common,
             partial(dict, langs=langs, base_url=base_url))
    )
    fixed_by_lang = fixed_of(profile, langs)
    matrix = _Lazy(partial(_matrix, data))
    graph_files = [f"graph/{name}.json" for name in graph_parts]
    for name, part in graph_parts.items():
        pages.append(Page(
            f"graph/{name}.json", "", h_parts[name],
            partial(_graph_part_body, data, part), kind="bytes",
        ))
    for month, prs in months.items():
        pages.append(Page(
            f"timeline/{month}.json", "", [own_hashes[p["id"]] for p in prs],
            partial(_timeline_part, timeline, [p["id"] for p in prs]), kind="bytes",
        ))
    for lang in langs:
        fixed = fixed_by_lang[lang]
        pages.append(Page(
            f"{lang}/index.html", "site/index.html",
            {**common, "h": h_home, "c": counts, "n": total, "b": builder_options},
            partial(_index_context, fixed, timeline, total=total, builders=builder_options,
                    counts=counts, risk_codes=[
                        c for c in gl.get("risk_tags", {})
                        # a raise or a lowering is a risk only for levels (analyze/risk.py)
                        if profile.has_levels or c not in ("level-raised", "level-lowered")],
                    directions=list(gl.get("directions", {})), platforms=profile.platforms),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/timeline.json", "", {**common, "parts": parts},
            partial(_timeline_json, parts, lang), lang=lang, kind="json",
        ))
        pages.append(Page(
            f"{lang}/matrix.html", "site/matrix.html", {**common, "h": h_matrix},
            partial(_matrix_context, fixed, matrix), lang=lang,
        ))
        pages.append(Page(
            f"{lang}/graph.html", "site/graph.html", {**common, "h": h_graph_page},
            partial(_graph_context, fixed, graph_page), lang=lang,
        ))
        pages.append(Page(
            f"{lang}/graph.json", "", {**common, "parts": graph_files},
            partial(_graph_json, graph_files, lang), lang=lang, kind="json",
        ))
        pages.append(Page(
            f"{lang}/audit.html", "site/audit.html", {**common, "h": h_audit},
            partial(dict, fixed, rows=audit),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/search.html", "site/search.html", {**common, "search": search},
            partial(dict, fixed, search_on=search, install_hint=site_search.INSTALL_HINT),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/feed.xml", "", {**common, "h": h_feed},
            partial(_feed_body, timeline, lang, base_url, f"{lang}/feed.xml",
                    feed_title(profile, lang)),
            lang=lang, kind="bytes",
        ))
    # a PR's (and a builder's) pages in every language next to each other (pr_pages)
    pages.extend(pr_pages(store, report_html, fixed_by_lang, data, per_pr, langs))
    charts: dict[str, Any] = {}
    folder = holder_dir(profile)  # builder/, backend/...: what the profile calls its classes
    for b, ids, inputs in per_builder:
        for lang in langs:
            pages.append(Page(
                f"{lang}/{folder}/{b['slug']}.html", "site/builder.html", inputs,
                partial(_builder_context, fixed_by_lang[lang], b, ids, timeline, profile,
                        charts),
                lang=lang, search=True,
            ))
    digests = digest_pages(store, data, profile, langs, common,
                           own_hashes if whole is None else {**whole.own, **own_hashes},
                           fixed_by_lang, whole, fragments)
    pages.extend(digests.pages)
    feed_lang = "en" if "en" in langs else langs[-1]
    pages.append(Page(
        "feed.xml", "", {**common, "h": h_feed},
        partial(_feed_body, timeline, feed_lang, base_url, "feed.xml",
                feed_title(profile, feed_lang)),
        lang=None, kind="bytes",
    ))
    model = None
    if whole is None:
        model = {
            # per PR: its place (what decides which pages list it: place_hash), graph node,
            # slug, month
            "prs": {str(p["id"]): [places.get(p["id"]) or place_hash(p), p["node"], p["slug"],
                                   _month(p["date"])]
                    for p in data.prs},
            "months": {m: [p["id"] for p in prs] for m, prs in months.items()},
            "newest": [p["id"] for p in data.prs[:HOME_ROWS]],
            "counts": counts,
            "total": total,
            "builders": {slug: {**histories[slug], "ids": [p["id"] for p in b["prs"]],
                                "h": builder_hashes[slug]}
                         for slug, b in data.builders.items()},
            "weeks": digests.weeks,
            "week_ends": digests.week_ends,
            # PRs the audit pages name, nodes the graph page's table shows
            "audit": sorted({r["pr"]["slug"] for r in audit}
                            | {r["later"]["slug"] for r in audit if r["later"]}
                            | {r["fixed"]["slug"] for r in audit if r["fixed"]}),
            "graph_ends": sorted({e[k]["slug"] for e in graph_page["edges"] for k in "st"
                                  if e[k]["slug"]}),
            "search": [[p.path, p.shard] for p in pages if p.search],
        }
    return Plan(pages, pr_hashes, currents, model, weeks_from=digests.made_from)


@dataclass
class Plan:
    """The pages of the site in write order, and the hashes the next build starts from."""

    pages: list[Page] = field(default_factory=list)
    # PR id -> hashes of its own data, of its page's inputs
    pr_hashes: dict[int, tuple[str, str]] = field(default_factory=dict)
    currents: dict[str, str] = field(default_factory=dict)  # builder slug -> its reading's hash
    # what a partial read of the next build needs to know of the whole site (plan_pages;
    # None: this plan was made from a partial read)
    model: dict[str, Any] | None = None
    # a plan from a partial read (prkb.site.partial): the previous build's pages kept as they
    # are, never rendered, each with its search shard (None: not in the search index)
    carried: list[tuple[str, str | None]] = field(default_factory=list)
    # what the digest week pages are made from (DigestPlan.made_from): the pages a child
    # rendered early from its own read are these pages only if it read the same
    # (site/early.py)
    weeks_from: tuple[list[dict[str, Any]], frozenset[str]] | None = None


# A PR's fields that only pages showing that PR's own data show (what its summary, report
# and graph node say): a change of those alone leaves every list, count and history of the
# site as it was, so only those pages are made again (prkb.site.partial)
SHOWN_ONLY = frozenset({"title", "author", "labels", "url", "raw_hash", "tests_touched",
                        "platforms", "tags"})
_SHOWN_ORDER = tuple(sorted(SHOWN_ONLY))  # in a fixed order, for a hash


def place_hash(pr: dict[str, Any]) -> str:
    """A hash of what decides where a PR appears on the site: everything of it but
    :data:`SHOWN_ONLY` (dates, state, declaration changes, findings, relations...)."""
    return input_hash({k: v for k, v in pr.items() if k not in SHOWN_ONLY})


@dataclass
class Whole:
    """What a partial read cannot tell of the whole site (the one-PR rebuild, taken from the
    previous build's :attr:`Plan.model`)."""

    counts: dict[str, Any]
    total: int
    builder_hashes: dict[str, str]
    own: dict[int, str]  # every PR's own-data hash
    weeks: dict[str, list[int]]  # digest week -> its PRs
    week_ends: dict[str, str]
    slugs: frozenset[str]  # every PR page's slug
    # every builder a PR changed: (slug, class, file), in the order of the site's builders
    builders: list[tuple[str, str, str]] = field(default_factory=list)


class _Lazy:
    """A value computed on first use (in whichever process renders a page that needs it)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._value: Any = None
        self._done = False

    def get(self) -> Any:
        if not self._done:
            self._value = self._make()
            self._done = True
        return self._value


def current_hashes(data: SiteData) -> dict[str, str]:
    """Builder slug (its file and class) -> hash of its current reading (what PR pages show as
    "now")."""
    return {slug: input_hash(b["current"]) for slug, b in data.builders.items()}


class _Summaries:
    """Each PR's summary, made the first time a rendered page lists the PR."""

    def __init__(self, data: SiteData) -> None:
        self._data = data
        self._made: dict[int, dict[str, Any]] = {}

    def of(self, pr_id: int) -> dict[str, Any]:
        made = self._made.get(pr_id)
        if made is None:
            made = self._made[pr_id] = summary(self._data.by_id[pr_id])
        return made

    def newest(self, n: int) -> list[dict[str, Any]]:
        return [self.of(p["id"]) for p in self._data.prs[:n]]


def filter_builders(builders: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    """The options of the timeline's builder filter, from (slug, class, file) in the site's
    order of builders (by class, then file): each named by its class, and by its file too
    when another builder has the same class name (a V0 and a V1 class)."""
    names = Counter(cls for _slug, cls, _file in builders)
    return [{"slug": slug, "class": cls, "label": cls if names[cls] == 1 else f"{cls} ({file})"}
            for slug, cls, file in builders]


def _month(date: str) -> str:
    month = date[:7]
    return month if re.fullmatch(r"\d{4}-\d{2}", month) else "undated"


def _index_context(fixed: dict[str, Any], timeline: _Summaries, **kw: Any) -> dict[str, Any]:
    return {**fixed, "timeline": timeline.newest(HOME_ROWS), **kw}


def _feed_body(timeline: _Summaries, lang: str, base_url: str | None, path: str,
               title: str) -> dict[str, Any]:
    """An Atom feed of the newest PRs, titled by the profile's words (``feed.feed_title``)."""
    return {"body": atom_feed(timeline.newest(FEED_LIMIT), lang=lang, base_url=base_url,
                              feed_path=path, title=title)}


def _graph_context(fixed: dict[str, Any], page: dict[str, Any]) -> dict[str, Any]:
    return {**fixed, **page}


def _graph_page(data: SiteData) -> dict[str, Any]:
    """What graph.html shows besides the drawing (which graph.json feeds): the relation types
    and node kinds of the whole graph (for the legend), the first :data:`GRAPH_ROWS`
    relations with both ends, and how many relations there are."""
    types: set[str] = set()
    keys: set[str] = set()
    for r in data.relations:
        types.add(r[2])
        keys.add(r[0])
        keys.add(r[1])
    by_node = data.by_node
    # a node's colour class: a PR of the site by its state, any other node by its kind
    kinds = sorted({f"pr-{by_node[k]['state']}" if k in by_node else f"ref-{k.partition(':')[0]}"
                    for k in keys})
    ends: dict[str, dict[str, Any]] = {}

    def end(key: str) -> dict[str, Any]:
        got = ends.get(key)
        if got is None:
            n = _graph_node(data, key)
            got = ends[key] = {"slug": n["slug"], "label": n["label"], "title": n["title"]}
        return got

    rows = [{"s": end(r[0]), "t": end(r[1]), "type": r[2]} for r in data.relations[:GRAPH_ROWS]]
    return {"has_nodes": bool(keys), "kinds": kinds, "edges": rows,
            "total_edges": len(data.relations), "relation_types": sorted(types)}


GRAPH_PART_PRS = 500  # PRs (by id) whose nodes make one part of the graph's data


def _graph_parts(data: SiteData) -> dict[str, dict[str, Any]]:
    """The graph's data in parts (only nodes with at least one relation): part name -> its
    node keys (sorted) and its edges ([source, target, type, confidence], with their source).
    A PR of the site is in the part of its id's group (a PR keeps its part); any other node
    is in the part "other". Parts in a stable order: by number, "other" last."""
    by_node = data.by_node
    part_of: dict[str, str] = {}

    def part(key: str) -> str:
        got = part_of.get(key)
        if got is None:
            pr = by_node.get(key)
            got = part_of[key] = str(pr["id"] // GRAPH_PART_PRS) if pr is not None else "other"
        return got

    keys: dict[str, set[str]] = {}
    edges: dict[str, list[tuple[str, str, str, float]]] = {}
    for source, target, type_, _evidence, confidence, _origin in data.relations:
        home = part(source)
        edges.setdefault(home, []).append((source, target, type_, confidence))
        keys.setdefault(home, set()).add(source)
        keys.setdefault(part(target), set()).add(target)
    order = sorted(keys, key=lambda n: (n == "other", int(n) if n.isdigit() else 0))
    return {name: {"keys": sorted(keys[name]), "edges": edges.get(name, [])} for name in order}


def _graph_part_body(data: SiteData, part: dict[str, Any]) -> dict[str, Any]:
    """One part of the graph's data: its nodes and edges (an edge is [source, target, type,
    confidence]; its ends may be in other parts)."""
    return {"body": _json_bytes({"nodes": [_graph_node(data, k) for k in part["keys"]],
                                 "edges": part["edges"]})}


def _now(data: SiteData, pr: dict[str, Any]) -> dict[str, Any]:
    """The current reading of each builder (file and class) the PR changed, by its slug."""
    return {c["slug"]: data.builders[c["slug"]]["current"]
            for c in pr["changes"] if c["slug"] in data.builders}


def _matrix(data: SiteData) -> dict[str, Any]:
    lo, hi = site_svg.span(data.builders)
    rows = [
        {
            "class": b["class"],
            "slug": b["slug"],
            "file": b["file"],
            "source": b["source"],
            "current": b["current"],
            "cls": site_svg.level_class(b["current"]),
            "segments": site_svg.segments(b["runs"], lo, hi),
            "changes": len(b["runs"]),
        }
        for b in data.builders.values()
    ]
    log = sorted(
        (
            {"class": b["class"], "file": b["file"], "slug": b["slug"], "run": r,
             "cls": site_svg.level_class(r), "prev": b["runs"][i - 1] if i else None}
            for b in data.builders.values()
            for i, r in enumerate(b["runs"])
        ),
        key=lambda e: (e["run"]["at"], e["class"], e["file"]),
        reverse=True,
    )
    return {"rows": rows, "ticks": site_svg.axis_ticks(lo, hi), "log": log}


def _matrix_context(fixed: dict[str, Any], matrix: _Lazy) -> dict[str, Any]:
    return {**fixed, **matrix.get(), "bar_svg": site_svg.bar_svg}


def _builder_context(
    fixed: dict[str, Any], b: dict[str, Any], ids: list[int],
    timeline: _Summaries, profile: Profile, charts: dict[str, Any],
) -> dict[str, Any]:
    if b["slug"] not in charts:  # both languages draw the same chart
        charts.clear()
        charts[b["slug"]] = site_svg.step_chart(b["runs"], profile.levels)
    return {**fixed, "b": b, "chart": charts[b["slug"]], "prs": [timeline.of(i) for i in ids]}


def input_hash(obj: Any) -> str:
    """Hash of plain data (dicts, lists, tuples, strings, numbers, None) built in a fixed
    order.

    Serialized with marshal's version 2, which writes no references: equal data gives one
    hash however its objects are shared (a string used twice, or two equal strings read back
    from JSON); it tells a tuple from a list and a bool from an int, and is several times
    cheaper than ``repr`` or pickle. The hash only has to change when the data does (a new
    Python may write other bytes: every page is then made again, once). Anything marshal
    cannot write (a str subclass) is pickled, without pickle's memo for the same reason.
    """
    try:
        data = marshal.dumps(obj, 2)
    except ValueError:
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, protocol=5)
        pickler.fast = True  # no memo: plain data has no cycles
        pickler.dump(obj)
        data = buf.getvalue()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _timeline_part(timeline: _Summaries, ids: list[int]) -> dict[str, Any]:
    """One month of the timeline (newest first), for the home page's script."""
    rows = []
    for i in ids:
        p = timeline.of(i)
        rows.append({
            "s": p["slug"], "l": p["label"], "t": p["title"], "st": p["state"],
            "d": p["date"][:10], "pl": p["platforms"], "tg": p["tags"], "dr": p["directions"],
            # a change: class, values before and after as shown, direction, builder slug
            "c": [[c["class"], c["before"], c["after"], c["direction"], c["slug"]]
                  for c in p["changes"]],
        })
    return {"body": _json_bytes(rows)}


def _timeline_json(parts: list[str], lang: str) -> dict[str, Any]:
    """The labels the timeline shows in ``lang`` and its parts, newest month first."""
    gl = glossary()

    def labels(section: str) -> dict[str, str]:
        return {code: str(e.get(lang) or e.get("en") or code)
                for code, e in gl.get(section, {}).items()}

    return {"lang": lang, "labels": {"tags": labels("risk_tags"), "dirs": labels("directions")},
            "parts": [f"../{part}" for part in parts]}


def _graph_json(parts: list[str], lang: str) -> dict[str, Any]:
    """What the graph page's script loads first: the parts of the graph's data (shared by
    the languages, like the timeline's)."""
    return {"lang": lang, "parts": [f"../{part}" for part in parts]}


def _pr_context(
    store: Store,
    report_html: ReportHtml,
    fixed: dict[str, Any],
    data: SiteData,
    pr: dict[str, Any],
    lang: str,
    last_related: dict[int, list[dict[str, Any]]],
) -> dict[str, Any]:
    rel = last_related.get(pr["id"])
    if rel is None:  # not the PR of the previous page (in another language)
        last_related.clear()
        rel = last_related[pr["id"]] = related(data, pr)
    # the report's related PRs link to their pages (a PR page's neighbours, same folder)
    links = {r["other"]["key"]: f"{r['other']['slug']}.html" for r in rel if r["other"]["slug"]}
    return {
        **fixed,
        "pr": pr,
        "related": rel,
        "github": github_url(pr),
        "now": _now(data, pr),
        "report": report_html(store, pr, lang, links),
    }


def fixed_of(profile: Profile, langs: list[str]) -> dict[str, dict[str, Any]]:
    """What every page of a language shows of the profile (its levels and their meanings)."""
    return {lang: {"levels": list(profile.levels),
                   "meanings": profile.level_meaning.get(lang, {}), "profile": profile}
            for lang in langs}


def pr_pages(
    store: Store, report_html: ReportHtml, fixed_by_lang: dict[str, dict[str, Any]],
    data: SiteData, prs: list[tuple[dict[str, Any], Any, bool]], langs: list[str],
) -> list[Page]:
    """The pages of ``prs`` (each with its page's inputs and whether they are known to be the
    previous build's), a PR's languages next to each other: the renderer hands out pages in
    runs, so one process reads the PR's facts once for all its languages (and its related
    PRs once: the last PR's, by its id, for the page in the next language)."""
    last_related: dict[int, list[dict[str, Any]]] = {}
    return [
        Page(f"{lang}/pr/{pr['slug']}.html", "site/pr.html", inputs,
             partial(_pr_context, store, report_html, fixed_by_lang[lang], data, pr, lang,
                     last_related),
             lang=lang, search=True, same=same, shard=site_search.pr_shard(pr["id"]),
             when=pr["date"], item=pr)
        for pr, inputs, same in prs for lang in langs
    ]


def _counts(data: SiteData) -> dict[str, Any]:
    states = Counter(p["state"] for p in data.prs)
    dirs = Counter(d for p in data.prs for d in p["directions"])
    return {
        "prs": len(data.prs),
        "states": dict(sorted(states.items())),
        "directions": dict(sorted(dirs.items())),
        "builders": len(data.builders),
        "findings": len(data.findings),
        "relations": len(data.relations),
    }


def _audit_rows(data: SiteData) -> list[dict[str, Any]]:
    """Findings with the PR that introduced each, the later one whose commit made it no longer
    hold (``fixed``: the audit at that commit's parent had it, at the commit not), else
    whether a later PR changed the class (``later``); open ones first."""
    rows = []
    for f in data.findings:
        pr = data.by_id[f["pr"]]
        fixes = [data.by_id[i] for i in data.finding_fixes.get(
            (f["rule"], f["file"] or "", f["class"]), []) if i in data.by_id]
        fx = first_after(fixes, pr["date"], pr["number"], lambda p: (p["date"], p["number"]))
        fixed = None if fx is None else {"slug": fx["slug"], "label": fx["label"],
                                         "title": fx["title"], "date": fx["date"]}
        later = None
        b = data.builders.get(f["slug"])  # the builder of the finding's file and class
        if b is not None:
            for p in b["prs"]:
                if (p["date"], p["number"] or 0) > (pr["date"], pr["number"] or 0) and (
                    p["state"] == "merged"
                ):
                    later = {"slug": p["slug"], "label": p["label"], "title": p["title"]}
                    break
        rows.append({
            **{k: v for k, v in f.items() if k not in ("pr", "slug")},
            "pr": {"slug": pr["slug"], "label": pr["label"], "title": pr["title"],
                   "date": pr["date"], "state": pr["state"]},
            "builder": b["slug"] if b is not None else None,
            "later": later,
            "fixed": fixed,
        })
    open_rows = [r for r in rows if r["later"] is None and r["fixed"] is None]
    open_rows.sort(key=lambda r: r["pr"]["date"], reverse=True)
    changed = [r for r in rows if r["later"] is not None and r["fixed"] is None]
    changed.sort(key=lambda r: r["pr"]["date"], reverse=True)
    fixed_rows = [r for r in rows if r["fixed"] is not None]
    fixed_rows.sort(key=lambda r: r["pr"]["date"], reverse=True)
    return open_rows + changed + fixed_rows


def _graph_node(data: SiteData, key: str) -> dict[str, Any]:
    """A node of the graph's data: a PR of the site, or what ``_other`` says of another
    node."""
    pr = data.by_node.get(key)
    if pr is not None:  # what _other says of a PR of the site, without the detour
        # its date (merged, closed or opened) places it on the graph's time axis
        return {"id": key, "label": pr["label"], "title": pr["title"][:160], "slug": pr["slug"],
                "state": pr["state"], "kind": key.partition(":")[0], "date": pr["date"][:10]}
    o = _other(data, key)
    return {"id": key, "label": o["label"], "title": o["title"][:160], "slug": o["slug"],
            "state": o["state"], "kind": key.partition(":")[0]}
