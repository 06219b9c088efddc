"""A page of the site as the plan names it: path, template, inputs and a lazy context."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..profile import Profile

if TYPE_CHECKING:
    from ..store import Store

LANG_CODES = {"zh": "zh-CN", "en": "en"}

# what makes a PR page's report: (store, the PR's gathered dict, language, the pages of its
# related PRs by graph node key, relative to the PR's page) -> safe HTML
ReportHtml = Callable[["Store", dict[str, Any], str, Mapping[str, str]], str]


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
    # when what it shows happened (ISO text: a PR's date, a week's end), "" for a page of
    # the whole site: the renderer hands out dated pages newest first, so that a week's
    # digest and the pages of its PRs (which say the same relations) render in one process
    when: str = ""
    # what the page shows, for a renderer that reads ahead for a run of pages (a PR page: the
    # PR's gathered dict, report_page.ReportPages.prefetch); None: nothing to read ahead
    item: Any = None


def root_of(path: str) -> str:
    depth = path.count("/")
    return "../" * depth


def holder_dir(profile: Profile) -> str:
    """The folder of the site's page per class: what the profile calls a class that holds its
    value (``[wording] holder``, in English) as a path segment ("builder", "backend",
    "kv-backend"), "class" when the profile says none."""
    return re.sub(r"[^a-z0-9]+", "-", profile.holder_en().lower()).strip("-") or "class"
