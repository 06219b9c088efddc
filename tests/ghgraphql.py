"""The fake GitHub's GraphQL endpoint: GitHub's real schema, executed over the fake repository.

Every query is parsed, validated against GitHub's public schema (the npm package
``@octokit/graphql-schema``, file ``schema.graphql``, fetched by ``tests/graphql_schema.sh``)
and checked against GitHub's static limits before it runs, so a field, argument or type that
GitHub does not have fails here as it would in production:

- every connection needs ``first`` or ``last``, at most 100 (``MISSING_PAGINATION_BOUNDARIES``,
  ``EXCESSIVE_PAGINATION``);
- at most 500,000 possible nodes per query (``MAX_NODE_LIMIT_EXCEEDED``);
- cost as GitHub documents it: each connection costs one request per possible parent (the
  product of the ``first``/``last`` of the connections above it); the sum divided by 100,
  rounded, at least 1. ``rateLimit { cost remaining resetAt nodeCount }`` reports it and the
  server's point budget (``FakeGitHub.gql_remaining``) pays it; an empty budget answers
  ``RATE_LIMITED`` until ``gql_reset_at``.

Answers have GitHub's shape: ``{"data": ...}``, and ``{"errors": [...]}`` beside partial data
when some fields failed (an unknown PR number: ``type: NOT_FOUND``, ``path`` to the alias).
Resolvers read the REST-shaped PRs of :class:`ghserver.FakeRepo` (``_files``, ``_reviews``,
``_review_comments`` grouped into threads by ``in_reply_to_id``, ``_comments``); numbers in
``FakeRepo.issues`` are issues.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ghserver import FakeGitHub

try:
    import graphql
    from graphql import (
        FieldNode,
        FragmentDefinitionNode,
        FragmentSpreadNode,
        GraphQLError,
        GraphQLSchema,
        InlineFragmentNode,
        OperationDefinitionNode,
    )
except ImportError:  # pragma: no cover - the test extra installs it
    graphql = None  # type: ignore[assignment]

SCHEMA_VERSION = "15.26.1"  # keep equal to VERSION in tests/graphql_schema.sh
MAX_NODES = 500_000
MAX_PAGE = 100


def schema_path() -> Path:
    env = os.environ.get("PRKB_GRAPHQL_SCHEMA")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "prkb" / "graphql-schema" / SCHEMA_VERSION / "schema.graphql"


def require_schema() -> None:
    """Skip (outside CI) or fail (CI=true) when graphql-core or the schema is missing."""
    missing = None
    if graphql is None:
        missing = "graphql-core is not installed (pip install -e '.[test]')"
    elif not schema_path().is_file():
        missing = (f"GitHub's GraphQL schema is not at {schema_path()} "
                   "(run: bash tests/graphql_schema.sh)")
    if missing is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(missing, pytrace=False)
    pytest.skip(missing)


@functools.cache
def load_schema() -> GraphQLSchema:
    # GitHub's SDL defines two fields of EnterpriseOwnerInfo twice, which the SDL validator
    # refuses; the type system itself is valid (graphql.validate_schema finds nothing).
    schema = graphql.build_schema(schema_path().read_text("utf-8"), assume_valid_sdl=True)
    problems = graphql.validate_schema(schema)
    assert not problems, problems[:3]
    return schema


# --- static analysis: limits and cost --------------------------------------------------------


@dataclass
class Cost:
    requests: int = 0  # GitHub's "requests needed to fulfil each connection"
    nodes: int = 0

    @property
    def points(self) -> int:
        return max(1, (self.requests + 50) // 100)


class _Analyzer:
    def __init__(self, schema: GraphQLSchema, doc: Any, variables: Mapping[str, Any]) -> None:
        self.schema = schema
        self.variables = variables
        self.fragments = {d.name.value: d for d in doc.definitions
                          if isinstance(d, FragmentDefinitionNode)}
        self.errors: list[dict[str, Any]] = []
        self.cost = Cost()

    def value(self, node: Any) -> Any:
        return graphql.value_from_ast_untyped(node, self.variables)

    def walk(self, selection_set: Any, parent: Any, mult: int, path: tuple[str, ...]) -> None:
        if selection_set is None:
            return
        for sel in selection_set.selections:
            if isinstance(sel, FieldNode):
                name = sel.name.value
                if name.startswith("__"):
                    continue
                fdef = parent.fields[name]
                ftype = graphql.get_named_type(fdef.type)
                here = (*path, sel.alias.value if sel.alias else name)
                child = mult
                if ftype.name.endswith("Connection") and "pageInfo" in getattr(ftype, "fields", {}):
                    args = {a.name.value: self.value(a.value) for a in sel.arguments or []}
                    limit = args.get("first") if args.get("first") is not None else args.get("last")
                    if limit is None:
                        self.errors.append({
                            "type": "MISSING_PAGINATION_BOUNDARIES", "path": list(here),
                            "message": f"You must provide a `first` or `last` value to properly "
                                       f"paginate the `{name}` connection.",
                        })
                        limit = 0
                    elif limit > MAX_PAGE:
                        self.errors.append({
                            "type": "EXCESSIVE_PAGINATION", "path": list(here),
                            "message": f"Requesting {limit} records on the `{name}` connection "
                                       f"exceeds the `first` limit of {MAX_PAGE} records.",
                        })
                    self.cost.requests += mult
                    self.cost.nodes += mult * limit
                    child = mult * max(limit, 1)
                self.walk(sel.selection_set, ftype, child, here)
            elif isinstance(sel, InlineFragmentNode):
                t = self.schema.type_map[sel.type_condition.name.value] if sel.type_condition \
                    else parent
                self.walk(sel.selection_set, t, mult, path)
            elif isinstance(sel, FragmentSpreadNode):
                frag = self.fragments[sel.name.value]
                t = self.schema.type_map[frag.type_condition.name.value]
                self.walk(frag.selection_set, t, mult, path)


def analyze(schema: GraphQLSchema, doc: Any, variables: Mapping[str, Any]) -> _Analyzer:
    an = _Analyzer(schema, doc, variables)
    for d in doc.definitions:
        if isinstance(d, OperationDefinitionNode):
            an.walk(d.selection_set, schema.query_type, 1, ())
    if an.cost.nodes > MAX_NODES:
        an.errors.append({
            "type": "MAX_NODE_LIMIT_EXCEEDED",
            "message": f"This query requests up to {an.cost.nodes:,} possible nodes which "
                       f"exceeds the maximum limit of {MAX_NODES:,}.",
        })
    return an


# --- resolvers -----------------------------------------------------------------------------


def _cursor(i: int) -> str:
    return base64.b64encode(f"cursor:v2:{i}".encode()).decode()


def _index(cursor: str | None) -> int:
    if not cursor:
        return -1
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def connection(items: list[Any], first: int | None = None, last: int | None = None,
               after: str | None = None, before: str | None = None, **_: Any) -> dict[str, Any]:
    lo = _index(after) + 1
    hi = _index(before) if before else len(items)
    window = list(range(lo, min(hi, len(items))))
    if first is not None:
        window = window[:first]
    if last is not None:
        window = window[-last:] if last else []
    nodes = [items[i] for i in window]
    return {
        "totalCount": len(items),
        "nodes": nodes,
        "edges": [{"cursor": _cursor(i), "node": items[i]} for i in window],
        "pageInfo": {
            "hasNextPage": bool(window) and window[-1] < min(hi, len(items)) - 1,
            "hasPreviousPage": bool(window) and window[0] > 0,
            "startCursor": _cursor(window[0]) if window else None,
            "endCursor": _cursor(window[-1]) if window else None,
        },
    }


def _conn(items: Callable[[], list[Any]]) -> Callable[..., dict[str, Any]]:
    return lambda _info, **args: connection(items(), **args)


def _actor(user: Any) -> dict[str, Any] | None:
    if not isinstance(user, dict) or not user.get("login"):
        return None
    login = str(user["login"])
    return {"__typename": "Bot" if login.endswith("[bot]") else "User", "login": login}


def _not_found(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"type": "NOT_FOUND"})


_CHANGE = {"added": "ADDED", "removed": "DELETED", "modified": "MODIFIED", "renamed": "RENAMED",
           "copied": "COPIED", "changed": "CHANGED", "unchanged": "MODIFIED"}


def pr_state(pr: Mapping[str, Any]) -> str:
    if pr.get("merged_at"):
        return "MERGED"
    return "CLOSED" if pr.get("state") == "closed" else "OPEN"


def threads_of(pr: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Review comments grouped as GitHub groups them: a reply joins its first comment's thread."""
    number = int(pr["number"])
    threads: list[dict[str, Any]] = []
    by_comment: dict[Any, dict[str, Any]] = {}
    for c in pr.get("_review_comments") or []:
        parent = by_comment.get(c.get("in_reply_to_id"))
        if parent is None:
            k = len(threads)
            tid = base64.b64encode(f"PRRT:{number}:{k}".encode()).decode()
            parent = {"__typename": "PullRequestReviewThread", "id": tid,
                      "path": c.get("path") or "", "_comments": []}
            threads.append(parent)
        parent["_comments"].append(c)
        by_comment[c.get("id")] = parent
    return threads


def _thread(t: dict[str, Any]) -> dict[str, Any]:
    comments = [
        {"author": _actor(c.get("user")), "body": c.get("body") or "", "path": c.get("path"),
         "diffHunk": c.get("diff_hunk") or "", "createdAt": c.get("created_at"),
         "databaseId": c.get("id"),
         "fullDatabaseId": None if c.get("id") is None else str(c["id"]),  # BigInt: a string
         "line": c.get("line"), "originalLine": c.get("original_line"),
         "commit": {"oid": c["commit_id"]} if c.get("commit_id") else None,
         "originalCommit": ({"oid": c["original_commit_id"]}
                            if c.get("original_commit_id") else None)}
        for c in t["_comments"]
    ]
    return {**t, "isResolved": False, "isOutdated": False, "comments": _conn(lambda: comments)}


def pr_object(pr: Mapping[str, Any]) -> dict[str, Any]:
    merged = bool(pr.get("merged_at"))
    files = [{"path": f.get("filename"), "additions": int(f.get("additions") or 0),
              "deletions": int(f.get("deletions") or 0),
              "changeType": _CHANGE.get(str(f.get("status") or "modified"), "MODIFIED")}
             for f in pr.get("_files") or []]
    reviews = [{"author": _actor(r.get("user")), "state": r.get("state") or "COMMENTED",
                "body": r.get("body") or "", "submittedAt": r.get("submitted_at"),
                "databaseId": r.get("id")}
               for r in pr.get("_reviews") or []]
    comments = [{"author": _actor(c.get("user")), "body": c.get("body") or "",
                 "createdAt": c.get("created_at"), "databaseId": c.get("id")}
                for c in pr.get("_comments") or []]
    labels = [{"name": lab.get("name")} for lab in pr.get("labels") or []]
    return {
        "__typename": "PullRequest",
        "id": base64.b64encode(f"PR:{pr['number']}".encode()).decode(),
        "number": pr["number"],
        "title": pr.get("title") or "",
        "body": pr.get("body") or "",
        "state": pr_state(pr),
        "merged": merged,
        "isDraft": False,
        "createdAt": pr.get("created_at"),
        "updatedAt": pr.get("updated_at"),
        "closedAt": pr.get("closed_at"),
        "mergedAt": pr.get("merged_at"),
        "url": pr.get("html_url"),
        "author": _actor(pr.get("user")),
        "baseRefName": (pr.get("base") or {}).get("ref") or "main",
        "baseRefOid": (pr.get("base") or {}).get("sha"),
        "headRefName": (pr.get("head") or {}).get("ref") or "",
        "headRefOid": (pr.get("head") or {}).get("sha"),
        "mergeCommit": {"oid": pr.get("merge_commit_sha")} if merged else None,
        "changedFiles": len(files),
        "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
        "labels": _conn(lambda: labels),
        "files": _conn(lambda: files),
        "reviews": _conn(lambda: reviews),
        "comments": _conn(lambda: comments),
        "reviewThreads": _conn(lambda: [_thread(t) for t in threads_of(pr)]),
    }


def _meta(prs: Any, number: int) -> tuple[str, str]:
    """(state, updatedAt) of a PR, without building it when the mapping can say cheaply."""
    meta = getattr(prs, "meta", None)
    if meta is not None:
        return meta(number)  # type: ignore[no-any-return]
    pr = prs[number]
    return pr_state(pr), str(pr.get("updated_at") or "")


class Endpoint:
    """``POST /graphql`` (and ``/api/graphql``) of a :class:`ghserver.FakeGitHub`."""

    def __init__(self, server: FakeGitHub) -> None:
        self.server = server
        self.queries: list[dict[str, Any]] = []  # {query, variables, cost, nodes, aliases}

    def answer(self, payload: Any, authorized: bool) -> tuple[int, Any, dict[str, str]]:
        srv = self.server
        if not authorized:
            doc = "https://docs.github.com/graphql/guides/forming-calls-with-graphql"
            return 401, {"message": "This endpoint requires you to be authenticated.",
                         "documentation_url": f"{doc}#authenticating-with-graphql"}, {}
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            return 400, {"message": "Problems parsing JSON"}, {}
        variables = payload.get("variables") or {}
        schema = load_schema()
        try:
            doc = graphql.parse(payload["query"])
        except GraphQLError as e:
            return 200, {"errors": [{"message": f"Parse error: {e.message}"}]}, self._headers()
        problems = graphql.validate(schema, doc)
        if problems:
            return 200, {"errors": [_format(e) for e in problems]}, self._headers()
        an = analyze(schema, doc, variables)
        if an.errors:
            return 200, {"errors": an.errors}, self._headers()
        cost = an.cost.points * srv.gql_cost_factor
        with srv.lock:
            now = time.time()
            if now >= srv.gql_reset_at:
                srv.gql_remaining = srv.gql_limit
                srv.gql_reset_at = now + 3600
            if srv.gql_remaining < cost:
                limited = {"type": "RATE_LIMITED",
                           "message": "API rate limit already exceeded for user ID 1."}
                return 200, {"errors": [limited]}, self._headers(0)
            srv.gql_remaining -= cost
            remaining = srv.gql_remaining
            self.queries.append({"query": payload["query"], "variables": variables,
                                 "cost": cost, "nodes": an.cost.nodes})
        rate = {"cost": cost, "limit": srv.gql_limit, "remaining": remaining,
                "used": srv.gql_limit - remaining, "nodeCount": an.cost.nodes,
                "resetAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(srv.gql_reset_at))}
        root = {
            "rateLimit": lambda _info, **_a: rate,
            "repository": self._repository,
            "node": self._node,
            "search": self._search,
        }
        with srv.lock:
            result = graphql.execute(schema, doc, root_value=root, variable_values=variables)
        assert not isinstance(result, Awaitable), "resolvers are synchronous"
        out: dict[str, Any] = {}
        if result.errors:
            out["errors"] = [_format(e) for e in result.errors]
        out["data"] = result.data
        return 200, out, self._headers(remaining)

    def _headers(self, remaining: int | None = None) -> dict[str, str]:
        srv = self.server
        if remaining is None:
            remaining = srv.gql_remaining
        return {"X-RateLimit-Limit": str(srv.gql_limit), "X-RateLimit-Remaining": str(remaining),
                "X-RateLimit-Reset": str(int(srv.gql_reset_at)),
                "X-RateLimit-Used": str(srv.gql_limit - remaining),
                "X-RateLimit-Resource": "graphql"}

    # --- root fields ------------------------------------------------------------------------

    def _repository(self, _info: Any, owner: str, name: str, **_: Any) -> dict[str, Any]:
        repo = self.server.repo
        if f"{owner}/{name}".lower() != repo.full_name.lower():
            raise _not_found(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return {
            "__typename": "Repository",
            "nameWithOwner": repo.full_name,
            "pullRequest": self._pull_request,
            "issueOrPullRequest": self._issue_or_pr,
            "pullRequests": self._pull_requests,
        }

    def _pull_request(self, _info: Any, number: int) -> dict[str, Any]:
        pr = self.server.repo.prs.get(number)
        if pr is None:
            raise _not_found(f"Could not resolve to a PullRequest with the number of {number}.")
        return pr_object(pr)

    def _issue_or_pr(self, _info: Any, number: int) -> dict[str, Any]:
        repo = self.server.repo
        pr = repo.prs.get(number)
        if pr is not None:
            return pr_object(pr)
        if number in repo.issues:
            return {"__typename": "Issue", "number": number, "title": f"issue {number}"}
        raise _not_found(
            f"Could not resolve to an issue or pull request with the number of {number}."
        )

    def _pull_requests(self, _info: Any, states: Iterable[str] | None = None,
                       orderBy: dict[str, str] | None = None, **args: Any) -> dict[str, Any]:
        prs = self.server.repo.prs
        wanted = set(states or ("OPEN", "CLOSED", "MERGED"))
        rows = []
        for n in prs:
            state, updated = _meta(prs, n)
            if state in wanted:
                rows.append((updated, n))
        order = orderBy or {"field": "CREATED_AT", "direction": "ASC"}
        if order.get("field") == "UPDATED_AT":
            rows.sort(reverse=order.get("direction") == "DESC")
        else:  # numbers grow with creation
            rows.sort(key=lambda r: r[1], reverse=order.get("direction") == "DESC")
        numbers = [n for _u, n in rows]
        page = connection(numbers, **{k: v for k, v in args.items()
                                      if k in ("first", "last", "after", "before")})
        page["nodes"] = [pr_object(prs[n]) for n in page["nodes"]]
        for e in page["edges"]:
            e["node"] = pr_object(prs[e["node"]])
        return page

    def _search(self, _info: Any, query: str, type: str, **args: Any) -> dict[str, Any]:
        """GitHub's issue search, for ``repo:O/N is:pr "term" in:title,body,comments`` and
        ``updated:>=DATE``: PRs whose texts contain every quoted term (case-insensitive),
        most recently updated first. A lazy repository searches only the PRs built so far
        (:meth:`ghscale.LazyPRs.searchable`: generated texts name no family spelling)."""
        if type != "ISSUE":
            return connection([], **args)
        repo = self.server.repo
        terms = [t.lower() for t in re.findall(r'"([^"]+)"', query)]
        rest = re.sub(r'"[^"]*"', " ", query).split()
        quals = dict(w.split(":", 1) for w in rest if ":" in w)
        if quals.get("repo", repo.full_name).lower() != repo.full_name.lower():
            return connection([], **args)
        since = quals.get("updated", "").removeprefix(">=") or None
        prs = repo.prs
        pool = prs.searchable() if hasattr(prs, "searchable") else list(prs.values())
        hits = []
        for pr in pool:
            text = "\n".join([pr.get("title") or "", pr.get("body") or ""] + [
                c.get("body") or "" for k in ("_comments", "_reviews", "_review_comments")
                for c in pr.get(k) or []
            ]).lower()
            if since and str(pr.get("updated_at") or "") < since:
                continue
            if terms and all(t in text for t in terms):
                hits.append(pr)
        hits.sort(key=lambda p: (str(p.get("updated_at") or ""), p["number"]), reverse=True)
        page = connection(hits, **{k: v for k, v in args.items()
                                    if k in ("first", "last", "after", "before")})
        page["nodes"] = [pr_object(p) for p in page["nodes"]]
        page["issueCount"] = len(hits)
        return page

    def _node(self, _info: Any, id: str) -> dict[str, Any] | None:
        try:
            kind, number, k = base64.b64decode(id).decode().split(":")
        except ValueError:
            kind = ""
        if kind == "PRRT":
            pr = self.server.repo.prs.get(int(number))
            threads = threads_of(pr) if pr is not None else []
            if int(k) < len(threads):
                return _thread(threads[int(k)])
        raise _not_found(f"Could not resolve to a node with the global id of '{id}'")


def _format(e: GraphQLError) -> dict[str, Any]:
    out: dict[str, Any] = {"message": e.message}
    ext = dict(e.extensions or {})
    if "type" in ext:
        out["type"] = ext.pop("type")
    if e.path is not None:
        out["path"] = list(e.path)
    if e.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in e.locations]
    if ext:
        out["extensions"] = ext
    return out
