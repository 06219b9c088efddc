"""A page of the site as the plan names it: path, template, inputs and a lazy context."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..profile import Profile

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


def holder_dir(profile: Profile) -> str:
    """The folder of the site's page per class: what the profile calls a class that holds its
    value (``[wording] holder``, in English) as a path segment ("builder", "backend",
    "kv-backend"), "class" when the profile says none."""
    return re.sub(r"[^a-z0-9]+", "-", profile.holder_en().lower()).strip("-") or "class"
