"""The GitHub collector: every PR of a repository whose diff touches the tracked family.

Discovery lists pull requests by last update, newest first (``state=all, sort=updated``), and
stops at the high-water mark of the last complete run (or at ``--since``). Each listed PR is
examined once per ``updated_at``: its file list is read and the PR is kept when a patch adds or
removes a line that :meth:`Profile.matches_line` accepts (a family spelling or a dynamic-support
method as a whole identifier, or a value marker such as a level on a declaration's
continuation line; the git collector's matcher). GitHub omits ``patch`` for large files: then
the file is read at the PR's base and head; when even that is impossible the PR is kept with a
``patch-unavailable`` finding. A source file whose patch has a matched changed line that the
patch cannot explain (:func:`prkb.analyze.diff.read_patch`: a continuation line whose
declaration starts above the hunk, an override's body) is read at base and head too, and
analysed as whole files when both sides can be read (else from the patch, as before).
A kept PR's reviews, review comments and conversation comments are read and the record goes
through :func:`prkb.ingest.ingest` like an imported one.

State lives in the store, written only after what it describes, so a run killed at any point
and started again ends with the records of one clean run:

- ``collect_state`` (source ``github``, scope ``OWNER/REPO@PROFILE``): ``hwm`` and ``floor``
  (the span of ``updated_at`` that a complete run covered) and ``pr:N`` (the ``updated_at``
  at which PR N was examined, kept or not);
- ``http_cache``: ETags and bodies of the first list page and of kept PRs' lists, so that an
  unchanged page costs one conditional request answered 304 (free on GitHub's limit).
"""

from __future__ import annotations

import base64
import fnmatch
import os
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from ..analyze.diff import iter_patch_lines, read_patch
from ..errors import InputError, PrkbError
from ..ingest import Collected, CursorUpdate, IngestResult, StateUpdate, ingest_all
from ..models import Finding
from ..profile import Profile
from ..secrets import install_log_filter, register_secret
from ..store import Store
from .github_http import DEFAULT_API_URL, GitHubClient, GitHubHTTPError, Page, cache_update

SOURCE = "github"
# a review comment's keys kept as GitHub sends them (threads are rebuilt from in_reply_to_id)
REVIEW_COMMENT_KEYS = ("id", "in_reply_to_id", "line", "original_line", "position", "commit_id",
                       "original_commit_id")
FILE_LIST_CAP = 3000
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class GithubStats:
    repo: str
    listed: int = 0        # PRs seen in the list pages
    examined: int = 0      # PRs whose files were read
    skipped: int = 0       # PRs already examined at their current updated_at
    kept: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    requests: int = 0
    not_modified: int = 0
    rate_left: int | None = None
    complete: bool = False
    authenticated: bool = False
    mode: str = "list"     # "list": every PR's file list; "kb": the PRs git found, GraphQL
    graphql: int = 0       # of the requests, GraphQL queries
    points: int = 0        # GraphQL points GitHub reported
    fetched: int = 0       # PRs read through GraphQL by number
    missing: int = 0       # known numbers that are no PR (deleted, or an issue)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        rate = "-" if self.rate_left is None else str(self.rate_left)
        tail = "" if self.complete else " (stopped early: run again to continue)"
        if self.mode == "kb":
            return (
                f"{self.repo}: {self.fetched} known PRs read, {self.skipped} unchanged since "
                f"the last run, {self.missing} not PRs; {self.listed} unmerged listed, "
                f"{self.examined} candidates' patches read; {self.kept} kept ({self.new} new, "
                f"{self.updated} updated, {self.unchanged} unchanged); {self.requests} requests "
                f"({self.graphql} GraphQL, {self.points} points; {self.not_modified} answered "
                f"304), rate limit left {rate}{tail}"
            )
        return (
            f"{self.repo}: {self.listed} PRs listed, {self.examined} examined, "
            f"{self.skipped} unchanged since the last run, {self.kept} kept "
            f"({self.new} new, {self.updated} updated, {self.unchanged} unchanged); "
            f"{self.requests} requests ({self.not_modified} answered 304), rate limit left {rate}"
            f"{tail}"
        )


def token_from_env(env: dict[str, str] | None = None) -> str | None:
    """``GH_TOKEN``, else ``GITHUB_TOKEN`` (the gh CLI's order); registered as a secret."""
    env = dict(os.environ) if env is None else env
    token = (env.get("GH_TOKEN") or env.get("GITHUB_TOKEN") or "").strip() or None
    register_secret(token)
    return token


def check_repo(repo: str) -> str:
    """``OWNER/NAME`` as given, or :class:`InputError` naming what is wrong with it."""
    if not _REPO_RE.match(repo or ""):
        raise InputError(f"repository must be OWNER/REPO, got {repo!r:.80}")
    return repo


def check_since(since: str | None) -> str | None:
    """A ``--since`` date as given (ISO day or time), or :class:`InputError`."""
    if since is None:
        return None
    if not _DATE_RE.match(since):
        raise InputError(f"--since must be a date YYYY-MM-DD, got {since!r:.40}")
    return since


@dataclass
class Decision:
    """What a PR's file list says (:meth:`GithubCollector.decide`)."""

    kept: bool
    files: list[dict[str, Any]]
    contents: dict[str, tuple[str | None, str | None]]
    findings: list[Finding]
    pages: list[tuple[str, Page]]


def page_updates(pages: list[tuple[str, Page]]) -> list[CursorUpdate]:
    """The cache writes of the pages read fresh (not answered 304)."""
    return [u for key, pg in pages if not pg.cached
            for u in [cache_update(key, pg)] if u is not None]


class _Matcher:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.glob = profile.python_glob
        roots = tuple(profile.audit.get("scan_paths", [])) + tuple(profile.tests_paths)
        self.roots = roots

    def patch_hits(self, patch: str) -> bool:
        return any(
            pl.kind != " " and self.profile.matches_line(pl.text) for pl in iter_patch_lines(patch)
        )

    def candidate(self, path: str) -> bool:
        """A file whose missing patch must be read another way (the profile's source files)."""
        if not fnmatch.fnmatch(path.rsplit("/", 1)[-1], self.glob):
            return False
        return not self.roots or path.startswith(self.roots)

    def texts_differ(self, before: str | None, after: str | None) -> bool:
        def lines(t: str | None) -> Counter[str]:
            return Counter(
                ln.strip() for ln in (t or "").splitlines() if self.profile.matches_line(ln)
            )

        return lines(before) != lines(after)


class GithubCollector:
    def __init__(
        self,
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
    ) -> None:
        self.store = store
        self.repo = check_repo(repo)
        self.profile = profile
        self.since = check_since(since)
        if max_prs is not None and max_prs < 1:
            raise InputError(f"--max must be at least 1, got {max_prs}")
        self.max_prs = max_prs
        register_secret(token)
        install_log_filter()
        self.client = GitHubClient(store, token=token, api_url=api_url, pace=pace)
        self.match = _Matcher(profile)
        self.scope = f"{repo}@{profile.name}"
        self.stats = GithubStats(repo=repo, authenticated=bool(token))
        self.on_progress = on_progress
        self.warn = warn or (lambda _m: None)

    # --- state ------------------------------------------------------------------------------

    def _state(self, key: str) -> str | None:
        return self.store.get_state(SOURCE, self.scope, key)

    def _progress(self) -> None:
        self.stats.requests = self.client.counter.requests
        self.stats.not_modified = self.client.counter.not_modified
        self.stats.rate_left = self.client.counter.rate_left
        if self.on_progress:
            self.on_progress(self.stats)

    # --- the run ----------------------------------------------------------------------------

    def records(self) -> Iterator[Collected]:
        """The run, as the records (and cursor updates) for :func:`prkb.ingest.ingest_all`.

        Counts of what was stored are the caller's to add (see :func:`collect_github`); a
        kept PR's cursor is written in its record's transaction, so a refused record is tried
        again by the next run.
        """
        try:
            yield from self._walk()
        finally:
            self._progress()
            self.client.close()

    def _walk(self) -> Iterator[Collected]:
        hwm, floor = self._state("hwm"), self._state("floor")
        since = self.since or ""
        if hwm is not None and floor is not None and floor <= since:
            stop_at = max(hwm, since)
            new_floor = floor if since <= hwm else since
        else:
            stop_at, new_floor = since, since
        top: str | None = None
        url = f"/repos/{self.repo}/pulls"
        params = {"state": "all", "sort": "updated", "direction": "desc"}
        first = True
        for key, page in self.client.pages(url, params, use_cache=True):
            if first and not page.cached:
                cached = cache_update(key, page)
                if cached is not None:
                    yield Collected.only_cursor([cached])
            first = False
            for pr in page.items:
                updated = str(pr.get("updated_at") or "")
                if top is None:
                    top = updated
                if updated < stop_at:
                    yield from self._finish(top, new_floor)
                    return
                self.stats.listed += 1
                number = int(pr["number"])
                if self._state(f"pr:{number}") == updated:
                    self.stats.skipped += 1
                    continue
                if self.max_prs is not None and self.stats.examined >= self.max_prs:
                    return  # incomplete: the high-water mark stays where it was
                yield from self._examine(pr)
                self._progress()
        yield from self._finish(top, new_floor)

    def _finish(self, top: str | None, floor: str) -> Iterator[Collected]:
        self.stats.complete = True
        if top is None:
            return
        hwm = self._state("hwm")
        yield Collected.only_cursor([
            StateUpdate(SOURCE, self.scope, "hwm", max(top, hwm or "")),
            StateUpdate(SOURCE, self.scope, "floor", floor),
        ])

    # --- one PR -----------------------------------------------------------------------------

    def decide(self, pr: dict[str, Any]) -> Decision:
        """Read one PR's file list and decide by its patches whether it touches the family
        (one request, more for a list over 100 files or a patch GitHub omits). ``pr`` needs
        ``number`` and, to read a file whose patch is missing, ``base.sha`` and ``head.sha``."""
        number = int(pr["number"])
        self.stats.examined += 1
        files_pages = list(
            self.client.pages(f"/repos/{self.repo}/pulls/{number}/files", use_cache=True)
        )
        files = [f for _k, pg in files_pages for f in pg.items]
        hits = False
        missing: list[dict[str, Any]] = []
        unread: list[dict[str, Any]] = []  # a matched line the patch cannot explain
        for f in files:
            patch = f.get("patch")
            path = str(f.get("filename") or "")
            if patch:
                if self.match.patch_hits(patch):
                    hits = True
                    if self.match.candidate(path) and read_patch(path, patch, self.profile)[1]:
                        unread.append(f)
            elif self.match.candidate(path):
                missing.append(f)
        contents: dict[str, tuple[str | None, str | None]] = {}
        findings: list[Finding] = []
        for f in missing:
            got = self._read_sides(pr, f)
            path = str(f["filename"])
            if got is None:
                findings.append(_unavailable(path))
            elif self.match.texts_differ(*got):
                hits = True
                contents[path] = got
            else:
                contents[path] = got
        if len(files) >= FILE_LIST_CAP and not hits:
            findings.append(_truncated())
        kept = hits or bool(findings)
        if kept:
            for f in unread:  # the patch is kept either way: an unreadable side costs nothing
                got = self._read_sides(pr, f)
                if got is not None:
                    contents[str(f["filename"])] = got
        return Decision(kept, files, contents, findings, files_pages)

    def _examine(self, pr: dict[str, Any]) -> Iterator[Collected]:
        number = int(pr["number"])
        d = self.decide(pr)
        mark = str(pr.get("updated_at") or "")
        done = StateUpdate(SOURCE, self.scope, f"pr:{number}", mark)
        if not d.kept:
            yield Collected.only_cursor([done])
            return
        self.stats.kept += 1
        extra: list[tuple[str, Page]] = list(d.pages)
        lists = self.discussion(number, extra)
        rec = build_record(pr, d.files, lists, self.repo, self.profile)
        yield Collected(
            rec, [*page_updates(extra), done], contents=d.contents,
            extra_findings=d.findings, tag=number,
        )

    def discussion(self, number: int, pages: list[tuple[str, Page]]) -> dict[str, list[Any]]:
        """A PR's reviews, review comments and conversation comments through REST (three
        requests, conditional: an unchanged list is answered 304); the pages read are added
        to ``pages`` (to cache)."""
        lists: dict[str, list[Any]] = {}
        for name, url in (
            ("reviews", f"/repos/{self.repo}/pulls/{number}/reviews"),
            ("review_comments", f"/repos/{self.repo}/pulls/{number}/comments"),
            ("comments", f"/repos/{self.repo}/issues/{number}/comments"),
        ):
            got = list(self.client.pages(url, use_cache=True))
            pages.extend(got)
            lists[name] = [it for _k, pg in got for it in pg.items]
        return lists

    def stored(self, item: Collected, res: IngestResult) -> None:
        """Count a kept PR's outcome and pass on its notes (``ingest_all``'s progress)."""
        if res.outcome in ("new", "updated", "unchanged"):
            setattr(self.stats, res.outcome, getattr(self.stats, res.outcome) + 1)
        for note in res.notes:
            self.warn(f"PR #{item.tag}: {note}")

    def refused(self, item: Collected, e: InputError) -> None:
        """A kept PR that cannot be stored: left unmarked, the next run tries it again."""
        self.warn(f"PR #{item.tag}: not stored: {e}")

    def _read_sides(
        self, pr: dict[str, Any], f: dict[str, Any]
    ) -> tuple[str | None, str | None] | None:
        """The file at the PR's base and head, or None when either side cannot be read."""
        status = str(f.get("status") or "modified")
        path = str(f["filename"])
        before_path = str(f.get("previous_filename") or path)
        base = (pr.get("base") or {}).get("sha")
        head = (pr.get("head") or {}).get("sha")
        before: str | None = None
        after: str | None = None
        try:
            if status != "added":
                if not base:
                    return None
                before = self._content(before_path, base)
                if before is None:
                    return None
            if status != "removed":
                if not head:
                    return None
                after = self._content(path, head)
                if after is None:
                    return None
        except PrkbError as e:
            self.warn(f"PR #{pr.get('number')}: {path}: {e}")
            return None
        return before, after

    def _content(self, path: str, ref: str) -> str | None:
        quoted = urllib.parse.quote(path)
        try:
            _status, _h, data = self.client.get(
                f"/repos/{self.repo}/contents/{quoted}", {"ref": ref}
            )
        except GitHubHTTPError as e:
            if e.status == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("encoding") != "base64":
            return None
        try:
            return base64.b64decode(str(data.get("content") or "")).decode("utf-8", "replace")
        except ValueError:
            return None


def _unavailable(path: str) -> Finding:
    return Finding(
        rule="patch-unavailable",
        file=path,
        class_name="",
        message_en=(
            "GitHub sent no patch for this file and it could not be read at the PR's base and "
            "head; whether it changes the tracked declaration is unknown"
        ),
        message_zh=(
            "GitHub 未提供该文件的补丁，且无法读取 PR 基线与头部版本；"
            "无法确定是否修改了所跟踪的声明"
        ),
        severity="warning",
    )


def _truncated() -> Finding:
    return Finding(
        rule="patch-unavailable",
        file="",
        class_name="",
        message_en=(
            f"GitHub lists at most {FILE_LIST_CAP} files of a PR; files beyond that were not "
            "examined"
        ),
        message_zh=f"GitHub 最多列出 PR 的 {FILE_LIST_CAP} 个文件；超出部分未被检查",
        severity="warning",
    )


def _login(u: Any) -> dict[str, str] | None:
    if isinstance(u, dict) and u.get("login"):
        return {"login": str(u["login"])}
    return None


def rest_files(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A REST file list in the record's shape."""
    return [
        {
            "filename": f.get("filename"),
            "status": f.get("status") or "modified",
            "additions": f.get("additions") or 0,
            "deletions": f.get("deletions") or 0,
            "patch": f.get("patch"),
            "previous_filename": f.get("previous_filename"),
        }
        for f in files
    ]


def _side(ref: Any) -> dict[str, Any]:
    """A PR's base or head: branch name and commit (null when GitHub sent none)."""
    ref = ref if isinstance(ref, dict) else {}
    return {"ref": ref.get("ref"), "sha": ref.get("sha")}


def build_record(
    pr: dict[str, Any],
    files: list[dict[str, Any]],
    lists: dict[str, list[Any]],
    repo: str,
    profile: Profile,
) -> dict[str, Any]:
    """The snapshot-shaped record (see :mod:`prkb.records`) of one kept PR."""
    merged_at = pr.get("merged_at")
    rec: dict[str, Any] = {
        "number": pr["number"],
        "title": pr.get("title") or "",
        "body": pr.get("body"),
        "state": "merged" if merged_at else (pr.get("state") or "open"),
        "created_at": pr.get("created_at"),
        "updated_at": pr.get("updated_at"),
        "closed_at": pr.get("closed_at"),
        "merged_at": merged_at,
        # for an unmerged PR GitHub's merge_commit_sha is its test merge, not a commit of the
        # repository's history: not a fact about the PR
        "merge_commit_sha": pr.get("merge_commit_sha") if merged_at else None,
        "html_url": pr.get("html_url"),
        "user": _login(pr.get("user")),
        "labels": [{"name": lab.get("name")} for lab in pr.get("labels") or []
                   if isinstance(lab, dict)],
        "base": _side(pr.get("base")),
        "head": _side(pr.get("head")),
        "files": rest_files(files),
        "reviews": [
            {"user": _login(r.get("user")), "state": r.get("state"), "body": r.get("body") or "",
             "submitted_at": r.get("submitted_at")}
            for r in lists.get("reviews", [])
        ],
        "comments": [
            {"user": _login(c.get("user")), "body": c.get("body") or "",
             "created_at": c.get("created_at")}
            for c in lists.get("comments", [])
        ],
        "review_comments": [
            {"user": _login(c.get("user")), "path": c.get("path"), "diff_hunk": c.get("diff_hunk"),
             "body": c.get("body") or "", "created_at": c.get("created_at"),
             **{k: c.get(k) for k in REVIEW_COMMENT_KEYS}}
            for c in lists.get("review_comments", [])
        ],
        "source": SOURCE,
    }
    if repo != profile.repo:
        rec["prkb"] = {"repo": repo}
    return rec


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
    collector_cls: type[GithubCollector] | None = None,
) -> GithubStats:
    """Collect ``repo``'s PRs that touch the profile's family into ``store`` (resumable),
    reading every PR's file list (:func:`prkb.collect.github_assisted.collect_github` chooses
    between this and the git-assisted discovery)."""
    collector = (collector_cls or GithubCollector)(
        store, repo, profile, token=token, api_url=api_url, since=since, max_prs=max_prs,
        pace=pace, on_progress=on_progress, warn=warn,
    )
    ingest_all(
        store, collector.records(), profile, progress=collector.stored,
        on_error=collector.refused,
    )
    return collector.stats
