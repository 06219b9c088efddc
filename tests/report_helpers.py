"""Shared helpers for the report tests: a KB in tmp_path, synthetic records, an HTML probe."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from prkb.collect.snapshot import import_jsonl
from prkb.ingest import ingest
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.store import Store


def seeded_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "kb.sqlite")
    rep = import_jsonl(store, data_dir() / "snapshots" / "curated-seeds.jsonl", load_profile())
    assert not rep.errors
    return store


def add(store: Store, rec: dict[str, Any]) -> None:
    ingest(store, rec, load_profile())


def record(number: int, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "number": number,
        "title": f"[Bugfix] synthetic change {number}",
        "body": None,
        "state": "merged",
        "merged_at": "2026-03-02T08:30:00Z",
        "created_at": "2026-03-01T08:00:00Z",
        "updated_at": "2026-03-02T08:30:00Z",
        "html_url": f"https://github.com/vllm-project/vllm/pull/{number}",
        "user": {"login": "someone"},
        "files": [],
        "source": "github",
    }
    rec.update(kw)
    return rec


def decl_patch(cls: str, before: str, after: str) -> str:
    return (
        f"@@ -10,2 +10,2 @@ class {cls}(AttentionMetadataBuilder):\n"
        f"-    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.{before}\n"
        f"+    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.{after}\n"
    )


class Probe(HTMLParser):
    """Collects what matters for safety from an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.bad_attrs: list[tuple[str, str, str]] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") or name == "style":
                self.bad_attrs.append((tag, name, v))
            if name in ("href", "src", "action", "formaction"):
                self.urls.append(v)


def probe(html: str) -> Probe:
    p = Probe()
    p.feed(html)
    p.close()
    return p
