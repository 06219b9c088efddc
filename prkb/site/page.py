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
    shard: int = -1  # a PR page's search shard (PR id // PRS_PER_SHARD); -1: the primary one


def root_of(path: str) -> str:
    depth = path.count("/")
    return "../" * depth
