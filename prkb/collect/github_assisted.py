"""Git-assisted GitHub collection: git finds the PRs, GitHub's GraphQL API fills them in.

``collect github`` takes this path when the knowledge base already holds git-collected
records of the repository (or with ``--from-kb``). It never lists every PR's files:

1. **Known numbers.** Every PR of the repository in the knowledge base, and every PR number
   their texts (title, body, reviews, comments) and stored relations name: one hop, counted
   from the PRs kept (git's, and those this run keeps), not from the referenced ones.
2. **One watch query** asks for the ``updatedAt`` of the known PRs examined before, the first
   page of the open and closed-unmerged PRs (most recently updated first, with their changed
   paths) and the first page of one GitHub search per family spelling (PRs whose text names
   it), all updated since the last run. With nothing new, that one query is the whole run.
3. **Known PRs that are new or changed** are read by number in GraphQL batches
   (:func:`~prkb.collect.github_graphql_prs.fetch_pull_requests`). A PR git collected keeps
   git's code facts and takes GitHub's discussion (:func:`prkb.records.merge_sources`, done
   by ingest); a referenced PR is kept only when its patch says so (below).
4. **Candidates**: listed unmerged PRs that touch a path where declarations live (a path the
   knowledge base saw holding one, or under the profile's ``core_rule.declaration_paths``, a
   Python file), search hits, and referenced PRs that touch such a path. Each one's REST file
   list decides, as in the listing collector (:meth:`GithubCollector.decide`, one request);
   a kept candidate's discussion comes from a GraphQL batch.

State (``collect_state``, source ``github``, scope ``OWNER/REPO@PROFILE``), each key written
in the transaction of what it covers, so a run killed at any point resumes: ``pr:N`` (the
``updatedAt`` at which PR N was examined; shared with the listing collector), ``gone:N`` (a
known number that is no PR: deleted, or an issue) and ``gql:since`` (the newest ``updatedAt``
the last complete run's watch query saw: the next run lists and searches from there).

Without a token GraphQL is not available: one line says so, and the known numbers are read
through REST (the PR, then its reviews, review comments and comments: about 4 requests each);
open and closed-unmerged PRs are then not listed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import InputError
from ..ingest import Collected, StateUpdate
from ..profile import Profile
from ..secrets import redact
from ..store import Store
from .github import (
    SOURCE,
    Decision,
    GithubCollector,
    GithubStats,
    build_record,
    check_repo,
    page_updates,
    rest_files,
)
from .github import collect_github as collect_listing
from .github_graphql import GraphQLClient, GraphQLUnavailable
from .github_graphql_prs import (
    NOT_A_PR,
    NOT_FOUND,
    Fetched,
    ListedPR,
    fetch_pull_requests,
    list_unmerged,
    probe_updated,
    rest_record,
    search_prs,
    search_terms,
    watch,
)
from .github_http import DEFAULT_API_URL, GitHubHTTPError, Page

_REF = re.compile(r"(?<![\w/&])#(\d{1,7})\b")
_URL = re.compile(r"github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d{1,7})\b")
GIT_SOURCES = ("git", "git+github")
KEPT_BATCH = 25  # kept candidates whose discussion is read in one GraphQL query


def references(rec: dict[str, Any], repo: str) -> set[int]:
    """PR numbers a record's texts name (``#N``, and links to PRs or issues of ``repo``)."""
    texts = [rec.get("title") or "", rec.get("body") or ""]
    for key in ("reviews", "comments", "review_comments"):
        texts += [str(c.get("body") or "") for c in rec.get(key) or [] if isinstance(c, dict)]
    out: set[int] = set()
    for t in texts:
        out.update(int(m) for m in _REF.findall(t))
        out.update(int(n) for r, n in _URL.findall(t) if r.lower() == repo.lower())
    out.discard(0)
    return out


class KbGithubCollector(GithubCollector):
    """:class:`GithubCollector` whose discovery starts from what the knowledge base knows."""

    def __init__(self, *args: Any, token: str | None, **kwargs: Any) -> None:
        super().__init__(*args, token=token, **kwargs)
        self.token = token
        self.stats.mode = "kb"
        self.gql: GraphQLClient | None = None
        self.collected: dict[int, tuple[str, dict[str, Any]]] = {}
        self.done: set[int] = set()   # numbers settled in this run
        self.kept_now: set[int] = set()
        prefixes = self.profile.core_rule.get("declaration_paths") or self.profile.audit.get(
            "scan_paths", [])
        self.prefixes = tuple(str(p) for p in prefixes)
        self.declaring: set[str] = set()
        self._decided: dict[int, tuple[Decision, str]] = {}  # kept candidates awaiting GraphQL
        self._refs_of: dict[int, set[int]] = {}  # PR -> numbers its texts name

    # --- bookkeeping ------------------------------------------------------------------------

    def _progress(self) -> None:
        if self.gql is not None:
            self.stats.graphql = self.gql.stats.requests
            self.stats.points = self.gql.stats.points
        self.stats.requests = self.client.counter.requests + self.stats.graphql
        self.stats.not_modified = self.client.counter.not_modified
        self.stats.rate_left = self.client.counter.rate_left
        if self.on_progress:
            self.on_progress(self.stats)

    def _mark(self, number: int, updated: str) -> StateUpdate:
        return StateUpdate(SOURCE, self.scope, f"pr:{number}", updated)

    def _gone(self, number: int, why: str) -> Collected:
        self.stats.missing += 1
        self.done.add(number)
        return Collected.only_cursor([StateUpdate(SOURCE, self.scope, f"gone:{number}", why)])

    def touches(self, paths: Iterable[str]) -> bool:
        """Whether a PR changes a path where declarations live (a candidate)."""
        for p in paths:
            if p in self.declaring:
                return True
            if (self.prefixes and p.startswith(self.prefixes)
                    and fnmatch.fnmatch(p.rsplit("/", 1)[-1], self.match.glob)):
                return True
        return False

    # --- the run ----------------------------------------------------------------------------

    def _walk(self) -> Iterator[Collected]:
        self.collected = {n: (src, rec) for n, src, rec in self.store.collected_prs(self.repo)}
        self.declaring = self.store.declaring_paths(self.repo)
        refs: set[int] = set(self.store.linked_pr_numbers(self.collected))
        for _src, rec in self.collected.values():
            refs |= references(rec, self.repo)
        known = [*self.collected, *sorted(refs - set(self.collected))]
        known = [n for n in known if self._state(f"gone:{n}") is None]
        try:
            self.gql = GraphQLClient(self.client.requester, token=self.token,
                                     api_url=self.client.api_url)
        except GraphQLUnavailable as e:
            self.warn(f"{e}: reading the {len(known)} PRs the knowledge base knows through REST "
                      "(about 4 requests each); open and closed-unmerged PRs are not listed")
            yield from self._rest_known(known)
            return
        yield from self._graphql_walk(known)

    def _graphql_walk(self, known: list[int]) -> Iterator[Collected]:
        gql = self.gql
        assert gql is not None
        since = self._state("gql:since")
        marks = {n: self._state(f"pr:{n}") for n in known}
        probe = [n for n in known if marks[n] is not None]
        spellings = [*self.profile.family, *self.profile.methods]
        w, rest = watch(gql, self.repo, probe=probe, unmerged=True,
                        terms=search_terms(self.repo, spellings, since))
        updated = {**w.updated, **probe_updated(gql, self.repo, rest)}
        self._progress()
        seen = [u for u in updated.values() if u]
        for conn in (w.unmerged, *w.searches.values()):
            seen += [str(n.get("updatedAt")) for n in (conn or {}).get("nodes") or []
                     if isinstance(n, dict) and n.get("updatedAt")]
        # 1. known PRs: unchanged ones cost nothing more
        fetch: list[int] = []
        for n in known:
            if marks[n] is not None and n in updated:
                u = updated[n]
                if u is None:
                    yield self._gone(n, NOT_FOUND)
                    continue
                if u == marks[n]:
                    self.stats.skipped += 1
                    self.done.add(n)
                    continue
            fetch.append(n)
        yield from self._fetch(fetch)
        # 2. open and closed-unmerged PRs updated since the last run, 3. search hits
        queue: list[ListedPR] = []
        listed = list_unmerged(gql, self.repo, since=since, start=w.unmerged)
        hits = (h for term in w.searches for h in search_prs(
            gql, self.repo, term, start=w.searches[term]))
        for lp, is_hit in [*((lp, False) for lp in listed), *((h, True) for h in hits)]:
            if not is_hit:
                self.stats.listed += 1
            if lp.number in self.done or lp.number in self.collected:
                continue
            if self._state(f"pr:{lp.number}") == lp.updated_at:
                self.stats.skipped += 1
                self.done.add(lp.number)
                continue
            if not (is_hit or self.touches(lp.paths)):
                continue
            if self.max_prs is not None and self.stats.examined >= self.max_prs:
                yield from self._kept_candidates(queue)
                return  # incomplete: gql:since stays where it was
            self.done.add(lp.number)
            d = self.decide({"number": lp.number, "updated_at": lp.updated_at,
                             "base": {"sha": lp.base_sha}, "head": {"sha": lp.head_sha}})
            self._progress()
            if not d.kept:
                yield Collected.only_cursor([*page_updates(d.pages),
                                             self._mark(lp.number, lp.updated_at)])
                continue
            queue.append(lp)
            self._decided[lp.number] = (d, lp.updated_at)
            if len(queue) >= KEPT_BATCH:
                yield from self._kept_candidates(queue)
                queue = []
        yield from self._kept_candidates(queue)
        # the one hop from what this run kept
        more: set[int] = set()
        for n in self.kept_now:
            more |= self._refs_of.get(n, set())
        yield from self._fetch(sorted(more - self.done - set(self.collected)),
                               expand=False)
        self.stats.complete = True
        if seen:
            top = max([*seen, since or ""])
            yield Collected.only_cursor([StateUpdate(SOURCE, self.scope, "gql:since", top)])

    # --- PRs read by number -----------------------------------------------------------------

    def _fetch(self, numbers: list[int], *, expand: bool = True) -> Iterator[Collected]:
        gql = self.gql
        assert gql is not None
        if not numbers:
            return
        for f in fetch_pull_requests(gql, self.repo, numbers):
            self.stats.fetched += 1
            yield from self._consider(f)
            self._progress()
        if expand:  # references of the known PRs just read (their texts may be new)
            more: set[int] = set()
            for n in numbers:
                if n in self.collected or n in self.kept_now:
                    more |= self._refs_of.get(n, set())
            todo = sorted(more - self.done - set(self.collected) - set(numbers))
            todo = [n for n in todo if self._state(f"gone:{n}") is None
                    and self._state(f"pr:{n}") is None]
            yield from self._fetch(todo, expand=False)

    def _consider(self, f: Fetched) -> Iterator[Collected]:
        n = f.number
        if f.node is None:
            if f.missing in (NOT_FOUND, NOT_A_PR):
                yield self._gone(n, f.missing)
            else:
                self.warn(redact(f"PR #{n}: not read: {f.missing}"))
            return
        self.done.add(n)
        node = f.node
        rec = rest_record(node, self.repo, home_repo=self.profile.repo)
        self._refs_of[n] = references(rec, self.repo)
        updated = str(node.get("updatedAt") or "")
        mark = self._mark(n, updated)
        held = self.collected.get(n)
        if held is not None and held[0] in GIT_SOURCES:
            self.stats.kept += 1  # git's code facts, GitHub's discussion (merged by ingest)
            yield Collected(rec, [mark], tag=n)
            return
        paths = [str(x["filename"]) for x in rec["files"]]
        if held is not None and sorted(paths) == sorted(
                str(x.get("filename")) for x in held[1].get("files") or []):
            self.stats.kept += 1  # kept before from its patches; the files did not change
            rec["files"] = held[1]["files"]
            yield Collected(rec, [mark], tag=n)
            return
        if held is None and not self.touches(paths):
            yield Collected.only_cursor([mark])
            return
        d = self.decide({"number": n, "updated_at": updated, "base": rec.get("base"),
                         "head": rec.get("head")})
        if not d.kept:
            yield Collected.only_cursor([*page_updates(d.pages), mark])
            return
        yield self._with_patches(rec, d, updated)

    def _with_patches(self, rec: dict[str, Any], d: Decision, updated: str) -> Collected:
        n = int(rec["number"])
        self.stats.kept += 1
        self.kept_now.add(n)
        rec["files"] = rest_files(d.files)
        return Collected(rec, [*page_updates(d.pages), self._mark(n, updated)],
                         contents=d.contents, extra_findings=d.findings, tag=n)

    def _kept_candidates(self, queue: list[ListedPR]) -> Iterator[Collected]:
        """Kept candidates: their discussion in one GraphQL batch, their files from REST."""
        if not queue:
            return
        gql = self.gql
        assert gql is not None
        for f in fetch_pull_requests(gql, self.repo, [lp.number for lp in queue]):
            d, updated = self._decided.pop(f.number)
            if f.node is None:
                self.warn(f"PR #{f.number}: kept, but GitHub did not answer for it: {f.missing}")
                continue  # unmarked: the next run decides again
            rec = rest_record(f.node, self.repo, home_repo=self.profile.repo)
            self._refs_of[f.number] = references(rec, self.repo)
            yield self._with_patches(rec, d, updated)
        self._progress()

    # --- without a token: REST for the known numbers ----------------------------------------

    def _rest_known(self, known: list[int]) -> Iterator[Collected]:
        todo, queued = list(known), set(known)
        while todo:
            n = todo.pop(0)
            try:
                _st, _h, pr = self.client.get(f"/repos/{self.repo}/pulls/{n}")
            except GitHubHTTPError as e:
                if e.status == 404:  # deleted, or an issue
                    yield self._gone(n, NOT_FOUND)
                    continue
                raise
            self.stats.fetched += 1
            updated = str(pr.get("updated_at") or "")
            if self._state(f"pr:{n}") == updated:
                self.stats.skipped += 1
                continue
            held = self.collected.get(n)
            if held is not None and held[0] in GIT_SOURCES:
                pages: list[tuple[str, Page]] = []
                lists = self.discussion(n, pages)
                rec = build_record(pr, [], lists, self.repo, self.profile)
                self.stats.kept += 1
                yield Collected(rec, [*page_updates(pages), self._mark(n, updated)], tag=n)
                new = references(rec, self.repo) - queued
                todo += sorted(new)
                queued |= new
            else:
                yield from self._examine(pr)
            self._progress()
        self.stats.complete = True


def collect_github(
    store: Store,
    repo: str,
    profile: Profile,
    *,
    token: str | None,
    api_url: str = DEFAULT_API_URL,
    since: str | None = None,
    max_prs: int | None = None,
    pace: float | None = None,
    on_progress: Callable[[GithubStats], None] | None = None,
    warn: Callable[[str], None] | None = None,
    discovery: str = "auto",
) -> GithubStats:
    """``collect github``: ``discovery`` ``"kb"`` starts from the PRs the knowledge base knows
    (this module), ``"list"`` reads every PR's file list
    (:func:`prkb.collect.github.collect_github`); ``"auto"`` is ``"kb"`` when the knowledge
    base holds git-collected records of ``repo``."""
    if discovery not in ("auto", "kb", "list"):
        raise InputError(f"discovery must be auto, kb or list, got {discovery!r:.20}")
    if discovery == "auto":
        discovery = "kb" if store.has_git_records(check_repo(repo)) else "list"
    return collect_listing(
        store, repo, profile, token=token, api_url=api_url, since=since, max_prs=max_prs,
        pace=pace, on_progress=on_progress, warn=warn,
        collector_cls=KbGithubCollector if discovery == "kb" else GithubCollector,
    )
