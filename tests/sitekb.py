"""The knowledge base the site tests build from: the curated seeds, one PR whose every text
field is hostile (``HOSTILE``, ``hostile_record``) and two plain synthetic PRs on
``SynthMetadataBuilder`` (``plain_record``), relations built. ``make_kb(path)`` returns the
open :class:`prkb.store.Store`; the ``site_kb`` fixture (conftest) makes one in ``tmp_path``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from prkb.collect.snapshot import import_jsonl
from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.site import links as site_links
from prkb.site.build import build_site
from prkb.site.state import LINKS, MANIFEST, MODEL
from prkb.store import Store

HOSTILE = {
    "title": '<script>alert("t")</script><img src=x onerror=alert(1)> 恶意 title',
    "body": (
        "Hostile body <script>alert('b')</script> <svg onload=alert(2)><circle/></svg>\n\n"
        "[click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a> "
        "<iframe src=\"javascript:alert(5)\"></iframe> ![img](https://example.com/x.png) "
        "[rel](../../index.html) 推测解码\n"
    ),
    "comment": '<img src=x onerror="alert(6)"> "><svg/onload=alert(7)>',
    "file": 'vllm/v1/attention/backends/"><img src=x onerror=alert(8)>.py',
    "author": '"><script>alert(9)</script>',
    "class": 'Evil"><script>alert(10)</script>Builder',
}


def hostile_record(number: int = 90001) -> dict[str, Any]:
    return {
        "number": number,
        "title": HOSTILE["title"],
        "body": HOSTILE["body"],
        "state": "merged",
        "created_at": "2026-07-10T10:00:00Z",
        "updated_at": "2026-07-10T10:00:00Z",
        "merged_at": "2026-07-10T10:00:00Z",
        "merge_commit_sha": "ab" * 20,
        "html_url": "javascript:alert(11)",
        "user": {"login": HOSTILE["author"]},
        "files": [{"filename": HOSTILE["file"], "status": "modified", "additions": 1,
                   "deletions": 1,
                   "patch": "@@ -1 +1 @@\n-x = '<script>'\n+x = '<svg onload=alert(12)>'\n"}],
        "comments": [{"user": {"login": "someone"}, "body": HOSTILE["comment"],
                      "created_at": "2026-07-10T11:00:00Z"}],
        "source": "curated",
        "prkb": {
            "repo": "vllm-project/vllm",
            "symbol_changes": [{"file": HOSTILE["file"], "class": HOSTILE["class"],
                                "attr": "_cudagraph_support", "before": "NEVER",
                                "after": "ALWAYS", "direction": "raised"}],
            "builder_levels": [{"class": HOSTILE["class"], "file": HOSTILE["file"],
                                "declared": "ALWAYS", "effective": "ALWAYS", "dynamic": True}],
            "findings": [{"rule": "cg-uniform-without-spec-decode", "file": HOSTILE["file"],
                          "class": HOSTILE["class"], "message_en": "<b>bad</b> finding",
                          "message_zh": "<b>坏</b> 发现"}],
            "relations": [{"type": "fixes-regression-from", "target": 47144}],
        },
    }


def plain_record(number: int, title: str, when: str, level: str, cls: str,
                 relations: list[dict[str, Any]] | None = None,
                 path: str = "vllm/v1/attention/backends/rocm_synth.py") -> dict[str, Any]:
    return {
        "number": number, "title": title, "body": f"Sets {cls} to {level}. 图捕获 capture",
        "state": "merged", "created_at": when, "updated_at": when, "merged_at": when,
        "merge_commit_sha": f"{number:040x}", "user": {"login": "dev"},
        "files": [{"filename": path, "status": "modified", "additions": 1, "deletions": 1}],
        "source": "curated",
        "prkb": {
            "repo": "vllm-project/vllm",
            "symbol_changes": [{"file": path, "class": cls, "attr": "_cudagraph_support",
                                "before": None, "after": level, "direction": "added"}],
            "builder_levels": [{"class": cls, "file": path, "declared": level,
                                "effective": level, "dynamic": False}],
            "relations": relations or [],
        },
    }


def graph_data(site: Path, lang: str) -> dict[str, Any]:
    """The graph's data as the graph page's script merges it: ``<lang>/graph.json`` names the
    parts (``graph/<part>.json``), whose nodes and edges together are the graph."""
    import json

    index = json.loads((site / lang / "graph.json").read_text(encoding="utf-8"))
    assert index["lang"] == lang
    data: dict[str, Any] = {"nodes": [], "edges": []}
    for rel in index["parts"]:
        part = json.loads((site / lang / rel).resolve().read_text(encoding="utf-8"))
        data["nodes"] += part["nodes"]
        data["edges"] += part["edges"]
    return data


def make_kb(path: Path) -> Store:
    profile = load_profile(None)
    store = Store(path)
    import_jsonl(store, data_dir() / "snapshots" / "curated-seeds.jsonl", profile)
    ingest(store, hostile_record(), profile)
    ingest(store, plain_record(90010, "Synth A", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
                               "SynthMetadataBuilder"), profile)
    ingest(store, plain_record(90011, "Synth B", "2025-06-05T00:00:00Z", "ALWAYS",
                               "SynthMetadataBuilder",
                               [{"type": "follow-up-of", "target": 90010}]), profile)
    build_relations(store, profile)
    return store


BOOKKEEPING = {MANIFEST, LINKS, MODEL}


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in BOOKKEEPING
    }


def assert_same_as_fresh(store: Store, out: Path, fresh: Path) -> None:
    if fresh.exists():
        shutil.rmtree(fresh)
    build_site(store, fresh, load_profile(None), search=False)
    got, want = files(out), files(fresh)
    assert sorted(got) == sorted(want), (
        f"only in the site: {sorted(got.keys() - want.keys())[:10]}; "
        f"only in a fresh build: {sorted(want.keys() - got.keys())[:10]}")
    stale = [name for name in want if got[name] != want[name]]
    assert stale == [], f"pages differ from a fresh build: {stale[:10]}"
    assert_same_model(out, fresh)


def assert_same_model(out: Path, fresh: Path) -> None:
    """What the site keeps for the next build's partial read is what a fresh build keeps
    (a patched build carries it over unchanged: it must still be true)."""
    import json

    def model(root: Path) -> object:
        return json.loads((root / MODEL).read_text(encoding="utf-8"))["model"]

    assert model(out) == model(fresh)


# the scan as it was before it read lower-case markup only: any tag, any case. What a built
# page yields from it and from the scan must be the same (tests/test_site_build.py)
ANY_TAG = re.compile(
    rb"""<[A-Za-z][^<>]*?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE
)


def any_tag_links(page_path: str, html: bytes) -> list[str]:
    base = page_path.rsplit("/", 1)[0] if "/" in page_path else ""
    found = {site_links._target(base, (dq or sq).decode("utf-8", "replace"))
             for dq, sq in ANY_TAG.findall(html)}
    return sorted(t for t in found if t is not None)
