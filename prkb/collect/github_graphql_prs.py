"""Pull requests through GitHub's GraphQL API: many by number per query, and the unmerged list.

:func:`fetch_pull_requests` asks for a batch of PRs in one query, one alias per number
(``pr42885: issueOrPullRequest(number: 42885) { ... on PullRequest { ... } }``): title, body,
state, dates, author, labels, base ref and commits, merge commit, files (path, counts, change
type), reviews, review threads with their comments (path, diff hunk) and conversation comments.
A connection with more than one page is completed by follow-up queries that ask only for the
next pages of those connections (several PRs' pages per query). A number that GitHub does not
know (``NOT_FOUND``: deleted, never existed) or that is an issue is reported as such and the
rest of the batch is kept. The batch size follows the cost GitHub reports
(:class:`~prkb.collect.github_graphql.BatchSizer`).

:func:`list_unmerged` lists open and closed-unmerged PRs with their changed paths, 100 per
page, most recently updated first, down to a watermark (the ``updatedAt`` of the last run).

:func:`rest_record` turns a fetched PR into the REST-shaped snapshot record that
:func:`prkb.collect.github.build_record` produces (without patches: GraphQL has none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .github_graphql import Answer, BatchSizer, GraphQLClient, GraphQLError

PAGE = 100                # items per connection page (GitHub's maximum)
THREADS_PAGE = 50         # review threads per PR in the first query
THREAD_COMMENTS = 20      # comments per thread in the first query (the rest: follow-ups)
FOLLOW_UPS = 40           # connection pages per follow-up query
SOURCE = "github"

PAGE_INFO = "pageInfo { hasNextPage endCursor }"
THREAD_COMMENT = ("fullDatabaseId author { login } body path diffHunk createdAt line originalLine "
                  "commit { oid } originalCommit { oid }")
# the nodes' selection of each connection of a PR (or, for "threadComments", of a thread)
NODES = {
    "labels": "name",
    "files": "path additions deletions changeType",
    "reviews": "author { login } state body submittedAt",
    "reviewThreads": (
        f"id path comments(first: {THREAD_COMMENTS}) {{ {PAGE_INFO} nodes {{ {THREAD_COMMENT} }} }}"
    ),
    "comments": "author { login } body createdAt",
    "threadComments": THREAD_COMMENT,
    "listedFiles": "path",
}
FIRST = {"reviewThreads": THREADS_PAGE}
PR_CONNECTIONS = ("labels", "files", "reviews", "reviewThreads", "comments")
PR_FRAGMENT = (
    "fragment PR on PullRequest { number title body state merged createdAt updatedAt closedAt "
    "mergedAt url author { login } baseRefName baseRefOid headRefName headRefOid "
    "mergeCommit { oid } "
    + " ".join(
        f"{c}(first: {FIRST.get(c, PAGE)}) {{ {PAGE_INFO} nodes {{ {NODES[c]} }} }}"
        for c in PR_CONNECTIONS
    )
    + " }"
)
# possible nodes of one PR in the batch query (GitHub's node limit counts them)
NODES_PER_PR = 4 * PAGE + THREADS_PAGE + THREADS_PAGE * THREAD_COMMENTS
RATE = "rateLimit { cost remaining resetAt nodeCount }"
NOT_FOUND = "not found"
NOT_A_PR = "not a pull request"


@dataclass
class Fetched:
    """One asked-for number: its PR (``node``, every connection complete) or why there is none."""

    number: int
    node: dict[str, Any] | None
    missing: str | None = None  # NOT_FOUND, NOT_A_PR, or GitHub's error


@dataclass
class ListedPR:
    number: int
    state: str          # "open", "closed" (closed without merging) or "merged" (search hits)
    updated_at: str
    paths: list[str]    # every changed path
    base_sha: str | None = None
    head_sha: str | None = None


def _split(repo: str) -> dict[str, str]:
    owner, _, name = repo.partition("/")
    return {"owner": owner, "name": name}


# --- follow-up pages ---------------------------------------------------------------------------


@dataclass
class _More:
    """The next page of one connection: of PR ``number``, or of the thread ``thread``."""

    number: int
    connection: str        # a key of NODES
    cursor: str
    target: dict[str, Any]  # the connection object whose "nodes" grow
    thread_id: str | None = None


def _pending(number: int, node: dict[str, Any], conns: Iterable[str],
             listing: bool = False) -> list[_More]:
    """Connections of a PR (and of its threads) with a next page."""
    out = []
    for c in conns:
        conn = node.get(c)
        if isinstance(conn, dict) and (conn.get("pageInfo") or {}).get("hasNextPage"):
            kind = "listedFiles" if listing and c == "files" else c
            out.append(_More(number, kind, str(conn["pageInfo"]["endCursor"]), conn))
        if c == "reviewThreads" and isinstance(conn, dict):
            out.extend(_thread_pending(number, conn.get("nodes") or []))
    return out


def _thread_pending(number: int, threads: list[Any]) -> list[_More]:
    out = []
    for t in threads:
        cm = t.get("comments") if isinstance(t, dict) else None
        if isinstance(cm, dict) and (cm.get("pageInfo") or {}).get("hasNextPage"):
            out.append(_More(number, "threadComments", str(cm["pageInfo"]["endCursor"]), cm,
                             thread_id=str(t.get("id"))))
    return out


def _follow_up_query(tasks: list[_More]) -> str:
    in_repo, top = [], []
    for i, t in enumerate(tasks):
        first = FIRST.get(t.connection, PAGE)
        conn = "files" if t.connection == "listedFiles" else t.connection
        page = (f"{'comments' if t.connection == 'threadComments' else conn}"
                f"(first: {first}, after: {json.dumps(t.cursor)}) "
                f"{{ {PAGE_INFO} nodes {{ {NODES[t.connection]} }} }}")
        if t.thread_id is not None:
            top.append(f"m{i}: node(id: {json.dumps(t.thread_id)}) "
                       f"{{ ... on PullRequestReviewThread {{ {page} }} }}")
        else:
            in_repo.append(f"m{i}: pullRequest(number: {int(t.number)}) {{ {page} }}")
    repo = ("repository(owner: $owner, name: $name) { " + " ".join(in_repo) + " }"
            if in_repo else "")
    decl = "($owner: String!, $name: String!)" if in_repo else ""
    return f"query{decl} {{ {RATE} {repo} {' '.join(top)} }}"


def complete(client: GraphQLClient, repo: str, tasks: list[_More]) -> list[str]:
    """Fetch every next page of ``tasks`` (and pages they reveal); returns problems met."""
    problems: list[str] = []
    while tasks:
        now, tasks = tasks[:FOLLOW_UPS], tasks[FOLLOW_UPS:]
        ans = client.query(_follow_up_query(now), _split(repo) if any(
            t.thread_id is None for t in now) else {}, expected=1)
        problems.extend(_problem(e) for e in ans.errors)
        for i, t in enumerate(now):
            holder = (ans.data.get(f"m{i}") if t.thread_id is not None
                      else (ans.data.get("repository") or {}).get(f"m{i}"))
            key = "comments" if t.connection == "threadComments" else (
                "files" if t.connection == "listedFiles" else t.connection)
            page = holder.get(key) if isinstance(holder, dict) else None
            if not isinstance(page, dict):
                problems.append(f"#{t.number}: {t.connection} could not be completed")
                continue
            nodes = page.get("nodes") or []
            t.target.setdefault("nodes", []).extend(nodes)
            t.target["pageInfo"] = page.get("pageInfo") or {}
            if (page.get("pageInfo") or {}).get("hasNextPage"):
                tasks.append(_More(t.number, t.connection, str(page["pageInfo"]["endCursor"]),
                                   t.target, t.thread_id))
            if t.connection == "reviewThreads":
                tasks.extend(_thread_pending(t.number, nodes))
    return problems


def _problem(e: dict[str, Any]) -> str:
    path = ".".join(str(p) for p in e.get("path") or [])
    kind = e.get("type") or "ERROR"
    return f"{path or 'query'}: {kind}: {str(e.get('message') or '')[:200]}"


# --- PRs by number ----------------------------------------------------------------------------


def _batch_query(numbers: list[int]) -> str:
    aliases = " ".join(
        f"pr{n}: issueOrPullRequest(number: {int(n)}) {{ __typename ...PR }}" for n in numbers
    )
    return (f"query($owner: String!, $name: String!) {{ {RATE} "
            f"repository(owner: $owner, name: $name) {{ {aliases} }} }} {PR_FRAGMENT}")


def _read_batch(numbers: list[int], ans: Answer, repo: str) -> tuple[list[Fetched], list[_More]]:
    repo_data = ans.data.get("repository")
    if not isinstance(repo_data, dict):
        raise GraphQLError(f"GitHub GraphQL: repository {repo} not found ("
                           + "; ".join(_problem(e) for e in ans.errors[:2]) + ")")
    errors = {str((e.get("path") or [None, None])[1]): e for e in ans.errors
              if len(e.get("path") or []) >= 2}
    out, more = [], []
    for n in numbers:
        node = repo_data.get(f"pr{n}")
        err = errors.get(f"pr{n}")
        if isinstance(node, dict) and node.get("__typename") == "PullRequest":
            out.append(Fetched(n, node))
            more.extend(_pending(n, node, PR_CONNECTIONS))
        elif isinstance(node, dict):
            out.append(Fetched(n, None, NOT_A_PR))
        elif err is not None and err.get("type") == "NOT_FOUND":
            out.append(Fetched(n, None, NOT_FOUND))
        else:
            out.append(Fetched(n, None, _problem(err) if err else "no answer"))
    return out, more


def fetch_pull_requests(
    client: GraphQLClient, repo: str, numbers: Iterable[int], *,
    sizer: BatchSizer | None = None, problems: list[str] | None = None,
) -> Iterator[Fetched]:
    """Every number of ``numbers`` (deduplicated, in order) as a :class:`Fetched`, batch by
    batch; a PR is yielded only when all its connections are complete."""
    todo = list(dict.fromkeys(int(n) for n in numbers))
    sizer = sizer or BatchSizer(NODES_PER_PR)
    while todo:
        batch = todo[:sizer.size]
        try:
            ans = client.query(_batch_query(batch), _split(repo),
                               expected=sizer.expected(len(batch)))
        except GraphQLError as e:
            if e.status in (502, 504) and len(batch) > 1:  # GitHub's timeout: ask for less
                sizer.shrink()
                continue
            raise
        client.stats.batches.append(len(batch))
        sizer.observe(len(batch), ans.cost)
        fetched, more = _read_batch(batch, ans, repo)
        found = complete(client, repo, more)
        if problems is not None:
            problems.extend(found)
        todo = todo[len(batch):]
        yield from fetched


# --- the unmerged list, searches, and what changed ---------------------------------------------

LISTED = ("number state updatedAt baseRefOid headRefOid files(first: " + str(PAGE) + ") { "
          + PAGE_INFO + " nodes { path } }")
UNMERGED = ("pullRequests(first: " + str(PAGE) + ", after: $after, states: [OPEN, CLOSED], "
            "orderBy: {field: UPDATED_AT, direction: DESC}) { " + PAGE_INFO + " nodes { "
            + LISTED + " } }")
LIST_QUERY = (
    "query($owner: String!, $name: String!, $after: String) { " + RATE + " "
    "repository(owner: $owner, name: $name) { " + UNMERGED + " } }"
)
SEARCH_QUERY = (
    "query($q: String!, $after: String) { " + RATE + " search(query: $q, type: ISSUE, first: "
    + str(PAGE) + ", after: $after) { " + PAGE_INFO + " nodes { __typename ... on PullRequest { "
    + LISTED + " } } } }"
)
PROBES = 200  # PRs asked for their updatedAt in one query (no connections: about one point)


def _listed(client: GraphQLClient, repo: str, nodes: list[dict[str, Any]],
            problems: list[str] | None) -> list[ListedPR]:
    """Listed PRs, with the file lists of those that have more than a page completed."""
    found = complete(client, repo, [m for nd in nodes
                                    for m in _pending(int(nd["number"]), nd, ("files",),
                                                      listing=True)])
    if problems is not None:
        problems.extend(found)
    return [
        ListedPR(
            number=int(node["number"]), state=str(node.get("state") or "").lower(),
            updated_at=str(node.get("updatedAt") or ""),
            paths=[str(f.get("path")) for f in (node.get("files") or {}).get("nodes") or []
                   if isinstance(f, dict)],
            base_sha=node.get("baseRefOid"), head_sha=node.get("headRefOid"),
        )
        for node in nodes
    ]


def list_unmerged(
    client: GraphQLClient, repo: str, *, since: str | None = None,
    problems: list[str] | None = None, start: dict[str, Any] | None = None,
) -> Iterator[ListedPR]:
    """Open and closed-unmerged PRs updated at or after ``since``, newest update first.
    ``start``: the first page's ``pullRequests`` connection, already fetched (see :func:`watch`)."""
    after: str | None = None
    seen: set[int] = set()
    conn: Any
    while True:
        if start is not None:
            conn, start = start, None
        else:
            ans = client.query(LIST_QUERY, {**_split(repo), "after": after}, expected=1)
            conn = (ans.data.get("repository") or {}).get("pullRequests")
        if not isinstance(conn, dict):
            raise GraphQLError(f"GitHub GraphQL: repository {repo} not found")
        nodes = [n for n in conn.get("nodes") or [] if isinstance(n, dict)]
        stop = False
        page: list[dict[str, Any]] = []
        for node in nodes:
            if since and str(node.get("updatedAt") or "") < since:
                stop = True
                break
            if int(node["number"]) not in seen:  # an update during the walk moves a PR up
                seen.add(int(node["number"]))
                page.append(node)
        yield from _listed(client, repo, page, problems)
        info = conn.get("pageInfo") or {}
        if stop or not info.get("hasNextPage"):
            return
        after = str(info.get("endCursor"))


def search_terms(repo: str, spellings: Iterable[str], since: str | None) -> list[str]:
    """One GitHub search per spelling: PRs of ``repo`` whose title, body or comments name it
    (updated at or after ``since`` when given)."""
    updated = f" updated:>={since}" if since else ""
    return [f'repo:{repo} is:pr "{s}" in:title,body,comments{updated}' for s in spellings]


def search_prs(
    client: GraphQLClient, repo: str, term: str, *, problems: list[str] | None = None,
    start: dict[str, Any] | None = None,
) -> Iterator[ListedPR]:
    """Every PR a search finds, page by page (``start``: its first page, already fetched)."""
    after: str | None = None
    conn: Any
    while True:
        if start is not None:
            conn, start = start, None
        else:
            ans = client.query(SEARCH_QUERY, {"q": term, "after": after}, expected=1)
            conn = ans.data.get("search")
        if not isinstance(conn, dict):
            raise GraphQLError(f"GitHub GraphQL: search {term!r} gave no answer")
        nodes = [n for n in conn.get("nodes") or []
                 if isinstance(n, dict) and n.get("__typename") == "PullRequest"]
        yield from _listed(client, repo, nodes, problems)
        info = conn.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            return
        after = str(info.get("endCursor"))


@dataclass
class Watch:
    """The first query of a run: what changed among known PRs, and first pages."""

    updated: dict[int, str | None]          # probed number -> updatedAt (None: not a PR now)
    unmerged: dict[str, Any] | None         # first page of the unmerged list
    searches: dict[str, dict[str, Any]]     # term -> first page of its search


def watch(client: GraphQLClient, repo: str, *, probe: Iterable[int] = (),
          unmerged: bool = True, terms: Iterable[str] = ()) -> tuple[Watch, list[int]]:
    """One query that asks for the ``updatedAt`` of up to :data:`PROBES` known PRs, the first
    page of the unmerged list and the first page of each search; returns the answer and the
    numbers left to probe (see :func:`probe_updated`)."""
    numbers = list(dict.fromkeys(int(n) for n in probe))
    now, rest = numbers[:PROBES], numbers[PROBES:]
    terms = list(terms)
    probes = " ".join(
        f"p{n}: issueOrPullRequest(number: {n}) {{ __typename ... on PullRequest {{ updatedAt }} }}"
        for n in now
    )
    decl = ["$owner: String!", "$name: String!"] + (["$after: String"] if unmerged else [])
    decl += [f"$s{i}: String!" for i in range(len(terms))]
    searches = " ".join(
        f"s{i}: search(query: $s{i}, type: ISSUE, first: {PAGE}) {{ {PAGE_INFO} nodes {{ "
        f"__typename ... on PullRequest {{ {LISTED} }} }} }}" for i in range(len(terms))
    )
    query = (f"query({', '.join(decl)}) {{ {RATE} repository(owner: $owner, name: $name) {{ "
             f"__typename {UNMERGED if unmerged else ''} {probes} }} {searches} }}")
    variables: dict[str, Any] = {**_split(repo), **({"after": None} if unmerged else {}),
                                 **{f"s{i}": t for i, t in enumerate(terms)}}
    ans = client.query(query, variables, expected=1)
    repo_data = ans.data.get("repository")
    if not isinstance(repo_data, dict):
        raise GraphQLError(f"GitHub GraphQL: repository {repo} not found")
    return Watch(
        updated=_probed(now, repo_data, ans),
        unmerged=repo_data.get("pullRequests") if unmerged else None,
        searches={t: ans.data.get(f"s{i}") or {} for i, t in enumerate(terms)},
    ), rest


def _probed(numbers: list[int], repo_data: dict[str, Any], ans: Answer) -> dict[int, str | None]:
    out: dict[int, str | None] = {}
    for n in numbers:
        node = repo_data.get(f"p{n}")
        if isinstance(node, dict) and node.get("__typename") == "PullRequest":
            out[n] = str(node.get("updatedAt") or "")
        elif isinstance(node, dict) or any(
            e.get("type") == "NOT_FOUND" and (e.get("path") or [None, None])[1:2] == [f"p{n}"]
            for e in ans.errors
        ):
            out[n] = None
    return out  # a number without an answer (another error) is left out: fetched in full


def probe_updated(client: GraphQLClient, repo: str, numbers: Iterable[int]
                  ) -> dict[int, str | None]:
    """``updatedAt`` of known PRs, :data:`PROBES` per query (see :func:`watch`)."""
    out: dict[int, str | None] = {}
    todo = list(numbers)
    while todo:
        got, todo = watch(client, repo, probe=todo, unmerged=False)
        out.update(got.updated)
    return out


# --- the REST-shaped record -------------------------------------------------------------------

_STATUS = {"ADDED": "added", "DELETED": "removed", "MODIFIED": "modified",
           "RENAMED": "renamed", "COPIED": "copied", "CHANGED": "changed"}


def _login(actor: Any) -> dict[str, str] | None:
    if isinstance(actor, dict) and actor.get("login"):
        return {"login": str(actor["login"])}
    return None


def _nodes(node: dict[str, Any], conn: str) -> list[dict[str, Any]]:
    c = node.get(conn)
    return [n for n in (c.get("nodes") or [] if isinstance(c, dict) else [])
            if isinstance(n, dict)]


def _db_id(c: dict[str, Any] | None) -> int | None:
    v = (c or {}).get("fullDatabaseId")  # a BigInt: GitHub sends it as a string
    return int(v) if isinstance(v, int | str) and str(v).isdigit() else None


def _review_comment(c: dict[str, Any], *, root: dict[str, Any] | None) -> dict[str, Any]:
    """A thread's comment in REST's shape; a reply's ``in_reply_to_id`` is the id of its
    thread's first comment, as REST gives it. ``position`` (diff-relative, deprecated) is
    not in GraphQL: null."""
    return {
        "user": _login(c.get("author")), "path": c.get("path"), "diff_hunk": c.get("diffHunk"),
        "body": c.get("body") or "", "created_at": c.get("createdAt"),
        "id": _db_id(c), "in_reply_to_id": _db_id(root) if root is not None else None,
        "line": c.get("line"), "original_line": c.get("originalLine"), "position": None,
        "commit_id": (c.get("commit") or {}).get("oid"),
        "original_commit_id": (c.get("originalCommit") or {}).get("oid"),
    }


def rest_record(node: dict[str, Any], repo: str, *, home_repo: str | None = None
                ) -> dict[str, Any]:
    """The snapshot record (REST shape, ``source: github``) of a fetched PR; files carry no
    patch and no previous name (GraphQL has neither). ``prkb.repo`` is set when ``repo`` is
    not ``home_repo`` (the profile's repository), as the REST collector does."""
    merged_at = node.get("mergedAt")
    state = "merged" if node.get("merged") or merged_at else str(node.get("state") or "OPEN")
    review_comments = [
        _review_comment(c, root=cs[0] if k else None)
        for t in _nodes(node, "reviewThreads") for cs in [_nodes(t, "comments")]
        for k, c in enumerate(cs)
    ]
    review_comments.sort(key=lambda c: str(c["created_at"] or ""))  # REST: creation order
    rec: dict[str, Any] = {
        "number": node["number"],
        "title": node.get("title") or "",
        "body": node.get("body") or None,  # REST sends null for an empty description
        "state": state.lower(),
        "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"),
        "closed_at": node.get("closedAt"),
        "merged_at": merged_at,
        # only a merged PR's merge commit is in history (else GitHub's test merge, or none)
        "merge_commit_sha": (node.get("mergeCommit") or {}).get("oid") if state == "merged"
        else None,
        "html_url": node.get("url"),
        "user": _login(node.get("author")),
        "labels": [{"name": lab.get("name")} for lab in _nodes(node, "labels")],
        "base": {"ref": node.get("baseRefName"), "sha": node.get("baseRefOid")},
        "head": {"ref": node.get("headRefName"), "sha": node.get("headRefOid")},
        "files": [
            {"filename": f.get("path"),
             "status": _STATUS.get(str(f.get("changeType")), "modified"),
             "additions": f.get("additions") or 0, "deletions": f.get("deletions") or 0,
             "patch": None, "previous_filename": None}
            for f in _nodes(node, "files")
        ],
        "reviews": [
            {"user": _login(r.get("author")), "state": r.get("state"),
             "body": r.get("body") or "", "submitted_at": r.get("submittedAt")}
            for r in _nodes(node, "reviews")
        ],
        "comments": [
            {"user": _login(c.get("author")), "body": c.get("body") or "",
             "created_at": c.get("createdAt")}
            for c in _nodes(node, "comments")
        ],
        "review_comments": review_comments,
        "source": SOURCE,
    }
    if home_repo is not None and repo != home_repo:
        rec["prkb"] = {"repo": repo}
    return rec
