"""A fake repository of vLLM's size (30,000 PRs) whose PRs are generated when first read.

``scaled_repo()`` gives a :class:`ScaledRepo` for :class:`ghserver.FakeGitHub`: PR numbers
10000..10000+total-1, about a third unmerged (half of those open, half closed), ``touching``
merged PRs and ``touching_unmerged`` unmerged ones that change a ``_cudagraph_support``
declaration (``ScaledRepo.changes[number] = (path, class, before, after)``, so a bench can
write the same changes into a git repository as squash commits ``... (#N)``), and some
PRs that only touch a declaring file's context (candidates whose patch says no).

PRs are built on first access and kept (so ``FakeGitHub.touch`` works); listing by state and
``updatedAt`` (the GraphQL endpoint's ``pullRequests``) reads ``LazyPRs.meta`` and builds only
the PRs of the page it answers; so does the REST list endpoint (``LazyPRs.rest_order``, cached
until ``FakeGitHub.touch`` or an assignment changes a PR).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ghgraphql import pr_state
from ghserver import (
    BACKENDS,
    LEVELS,
    OTHER_FILES,
    FakeRepo,
    _id,
    _ts,
    context_only_patch,
    file_entry,
    level_patch,
    make_pr,
    plain_patch,
)
from gitrepo import GitRepoBuilder

from prkb.collect.git import collect_git
from prkb.profile import load_profile
from prkb.store import Store

FIRST = 10_000
DAYS = 700  # the span of creation dates


class LazyPRs(MutableMapping[int, dict[str, Any]]):
    """``number -> PR`` over ``numbers``, each built by ``make`` on first access."""

    def __init__(self, numbers: range, make: Callable[[int], dict[str, Any]],
                 meta: Callable[[int], tuple[str, str]]) -> None:
        self._numbers = numbers
        self._make = make
        self._meta = meta
        self._built: dict[int, dict[str, Any]] = {}
        self._gone: set[int] = set()
        self._orders: dict[tuple[str, bool, bool], list[int]] = {}

    @property
    def built(self) -> int:
        return len(self._built)

    def meta(self, number: int) -> tuple[str, str]:
        """(GraphQL state, updated_at) without building the PR."""
        pr = self._built.get(number)
        if pr is not None:
            return pr_state(pr), str(pr.get("updated_at") or "")
        return self._meta(number)

    def rest_order(self, state: str, by_update: bool, desc: bool) -> list[int]:
        """PR numbers as REST's list answers them (``state`` open, closed or all; by
        ``updated_at`` then number, or by number), from metadata, cached until a change."""
        key = (state, by_update, desc)
        if key not in self._orders:
            rows = []
            for n in self:
                gql_state, updated = self.meta(n)
                rest_state = "open" if gql_state == "OPEN" else "closed"
                if state in ("all", rest_state):
                    rows.append((updated, n) if by_update else (n, n))
            rows.sort(reverse=desc)
            self._orders[key] = [n for _k, n in rows]
        return self._orders[key]

    def invalidate(self) -> None:
        """Forget cached orders (a PR was updated in place)."""
        self._orders.clear()

    def searchable(self) -> list[dict[str, Any]]:
        """The PRs a text search must read: those built so far (a generated PR's title and
        body never name a family spelling; a test that wants a hit sets or touches a PR)."""
        return [pr for n, pr in self._built.items() if n not in self._gone]

    def __getitem__(self, number: int) -> dict[str, Any]:
        pr = self._built.get(number)
        if pr is not None:
            return pr
        if number in self._gone or number not in self._numbers:
            raise KeyError(number)
        pr = self._built[number] = self._make(number)
        return pr

    def __setitem__(self, number: int, pr: dict[str, Any]) -> None:
        self._built[number] = pr
        self._gone.discard(number)
        self._orders.clear()

    def __delitem__(self, number: int) -> None:
        self[number]  # KeyError when absent
        self._built.pop(number, None)
        self._gone.add(number)
        self._orders.clear()

    def __iter__(self) -> Iterator[int]:
        for n in self._numbers:
            if n not in self._gone:
                yield n
        yield from (n for n in self._built if n not in self._numbers)

    def __len__(self) -> int:
        extra = sum(1 for n in self._built if n not in self._numbers)
        return len(self._numbers) - len(self._gone & set(self._numbers)) + extra


@dataclass
class ScaledRepo(FakeRepo):
    touching: set[int] = field(default_factory=set)            # merged, change a declaration
    touching_unmerged: set[int] = field(default_factory=set)   # open or closed unmerged
    lookalikes: set[int] = field(default_factory=set)          # a declaring path, no change
    changes: dict[int, tuple[str, str, str, str]] = field(default_factory=dict)


def _kind(i: int) -> str:
    if i % 3:
        return "merged"
    return "open" if i % 6 == 0 else "closed"


def scaled_repo(total: int = 30_000, touching: int = 50, touching_unmerged: int = 5,
                seed: int = 15) -> ScaledRepo:
    rnd = random.Random(seed)
    merged = [i for i in range(total) if _kind(i) == "merged"]
    unmerged = [i for i in range(total) if _kind(i) != "merged"]
    hit = rnd.sample(merged, touching)
    hit_unmerged = rnd.sample(unmerged, touching_unmerged)
    changed = set(hit) | set(hit_unmerged)
    look = {i for i in rnd.sample(range(total), max(1, total // 100)) if i not in changed}
    repo = ScaledRepo()
    for i in changed:
        path, cls, _tag = BACKENDS[i % len(BACKENDS)]
        a, b = random.Random(seed * 1_000_003 + i).sample(LEVELS, 2)
        repo.changes[FIRST + i] = (path, cls, a, b)
    repo.touching = {FIRST + i for i in hit}
    repo.touching_unmerged = {FIRST + i for i in hit_unmerged}
    repo.lookalikes = {FIRST + i for i in look}

    def day(i: int) -> int:
        return i * DAYS // total

    def meta(number: int) -> tuple[str, str]:
        i = number - FIRST
        kind = _kind(i)
        state = {"merged": "MERGED", "open": "OPEN", "closed": "CLOSED"}[kind]
        return state, _ts(day(i), 30 + number % 600)  # make_pr's updated_at

    def make(number: int) -> dict[str, Any]:
        i = number - FIRST
        kind = _kind(i)
        change = repo.changes.get(number)
        reviews: list[dict[str, Any]] = []
        rc: list[dict[str, Any]] = []
        comments: list[dict[str, Any]] = []
        if change is not None:
            path, cls, a, b = change
            files = [file_entry(path, level_patch(cls, a, b)),
                     file_entry(OTHER_FILES[i % len(OTHER_FILES)], plain_patch(path, i))]
            title = f"[Bugfix] Set {cls} full CUDA graph support to {b}"
            body = f"Motivation: MTP needs {b} here. Follow-up to #{number - 7}."
            reviews = [{"id": _id(number, 1), "user": {"login": "maintainer"},
                        "state": "APPROVED", "body": "Checked with spec decode.",
                        "submitted_at": _ts(day(i), 20)}]
            rc = [{"id": _id(number, 2), "user": {"login": "maintainer"}, "path": path,
                   "diff_hunk": level_patch(cls, a, b).split("\n")[0],
                   "body": "Does this hold for uniform batches?", "created_at": _ts(day(i), 10)}]
            comments = [{"id": _id(number, 3), "user": {"login": "ci-bot"},
                         "body": "All checks passed.", "created_at": _ts(day(i), 15)}]
        elif number in repo.lookalikes:
            path, cls, _tag = BACKENDS[i % len(BACKENDS)]
            files = [file_entry(path, context_only_patch(cls))]
            title, body = f"[Misc] Comment in {cls}", "Comment only."
        else:
            files = [file_entry(OTHER_FILES[(i + k) % len(OTHER_FILES)], plain_patch("x", i + k))
                     for k in range(1 + i % 2)]
            title, body = f"[Misc] Change {i}", f"Change {i}."
        pr = make_pr(number, title, files, day=day(i), body=body, merged=kind == "merged",
                     reviews=reviews, review_comments=rc, comments=comments)
        if kind == "closed":
            pr["state"] = "closed"
            pr["closed_at"] = pr["updated_at"]
        return pr

    repo.prs = LazyPRs(range(FIRST, FIRST + total), make, meta)  # type: ignore[assignment]
    return repo


# --- the same history in git ---------------------------------------------------------------------

def backend_source(cls: str, level: str) -> str:
    """A small synthetic backend file: one builder declaring ``level``."""
    return (
        "from typing import ClassVar\n\n"
        "from vllm.v1.attention.backend import AttentionCGSupport, AttentionMetadataBuilder\n\n\n"
        f"class {cls}(AttentionMetadataBuilder):\n"
        "    reorder_batch_threshold: int = 1\n"
        f"    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.{level}\n\n"
        "    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):\n"
        "        self.device = device\n"
    )


def write_history(repo: ScaledRepo, builder: Any) -> dict[int, str]:
    """Commit the merged PRs that touch the family into ``builder`` (a ``GitRepoBuilder``),
    oldest first, as squash commits ``<title> (#N)`` after a first commit with every backend
    (no PR number). Returns ``{N: sha}``. A change whose level is already there moves to
    another level (history must change the declaration for git to find the PR)."""
    levels: dict[str, str] = {}
    first: dict[str, str] = {}
    for path, cls, _tag in BACKENDS:
        levels[path] = "NEVER"
        first[path] = backend_source(cls, "NEVER")
    builder.commit(first, "Add attention backends")
    out: dict[int, str] = {}
    for n in sorted(repo.touching):
        path, cls, _a, b = repo.changes[n]
        level = b if b != levels[path] else next(x for x in LEVELS if x != levels[path])
        levels[path] = level
        title = repo.prs[n]["title"]
        out[n] = builder.commit({path: backend_source(cls, level)}, f"{title} (#{n})")
    return out


def make_alternative(repo: ScaledRepo) -> tuple[int, int, int]:
    """Make a closed-unmerged PR that touches the family and a merged one git finds fix the
    same regression in their descriptions (the graph calls the closed one an alternative).
    Returns (closed, merged, culprit)."""
    merged = sorted(repo.touching)
    closed, fix, culprit = min(repo.touching_unmerged), merged[-1], merged[0]
    for n in (closed, fix):
        pr = repo.prs[n]
        pr["body"] = f"Fix the regression from #{culprit}: graphs were captured too wide."
    pr = repo.prs[closed]
    pr["state"], pr["merged_at"], pr["closed_at"] = "closed", None, pr["updated_at"]
    return closed, fix, culprit



# --- a small world for the git-assisted GitHub tests -------------------------------------------


class World:
    """A scaled repository of 900 PRs written as git history and collected from git into a
    knowledge base under ``root``: what `collect github` then completes."""

    def __init__(self, root: Path) -> None:
        self.repo: ScaledRepo = scaled_repo(total=900, touching=12, touching_unmerged=3, seed=4)
        self.closed, self.fix, self.culprit = make_alternative(self.repo)
        self.git = GitRepoBuilder.init(root / "src")
        self.shas = write_history(self.repo, self.git)
        self.db = root / "kb.sqlite"
        with Store(self.db) as store:
            collect_git(store, str(self.git.path), load_profile(), quiet=True, warn=lambda m: None)

    @property
    def kept(self) -> set[int]:
        return self.repo.touching | self.repo.touching_unmerged
