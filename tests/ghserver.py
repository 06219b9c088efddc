"""A small fake of GitHub's REST API on 127.0.0.1, for the GitHub collector's tests and bench.

It serves synthetic pull requests (written for these tests, modelled on vLLM's: ``[ROCm]`` and
``[Bugfix]`` titles, bodies that mention other PRs, reviews, review comments with ``path`` and
``diff_hunk``) with what a client has to cope with on the real API: ``Link`` pagination,
``X-RateLimit-*`` headers, ETags answered with 304 (which do not count against the limit),
and injected faults: a primary rate-limit 403 whose reset is one second ahead, a secondary
rate-limit 403 with ``Retry-After``, a 502 and a dropped connection.

Every request that reaches the server is counted (``server.requests``) and logged
(``server.log``), so tests can assert request budgets and kill a client after N requests.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import random
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("502", "drop", "primary", "secondary")


@dataclass
class Fault:
    """Answer the next request whose path contains ``match`` with ``kind`` (once)."""

    kind: str
    match: str = ""


@dataclass
class LoggedRequest:
    method: str
    path: str
    status: int
    authorized: bool
    conditional: bool


@dataclass
class FakeRepo:
    owner: str = "vllm-project"
    name: str = "vllm"
    prs: dict[int, dict[str, Any]] = field(default_factory=dict)
    # (sha, path) -> file text; a missing key answers 404, a None value "too large"
    contents: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # numbers that are issues, not pull requests (GraphQL's issueOrPullRequest tells them apart)
    issues: set[int] = field(default_factory=set)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class FakeGitHub:
    """``with FakeGitHub(repo) as gh: ... gh.url ...``; thread-safe counters."""

    def __init__(
        self, repo: FakeRepo, *, token: str | None = None, limit: int = 5000
    ) -> None:
        self.repo = repo
        self.token = token
        self.limit = limit
        self.remaining = limit
        self.reset_at = int(time.time()) + 3600
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self.requests = 0
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # GraphQL (tests/ghgraphql.py): a separate point budget, as on GitHub
        self.gql_limit = 5000
        self.gql_remaining = 5000
        self.gql_reset_at = time.time() + 3600
        self.gql_cost_factor = 1  # tests raise it to make queries look expensive
        self._graphql: Any = None

    @property
    def graphql(self) -> Any:
        """The GraphQL endpoint (``ghgraphql.Endpoint``), created on first use."""
        if self._graphql is None:
            from ghgraphql import Endpoint

            self._graphql = Endpoint(self)
        return self._graphql

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        handler = _make_handler(self)
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # --- helpers for tests ------------------------------------------------------------------

    def reset_counters(self) -> None:
        with self.lock:
            self.requests = 0
            self.log.clear()

    def count(self, contains: str = "", status: int | None = None) -> int:
        with self.lock:
            return sum(
                1
                for r in self.log
                if contains in r.path and (status is None or r.status == status)
            )

    def touch(self, number: int, updated_at: str, comment: str | None = None) -> None:
        """Update a PR (optionally adding a conversation comment), as activity on GitHub does."""
        with self.lock:
            pr = self.repo.prs[number]
            pr["updated_at"] = updated_at
            if hasattr(self.repo.prs, "invalidate"):
                self.repo.prs.invalidate()
            if comment is not None:
                pr["_comments"].append(
                    {"id": _id(number, 900 + len(pr["_comments"])), "user": {"login": "someone"},
                     "body": comment, "created_at": updated_at}
                )

    # --- routing ----------------------------------------------------------------------------

    def route(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        repo = self.repo
        prefix = f"/repos/{repo.full_name}"
        if path == "/rate_limit":
            return 200, {"resources": {"core": {"limit": self.limit, "remaining": self.remaining}}}
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}
        rest = path[len(prefix):]
        parts = [p for p in rest.split("/") if p]
        if parts == []:
            return 200, {"full_name": repo.full_name, "name": repo.name,
                         "url": f"{self.url}{prefix}"}
        if parts == ["pulls"] and hasattr(repo.prs, "rest_order"):
            # a lazy repository (ghscale): order by metadata, build only the page answered
            order = repo.prs.rest_order(query.get("state", "open"), query.get("sort") == "updated",
                                        query.get("direction", "desc") == "desc")
            return 200, _LazyList(order, lambda n: self._public(repo.prs[n]))
        if parts == ["pulls"]:
            prs = list(repo.prs.values())
            state = query.get("state", "open")
            if state != "all":
                prs = [p for p in prs if p["state"] == state]
            if query.get("sort") == "updated":
                prs.sort(key=lambda p: (p["updated_at"], p["number"]),
                         reverse=query.get("direction", "desc") == "desc")
            else:
                prs.sort(key=lambda p: p["number"], reverse=True)
            return 200, [self._public(p) for p in prs]
        if len(parts) >= 2 and parts[0] in ("pulls", "issues") and parts[1].isdigit():
            pr = repo.prs.get(int(parts[1]))
            if pr is None:
                return 404, {"message": "Not Found"}
            tail = parts[2:]
            if parts[0] == "pulls" and tail == []:
                return 200, self._public(pr)
            if parts[0] == "pulls" and tail == ["files"]:
                return 200, pr["_files"][:3000]
            if parts[0] == "pulls" and tail == ["reviews"]:
                return 200, pr["_reviews"]
            if parts[0] == "pulls" and tail == ["comments"]:
                return 200, pr["_review_comments"]
            if parts[0] == "issues" and tail == ["comments"]:
                return 200, pr["_comments"]
        if parts and parts[0] == "contents":
            fpath = urllib.parse.unquote("/".join(parts[1:]))
            key = (query.get("ref", ""), fpath)
            if key not in repo.contents:
                return 404, {"message": "Not Found"}
            text = repo.contents[key]
            if text is None:  # over 1 MB: GitHub answers without content
                return 200, {"type": "file", "path": fpath, "encoding": "none", "content": ""}
            return 200, {
                "type": "file", "path": fpath, "encoding": "base64",
                "content": base64.encodebytes(text.encode("utf-8")).decode("ascii"),
            }
        return 404, {"message": "Not Found"}

    def _public(self, pr: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in pr.items() if not k.startswith("_")}
        api = f"{self.url}/repos/{self.repo.full_name}"
        out["url"] = f"{api}/pulls/{pr['number']}"
        out["issue_url"] = f"{api}/issues/{pr['number']}"
        return out


class _LazyList(list):  # type: ignore[type-arg]
    """A list answer whose items are built when a page of it is sliced."""

    def __init__(self, keys: list[int], build: Any) -> None:
        super().__init__()
        self._keys, self._build = keys, build

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self._build(n) for n in self._keys[k]]
        return self._build(self._keys[k])


class _QuietServer(ThreadingHTTPServer):
    """Clients that go away (killed, timed out) are expected here: no traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


def _make_handler(server: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in two writes: without this, Nagle's algorithm and
            # delayed ACKs add 40 ms to every response
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            if parsed.path.startswith("/api/v3/"):  # GitHub Enterprise's REST root
                parsed = parsed._replace(path=parsed.path[len("/api/v3"):])
            query = dict(urllib.parse.parse_qsl(parsed.query))
            auth = self.headers.get("Authorization") or ""
            authorized = bool(server.token) and auth in (
                f"token {server.token}", f"Bearer {server.token}"
            )
            conditional = "If-None-Match" in self.headers
            with server.lock:
                server.requests += 1
                fault = None
                for f in server.faults:
                    if f.match in parsed.path:
                        fault = f
                        break
                if fault is not None:
                    server.faults.remove(fault)
            if fault is not None:
                self._fault(fault, parsed.path, authorized)
                return
            if auth and not authorized:
                self._send(401, {"message": "Bad credentials"}, parsed.path, authorized, False)
                return
            with server.lock:
                status, payload = server.route(parsed.path, query)
            link = ""
            if status == 200 and isinstance(payload, list):
                per_page = max(1, min(100, int(query.get("per_page", "30"))))
                page = max(1, int(query.get("page", "1")))
                last = max(1, -(-len(payload) // per_page))
                items = payload[(page - 1) * per_page: page * per_page]
                links = []
                if page < last:
                    links.append(f'<{self._page_url(parsed, query, page + 1)}>; rel="next"')
                    links.append(f'<{self._page_url(parsed, query, last)}>; rel="last"')
                if page > 1:
                    links.append(f'<{self._page_url(parsed, query, 1)}>; rel="first"')
                    links.append(f'<{self._page_url(parsed, query, page - 1)}>; rel="prev"')
                link = ", ".join(links)
                payload = items
            body = json.dumps(payload, sort_keys=True).encode("utf-8")
            etag = '"' + hashlib.sha1(body + link.encode()).hexdigest() + '"'
            if status == 200 and self.headers.get("If-None-Match") == etag:
                self._send(304, None, parsed.path, authorized, True, etag=etag, link=link)
                return
            self._send(status, payload, parsed.path, authorized, conditional, etag=etag,
                       link=link, body=body)

        def do_POST(self) -> None:
            """GraphQL: ``/graphql`` (github.com) or ``/api/graphql`` (Enterprise)."""
            parsed = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            auth = self.headers.get("Authorization") or ""
            authorized = bool(server.token) and auth in (
                f"token {server.token}", f"Bearer {server.token}"
            )
            with server.lock:
                server.requests += 1
                fault = next((f for f in server.faults if f.match in parsed.path), None)
                if fault is not None:
                    server.faults.remove(fault)
            if fault is not None:
                self._fault(fault, parsed.path, authorized)
                return
            if parsed.path not in ("/graphql", "/api/graphql"):
                self._send(404, {"message": "Not Found"}, parsed.path, authorized, False)
                return
            if auth and not authorized:
                self._send(401, {"message": "Bad credentials"}, parsed.path, authorized, False)
                return
            try:
                payload = json.loads(raw or b"null")
            except ValueError:
                payload = None
            status, answer, headers = server.graphql.answer(payload, authorized)
            self._send(status, answer, parsed.path, authorized, False, extra=headers,
                       method="POST")

        def _page_url(
            self, parsed: urllib.parse.SplitResult, query: dict[str, str], page: int
        ) -> str:
            q = dict(query)
            q["page"] = str(page)
            return f"{server.url}{parsed.path}?{urllib.parse.urlencode(q)}"

        def _fault(self, fault: Fault, path: str, authorized: bool) -> None:
            if fault.kind == "drop":
                with server.lock:
                    server.log.append(LoggedRequest("GET", path, 0, authorized, False))
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.kind == "502":
                self._send(502, {"message": "Server Error"}, path, authorized, False)
            elif fault.kind == "primary":
                reset = str(int(time.time()) + 1)
                self._send(
                    403,
                    {"message": "API rate limit exceeded for 127.0.0.1.",
                     "documentation_url": "https://docs.github.com/rest/rate-limit"},
                    path, authorized, False, rate={"remaining": "0", "reset": reset},
                )
            elif fault.kind == "secondary":
                self._send(
                    403,
                    {"message": "You have exceeded a secondary rate limit. Please wait a few "
                                "minutes before you try again."},
                    path, authorized, False, extra={"Retry-After": "1"},
                )
            else:
                raise ValueError(f"unknown fault {fault.kind}")

        def _send(
            self,
            status: int,
            payload: Any,
            path: str,
            authorized: bool,
            conditional: bool,
            *,
            etag: str | None = None,
            link: str = "",
            body: bytes | None = None,
            rate: dict[str, str] | None = None,
            extra: dict[str, str] | None = None,
            method: str = "GET",
        ) -> None:
            if body is None:
                body = b"" if payload is None else json.dumps(payload).encode("utf-8")
            graphql_rate = method == "POST" and "X-RateLimit-Resource" in (extra or {})
            with server.lock:
                if status != 304 and status < 500 and not graphql_rate:
                    server.remaining = max(0, server.remaining - 1)
                limit = server.limit if server.token and authorized else min(server.limit, 60)
                remaining = rate["remaining"] if rate else str(min(server.remaining, limit))
                reset = rate["reset"] if rate else str(server.reset_at)
                server.log.append(LoggedRequest(method, path, status, authorized, conditional))
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if not graphql_rate:  # GraphQL answers carry their own budget's headers in extra
                self.send_header("X-RateLimit-Limit", str(limit))
                self.send_header("X-RateLimit-Remaining", remaining)
                self.send_header("X-RateLimit-Reset", reset)
                self.send_header("X-RateLimit-Used", str(limit - int(remaining)))
                self.send_header("X-RateLimit-Resource", "core")
            if etag:
                self.send_header("ETag", etag)
            if link:
                self.send_header("Link", link)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if body:
                self.wfile.write(body)

    return Handler


# --- synthetic pull requests ----------------------------------------------------------------

BACKENDS = [
    ("vllm/v1/attention/backends/rocm_aiter_fa.py", "AiterFlashAttentionMetadataBuilder", "ROCm"),
    ("vllm/v1/attention/backends/triton_attn.py", "TritonAttentionMetadataBuilder", "Kernel"),
    ("vllm/v1/attention/backends/flashinfer.py", "FlashInferMetadataBuilder", "Perf"),
    ("vllm/v1/attention/backends/mla/flashmla.py", "FlashMLAMetadataBuilder", "Bugfix"),
    ("vllm/v1/attention/backends/xpu_attn.py", "XPUAttentionMetadataBuilder", "XPU"),
]
LEVELS = ["NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS"]
OTHER_FILES = [
    "vllm/model_executor/models/llama.py",
    "vllm/entrypoints/openai/serving_chat.py",
    "docs/usage/faq.md",
    "vllm/v1/core/sched/scheduler.py",
    "tests/v1/core/test_scheduler.py",
]


def _id(number: int, k: int) -> int:
    return number * 1000 + k


def _ts(day: int, minute: int = 0) -> str:
    base = time.gmtime(1_735_689_600 + day * 86_400 + minute * 60)  # 2025-01-01 + day
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", base)


def _sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def level_patch(cls: str, before: str, after: str, attr: str = "_cudagraph_support") -> str:
    return (
        f"@@ -40,7 +40,7 @@ class {cls}(AttentionMetadataBuilder):\n"
        f"     reorder_batch_threshold: int = 1\n"
        f"-    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{before}\n"
        f"+    {attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{after}\n"
        f" \n"
        f"     def __init__(self, kv_cache_spec, layer_names, vllm_config, device):\n"
    )


def plain_patch(path: str, n: int) -> str:
    return (
        f"@@ -10,6 +10,7 @@ def helper_{n}():\n"
        f"     value = compute({n})\n"
        f"+    log.debug('step %d', {n})\n"
        f"     return value\n"
    )


def context_only_patch(cls: str) -> str:
    """A patch whose only mention of the family is an unchanged context line (not kept)."""
    return (
        f"@@ -40,6 +40,7 @@ class {cls}(AttentionMetadataBuilder):\n"
        f"     _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n"
        f"+    # keep graphs small\n"
        f"     reorder_batch_threshold: int = 1\n"
    )


def lookalike_patch(cls: str) -> str:
    """Identifiers that contain a family spelling but are not one (not kept)."""
    return (
        f"@@ -60,6 +60,7 @@ class {cls}(AttentionMetadataBuilder):\n"
        f"     def build(self, common_prefix_len, common_attn_metadata):\n"
        f"+        self._cudagraph_support_cache = None\n"
        f"+        my_attn_cudagraph_support_flag = 1\n"
        f"         return None\n"
    )


def make_pr(
    number: int,
    title: str,
    files: list[dict[str, Any]],
    *,
    day: int,
    body: str = "",
    merged: bool = True,
    user: str | None = "dev",
    reviews: list[dict[str, Any]] | None = None,
    review_comments: list[dict[str, Any]] | None = None,
    comments: list[dict[str, Any]] | None = None,
    labels: tuple[str, ...] = (),
    repo: str = "vllm-project/vllm",
) -> dict[str, Any]:
    created = _ts(day)
    updated = _ts(day, 30 + number % 600)
    return {
        "number": number,
        "title": title,
        "body": body,
        "state": "closed" if merged else "open",
        "created_at": created,
        "updated_at": updated,
        "closed_at": updated if merged else None,
        "merged_at": updated if merged else None,
        "merge_commit_sha": _sha("merge", number),
        "html_url": f"https://github.com/{repo}/pull/{number}",
        "user": None if user is None else {"login": user, "id": sum(map(ord, user))},
        "labels": [{"name": lab} for lab in labels],
        "base": {"ref": "main", "sha": _sha("base", number)},
        "head": {"ref": f"branch-{number}", "sha": _sha("head", number)},
        "_files": files,
        "_reviews": reviews or [],
        "_review_comments": review_comments or [],
        "_comments": comments or [],
    }


def file_entry(path: str, patch: str | None, status: str = "modified") -> dict[str, Any]:
    entry: dict[str, Any] = {
        "sha": _sha("blob", path, patch), "filename": path, "status": status,
        "additions": 0 if patch is None else patch.count("\n+"),
        "deletions": 0 if patch is None else patch.count("\n-"),
        "changes": 0,
    }
    if patch is not None:
        entry["patch"] = patch
    return entry


def synthetic_repo(total: int = 500, touching: int = 50, seed: int = 7) -> FakeRepo:
    """``total`` PRs of which ``touching`` change a ``_cudagraph_support`` declaration."""
    rnd = random.Random(seed)
    repo = FakeRepo()
    hits = set(rnd.sample(range(total), touching))
    for i in range(total):
        number = 20_000 + i
        day = i // 3
        if i in hits:
            path, cls, tag = BACKENDS[i % len(BACKENDS)]
            a, b = rnd.sample(LEVELS, 2)
            files = [file_entry(path, level_patch(cls, a, b)),
                     file_entry(OTHER_FILES[i % len(OTHER_FILES)], plain_patch(path, i))]
            title = f"[{tag}] Set {cls} full CUDA graph support to {b}"
            body = (f"Follow-up to #{number - 3}. Needed for MTP on this backend.\n\n"
                    f"FIX #{number - 40}")
            reviews = [{"id": _id(number, 1), "user": {"login": "maintainer"},
                        "state": "APPROVED", "body": "LGTM", "submitted_at": _ts(day, 20)}]
            rc = [{"id": _id(number, 2), "user": {"login": "maintainer"}, "path": path,
                   "diff_hunk": level_patch(cls, a, b).split("\n")[0],
                   "body": "Does this hold with spec decode?", "created_at": _ts(day, 10)}]
            comments = [{"id": _id(number, 3), "user": {"login": "ci-bot"},
                         "body": "All checks passed.", "created_at": _ts(day, 15)}]
        else:
            k = rnd.randrange(4)
            path, cls, _ = BACKENDS[i % len(BACKENDS)]
            if k == 0:
                files = [file_entry(path, context_only_patch(cls))]
            elif k == 1:
                files = [file_entry(path, lookalike_patch(cls))]
            else:
                files = [file_entry(OTHER_FILES[j % len(OTHER_FILES)], plain_patch("x", j))
                         for j in range(i, i + 1 + k)]
            kind = rnd.choice(["[Bugfix] Fix", "[Misc] Tidy", "[Doc] Explain", "[CI] Pin"])
            title = f"{kind} item {i}"
            body = f"Small change {i}."
            reviews, rc, comments = [], [], []
        repo.prs[number] = make_pr(
            number, title, files, day=day, body=body, reviews=reviews,
            review_comments=rc, comments=comments, merged=i % 9 != 0,
        )
    return repo


def fixture_repo(fillers: int = 230) -> FakeRepo:
    """Hand-written PRs, each exercising one case, plus filler PRs for list pagination."""
    repo = FakeRepo()
    aiter = "vllm/v1/attention/backends/rocm_aiter_fa.py"
    big = "vllm/v1/attention/backends/mla/common.py"
    hunk = level_patch("AiterFlashAttentionMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE",
                       "UNIFORM_BATCH")
    many = [{"id": _id(101, 100 + k), "user": {"login": f"user{k % 7}"},
             "body": f"CI run {k} passed", "created_at": _ts(300, k)} for k in range(130)]
    repo.prs[101] = make_pr(
        101, "[ROCm] Allow full CUDA graphs for uniform batches on AITER FA",
        [file_entry(aiter, hunk),
         file_entry("tests/v1/attention/test_aiter.py", plain_patch("t", 1))],
        day=300,
        body="Needed for MTP on MI300. Follow-up to #99; supersedes #97.",
        user="rocm-dev",
        labels=("rocm", "ready"),
        reviews=[
            {"id": _id(101, 1), "user": {"login": "maintainer"}, "state": "CHANGES_REQUESTED",
             "body": "Does the decode threshold grow with spec decode?",
             "submitted_at": _ts(300, 5)},
            {"id": _id(101, 2), "user": None, "state": "APPROVED", "body": "",
             "submitted_at": _ts(300, 9)},
        ],
        review_comments=[
            {"id": _id(101, 3), "user": {"login": "maintainer"}, "path": aiter,
             "diff_hunk": hunk.rstrip("\n"), "body": "Please add a test.",
             "created_at": _ts(300, 6)},
        ],
        comments=many,
    )
    repo.prs[102] = make_pr(
        102, "[Bugfix] Rename the legacy support flag on Triton builder",
        [file_entry("vllm/v1/attention/backends/triton_attn.py",
                    "@@ -30,6 +30,6 @@ class TritonAttentionMetadataBuilder(\n"
                    "-    attn_cudagraph_support = AttentionCGSupport.ALWAYS\n"
                    "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n"
                    "     reorder_batch_threshold: int = 1\n")],
        day=301, body="Reverts part of #101.", user=None,
    )
    before = "\n".join(
        ["from vllm.v1.attention.backend import AttentionCGSupport", "",
         "class MLACommonMetadataBuilder(AttentionMetadataBuilder):",
         "    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE"]
        + [f"    x{k} = {k}" for k in range(50)]
    ) + "\n"
    after = before.replace("UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH")
    repo.prs[103] = make_pr(103, "[Perf] MLA common builder: uniform batch graphs",
                            [file_entry(big, None)], day=302, body="Large diff.")
    repo.contents[(_sha("base", 103), big)] = before
    repo.contents[(_sha("head", 103), big)] = after
    repo.prs[104] = make_pr(104, "[Kernel] Regenerate the FlashMLA backend",
                            [file_entry("vllm/v1/attention/backends/mla/flashmla.py", None)],
                            day=303, merged=False)
    aiter_cls = "AiterFlashAttentionMetadataBuilder"
    repo.prs[105] = make_pr(105, "[Misc] Comment near the declaration",
                            [file_entry(aiter, context_only_patch(aiter_cls))], day=304)
    repo.prs[106] = make_pr(106, "[Misc] Cache field with a look-alike name",
                            [file_entry(aiter, lookalike_patch(aiter_cls))], day=305)
    repo.prs[107] = make_pr(107, "[Doc] Mention _cudagraph_support in the guide",
                            [file_entry("docs/design/cuda_graphs.md",
                                        "@@ -1,2 +1,2 @@\n-old\n+new\n")], day=306)
    repo.prs[108] = make_pr(
        108, "[Feature] Decide FlashInfer graph support at runtime",
        [file_entry("vllm/v1/attention/backends/flashinfer.py",
                    "@@ -80,6 +80,9 @@ class FlashInferMetadataBuilder(AttentionMetadataBuilder):\n"
                    "+    @classmethod\n"
                    "+    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):\n"
                    "+        return AttentionCGSupport.UNIFORM_BATCH\n"
                    "     reorder_batch_threshold: int = 1\n")],
        day=307, merged=False,
    )
    for i in range(fillers):
        n = 1000 + i
        repo.prs[n] = make_pr(n, f"[CI] Pin dependency {i}",
                              [file_entry(OTHER_FILES[i % len(OTHER_FILES)], plain_patch("x", i))],
                              day=i // 2)
    return repo


FIXTURE_KEPT = {101, 102, 103, 104, 108}
