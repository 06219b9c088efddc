"""Stage 2 of the site build: the list of pages, each with its inputs and a lazy context.

A :class:`Page` names its output path, its template and the plain data it depends on
(``inputs``, hashed for incremental builds). ``context()`` is only called when the page has
to be rendered, so an unchanged PR page costs a hash, not a report.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..glossary import glossary
from ..profile import Profile
from ..store import Store
from . import site_svg
from .site_digest import digest_pages
from .site_gather import SiteData

LANG_CODES = {"zh": "zh-CN", "en": "en"}
FEED_LIMIT = 200
HOME_ROWS = 300  # rows in the home page's HTML; its script loads the rest from timeline.json
GRAPH_ROWS = 500  # rows of the relation table under the graph (the graph itself has all)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass
class Page:
    path: str  # relative to the site root, with "/" separators
    template: str
    inputs: Any
    context: Callable[[], dict[str, Any]]
    lang: str | None = None
    kind: str = "html"  # html, json, xml
    search: bool = False  # indexed by Pagefind
    extra: dict[str, Any] = field(default_factory=dict)


def github_url(pr: dict[str, Any]) -> str | None:
    """A GitHub link built from trusted parts (never the stored URL text)."""
    repo = pr.get("repo") or ""
    if not _REPO.match(repo):
        return None
    if pr.get("number") is not None:
        return f"https://github.com/{repo}/pull/{int(pr['number'])}"
    sha = pr.get("sha") or ""
    if re.fullmatch(r"[0-9a-f]{7,40}", sha):
        return f"https://github.com/{repo}/commit/{sha}"
    return None


def root_of(path: str) -> str:
    depth = path.count("/")
    return "../" * depth


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
            {k: c[k] for k in ("class", "before", "after", "direction")} for c in pr["changes"]
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
    for rel in pr["relations"]:
        out.append({**rel, "other": _other(data, rel["other"])})
    return out


def plan_pages(
    store: Store,
    data: SiteData,
    profile: Profile,
    langs: list[str],
    *,
    base_url: str | None,
    report_html: Callable[[Store, dict[str, Any], str], str],
) -> list[Page]:
    """Every page of the site, in write order."""
    pages: list[Page] = []
    timeline = [summary(p) for p in data.prs]
    summaries = {p["id"]: t for p, t in zip(data.prs, timeline, strict=True)}
    counts = _counts(data)
    lo, hi = site_svg.span(data.builders)
    ticks = site_svg.axis_ticks(lo, hi)
    matrix_rows = [
        {
            "class": b["class"],
            "slug": b["slug"],
            "files": b["files"],
            "source": b["source"],
            "current": b["current"],
            "cls": site_svg.level_class(b["current"]),
            "segments": site_svg.segments(b["runs"], lo, hi),
            "changes": len(b["runs"]),
        }
        for b in data.builders.values()
    ]
    changes_log = sorted(
        (
            {"class": b["class"], "slug": b["slug"], "run": r, "cls": site_svg.level_class(r),
             "prev": b["runs"][i - 1] if i else None}
            for b in data.builders.values()
            for i, r in enumerate(b["runs"])
        ),
        key=lambda e: (e["run"]["at"], e["class"]),
        reverse=True,
    )
    audit = _audit_rows(data)
    graph_nodes, graph_edges = _graph(data)
    levels = list(profile.levels)
    meanings = profile.level_meaning
    gl = glossary()
    common = {"langs": langs, "levels": levels, "base": base_url}
    feed_items = timeline[:FEED_LIMIT]
    # big inputs shared by several pages are hashed once; pages name them by digest
    d_graph = digest([graph_nodes, graph_edges])
    d_matrix = digest([matrix_rows, changes_log])
    d_audit = digest(audit)
    per_pr = []
    for pr in data.prs:
        rel = related(data, pr)
        now = {c["class"]: data.builders[c["class"]]["current"]
               for c in pr["changes"] if c["class"] in data.builders}
        inputs = {**common, "d": digest([{k: v for k, v in pr.items() if k != "id"}, rel, now])}
        per_pr.append((pr, rel, now, inputs))
    # a timeline row shows only fields of its PR, so the PR digests stand for the rows
    pr_digests = [str(x[3]["d"]) for x in per_pr]
    d_timeline = hashlib.sha256("".join(pr_digests).encode()).hexdigest()
    d_feed = hashlib.sha256("".join(pr_digests[:FEED_LIMIT]).encode()).hexdigest()
    per_builder = []
    for b in data.builders.values():
        prs = [summaries[p["id"]] for p in reversed(b["prs"])]
        chart = site_svg.step_chart(b["runs"], profile.levels)
        inputs = {**common, "d": digest([{k: v for k, v in b.items() if k != "prs"}, prs])}
        per_builder.append((b, prs, chart, inputs))

    pages.append(Page("index.html", "site/root.html", common, partial(dict, langs=langs)))
    pages.append(
        Page("404.html", "site/404.html", common,
             partial(dict, langs=langs, base_url=base_url))
    )
    fixed_by_lang: dict[str, dict[str, Any]] = {}
    for lang in langs:
        fixed: dict[str, Any] = {
            "levels": levels, "meanings": meanings.get(lang, {}), "profile": profile,
        }
        fixed_by_lang[lang] = fixed
        pages.append(Page(
            f"{lang}/index.html", "site/index.html", {**common, "d": d_timeline, "c": counts},
            partial(dict, fixed, timeline=timeline[:HOME_ROWS], total=len(timeline),
                    counts=counts, risk_codes=list(gl.get("risk_tags", {})),
                    directions=list(gl.get("directions", {})), platforms=profile.platforms),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/timeline.json", "", {**common, "d": d_timeline},
            partial(_timeline_json, timeline, lang), lang=lang, kind="json",
        ))
        for pr, rel, now, inputs in per_pr:
            pages.append(Page(
                f"{lang}/pr/{pr['slug']}.html", "site/pr.html", inputs,
                partial(_pr_context, store, report_html, fixed, pr, rel, now, lang),
                lang=lang, search=True,
            ))
        pages.append(Page(
            f"{lang}/matrix.html", "site/matrix.html", {**common, "d": d_matrix},
            partial(dict, fixed, rows=matrix_rows, ticks=ticks, log=changes_log,
                    bar_svg=site_svg.bar_svg),
            lang=lang,
        ))
        for b, prs, chart, inputs in per_builder:
            pages.append(Page(
                f"{lang}/builder/{b['slug']}.html", "site/builder.html", inputs,
                partial(dict, fixed, b=b, chart=chart, prs=prs),
                lang=lang, search=True,
            ))
        pages.append(Page(
            f"{lang}/graph.html", "site/graph.html", {**common, "d": d_graph},
            partial(dict, fixed, nodes=graph_nodes, edges=graph_edges[:GRAPH_ROWS],
                    total_edges=len(graph_edges), byid={n["id"]: n for n in graph_nodes}),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/graph.json", "", {**common, "d": d_graph},
            partial(dict, nodes=graph_nodes, edges=graph_edges, lang=lang),
            lang=lang, kind="json",
        ))
        pages.append(Page(
            f"{lang}/audit.html", "site/audit.html", {**common, "d": d_audit},
            partial(dict, fixed, rows=audit),
            lang=lang,
        ))
        pages.append(Page(
            f"{lang}/search.html", "site/search.html", common,
            partial(dict, fixed), lang=lang,
        ))
        pages.append(Page(
            f"{lang}/feed.xml", "", {**common, "d": d_feed},
            partial(dict, items=feed_items, lang=lang),
            lang=lang, kind="feed",
        ))
    pr_digest = {pr["id"]: str(inputs["d"]) for pr, _rel, _now, inputs in per_pr}
    pages.extend(digest_pages(store, data, profile, langs, common, pr_digest, fixed_by_lang))
    pages.append(Page(
        "feed.xml", "", {**common, "d": d_feed},
        partial(dict, items=feed_items, lang="en" if "en" in langs else langs[-1]),
        lang=None, kind="feed",
    ))
    return pages


def digest(obj: Any) -> str:
    """Hash of plain data (dicts, lists, strings, numbers) built in a fixed order.

    The pickle of such data is a faithful, deterministic serialization and several times
    cheaper than ``repr``; the hash only has to change when the data does.
    """
    return hashlib.sha256(pickle.dumps(obj, protocol=5)).hexdigest()


def _timeline_json(timeline: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """Every PR of the timeline for the home page's script, with the labels it shows."""
    gl = glossary()

    def labels(section: str) -> dict[str, str]:
        return {code: str(e.get(lang) or e.get("en") or code)
                for code, e in gl.get(section, {}).items()}

    return {
        "lang": lang,
        "labels": {"tags": labels("risk_tags"), "dirs": labels("directions")},
        "prs": [
            {"s": p["slug"], "l": p["label"], "t": p["title"], "st": p["state"],
             "d": p["date"][:10], "pl": p["platforms"], "tg": p["tags"], "dr": p["directions"],
             "c": [[c["class"], c["before"], c["after"], c["direction"]] for c in p["changes"]]}
            for p in timeline
        ],
    }


def _pr_context(
    store: Store,
    report_html: Callable[[Store, dict[str, Any], str], str],
    fixed: dict[str, Any],
    pr: dict[str, Any],
    rel: list[dict[str, Any]],
    now: dict[str, Any],
    lang: str,
) -> dict[str, Any]:
    return {
        **fixed,
        "pr": pr,
        "related": rel,
        "github": github_url(pr),
        "now": now,
        "report": report_html(store, pr, lang),
    }


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
    """Findings with the PR that introduced each, and whether a later PR changed the class."""
    rows = []
    for f in data.findings:
        pr = data.by_id[f["pr"]]
        later = None
        b = data.builders.get(f["class"])
        if b is not None:
            for p in b["prs"]:
                if (p["date"], p["number"] or 0) > (pr["date"], pr["number"] or 0) and (
                    p["state"] == "merged"
                ):
                    later = {"slug": p["slug"], "label": p["label"], "title": p["title"]}
                    break
        rows.append({
            **{k: v for k, v in f.items() if k != "pr"},
            "pr": {"slug": pr["slug"], "label": pr["label"], "title": pr["title"],
                   "date": pr["date"], "state": pr["state"]},
            "builder": b["slug"] if b is not None else None,
            "later": later,
        })
    rows.sort(key=lambda r: (r["later"] is not None, r["pr"]["date"]), reverse=False)
    open_rows = [r for r in rows if r["later"] is None]
    open_rows.sort(key=lambda r: r["pr"]["date"], reverse=True)
    changed = [r for r in rows if r["later"] is not None]
    changed.sort(key=lambda r: r["pr"]["date"], reverse=True)
    return open_rows + changed


def _graph(data: SiteData) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes and edges of the typed PR graph (only nodes with at least one relation)."""
    keys: set[str] = set()
    edges = []
    for r in data.relations:
        keys.add(r["source"])
        keys.add(r["target"])
        edges.append({"s": r["source"], "t": r["target"], "type": r["type"],
                      "conf": r["confidence"]})
    nodes = []
    for key in sorted(keys):
        o = _other(data, key)
        kind = key.split(":", 1)[0]
        nodes.append({"id": key, "label": o["label"], "title": o["title"][:160],
                      "slug": o["slug"], "state": o["state"], "kind": kind})
    return nodes, edges
