"""A page of the site as the plan names it: path, template, inputs and a lazy context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LANG_CODES = {"zh": "zh-CN", "en": "en"}


@dataclass(slots=True)
class Page:
    path: str  # relative to the site root, with "/" separators
    template: str
    inputs: Any
    context: Callable[[], dict[str, Any]]
    lang: str | None = None
    kind: str = "html"  # html, json (a dict encoded), bytes (the context's "body"), feed
    search: bool = False  # indexed by Pagefind
    same: bool = False  # inputs known to equal the previous build's (no need to hash them)
    # its search shard (prkb.site.search: pr_shard, digest_shard); "": the primary one
    shard: str = ""


def root_of(path: str) -> str:
    depth = path.count("/")
    return "../" * depth
