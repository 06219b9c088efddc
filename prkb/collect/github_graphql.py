"""GitHub's GraphQL API over PyGithub's requester: one counted query at a time, within budget.

PyGithub exposes GraphQL as ``Requester.graphql_query``, which raises on any ``errors`` entry;
a batch of PRs by alias must survive one unknown number, so queries go through the
requester's lower-level ``requestJson`` (same auth, ``GithubRetry`` for 5xx and secondary
limits, connection reuse, pacing) and both ``data`` and ``errors`` of the answer are read.

Every query asks for ``rateLimit { cost remaining resetAt nodeCount }``. Before each query the
client checks that budget: below ``reserve`` points (plus what the query is expected to cost)
it waits for ``resetAt`` when that is at most ``max_wait`` seconds away, and otherwise stops
with :class:`GraphQLRateLimited`; it also keeps under ``points_per_minute`` (half of GitHub's
secondary limit of 2,000 points a minute). :class:`BatchSizer` turns the reported cost into the
number of PRs the next query asks for.

The token is registered with :mod:`prkb.secrets`; every error message is redacted.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from github import Auth, Github, GithubRetry
from github.GithubException import GithubException
from github.Requester import Requester

from ..errors import PrkbError, network_reason
from ..secrets import redact, register_secret

DEFAULT_API_URL = "https://api.github.com"
MAX_NODES = 500_000            # GitHub refuses a query that could return more nodes
NODE_BUDGET = MAX_NODES // 5   # what a query of this client may request at most
DEFAULT_BATCH = 25             # PRs in the first query, before any cost is known
MAX_BATCH = 50                 # never more PRs per query (large answers time out on GitHub)
COST_BUDGET = 50               # points one query should cost at most
POINTS_PER_MINUTE = 1000       # half of GitHub's secondary limit (2,000 points a minute)
RESERVE = 100                  # points left untouched for other clients of the token

log = logging.getLogger(__name__)


class GraphQLUnavailable(PrkbError):
    """GraphQL cannot be used (no token): the caller falls back to the REST API."""


class GraphQLError(PrkbError):
    """GitHub refused or could not answer a whole query."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GraphQLRateLimited(GraphQLError):
    """The point budget is too low and its reset too far away: stop, run again later."""


def graphql_endpoint(api_url: str) -> str:
    """The GraphQL URL of a REST base URL: ``https://api.github.com`` -> ``.../graphql``,
    GitHub Enterprise ``https://HOST/api/v3`` -> ``https://HOST/api/graphql``."""
    parsed = urllib.parse.urlsplit(api_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise PrkbError(f"--api-url must be an http(s) URL, got {api_url!r:.80}")
    path = parsed.path.rstrip("/")
    path = path.removesuffix("/v3")
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path + "/graphql", "", ""))


@dataclass
class Answer:
    data: dict[str, Any]
    errors: list[dict[str, Any]]
    cost: int | None = None
    node_count: int | None = None


@dataclass
class GraphQLStats:
    requests: int = 0              # HTTP requests asked for (PyGithub's retries not included)
    points: int = 0                # sum of the costs GitHub reported
    remaining: int | None = None
    reset_at: str | None = None
    waited: float = 0.0            # seconds spent waiting for the budget
    batches: list[int] = field(default_factory=list)  # PRs asked for per query


def _no_token() -> GraphQLUnavailable:
    return GraphQLUnavailable(
        "GitHub's GraphQL API needs a token (GH_TOKEN or GITHUB_TOKEN); using the REST API"
    )


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _is_loopback(api_url: str) -> bool:
    return (urllib.parse.urlsplit(api_url).hostname or "") in ("127.0.0.1", "localhost", "::1")


class GraphQLClient:
    """Queries of one token against one GitHub (``graphql_endpoint(api_url)``)."""

    def __init__(
        self,
        requester: Requester,
        *,
        token: str | None,
        api_url: str = DEFAULT_API_URL,
        max_wait: float | None = 3600.0,
        reserve: int = RESERVE,
        points_per_minute: int = POINTS_PER_MINUTE,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not token:
            raise _no_token()
        register_secret(token)
        self.requester = requester
        self.endpoint = graphql_endpoint(api_url)
        self.max_wait = max_wait
        self.reserve = reserve
        self.points_per_minute = points_per_minute
        self.sleep = sleep
        self.clock = clock
        self.stats = GraphQLStats()
        self._spent: deque[tuple[float, int]] = deque()  # (time, cost) of the last minute

    @classmethod
    def connect(
        cls, *, token: str | None, api_url: str = DEFAULT_API_URL, pace: float | None = None,
        **kwargs: Any,
    ) -> GraphQLClient:
        """A client with its own PyGithub connection (``GithubRetry``, paced off loopback)."""
        if not token:
            raise _no_token()
        register_secret(token)
        if pace is None:
            pace = 0.0 if _is_loopback(api_url) else 0.25
        gh = Github(
            auth=Auth.Token(str(token)), base_url=api_url.rstrip("/"),
            retry=GithubRetry(total=8, backoff_factor=0.5, backoff_max=30),
            # a query is a POST, which PyGithub paces as a write (1 s apart by default); GitHub's
            # one-second advice is for mutations, so queries get the pace of reads
            seconds_between_requests=pace or None, seconds_between_writes=pace or None,
        )
        return cls(gh.requester, token=token, api_url=api_url, **kwargs)

    # --- budget -----------------------------------------------------------------------------

    def _wait(self, seconds: float, why: str) -> None:
        if seconds <= 0:
            return
        log.info("GitHub GraphQL: waiting %.0f s (%s)", seconds, why)
        self.stats.waited += seconds
        self.sleep(seconds)

    def ensure_budget(self, expected: int) -> None:
        """Wait for the budget or raise :class:`GraphQLRateLimited` before spending ``expected``."""
        left = self.stats.remaining
        if left is not None and left < expected + self.reserve:
            reset = _epoch(self.stats.reset_at)
            wait = None if reset is None else max(0.0, reset - self.clock()) + 1.0
            if wait is None or (self.max_wait is not None and wait > self.max_wait):
                raise GraphQLRateLimited(
                    f"GitHub GraphQL: {left} points left, resets at "
                    f"{self.stats.reset_at or 'an unknown time'}; stopped, run again after that"
                )
            self._wait(wait, f"{left} points left until {self.stats.reset_at}")
            self.stats.remaining = None  # unknown until the next answer
        now = self.clock()
        while self._spent and self._spent[0][0] <= now - 60:
            self._spent.popleft()
        spent = sum(c for _t, c in self._spent)
        if self._spent and spent + expected > self.points_per_minute:
            self._wait(self._spent[0][0] + 60 - now, "points per minute")

    # --- one query --------------------------------------------------------------------------

    def query(self, query: str, variables: dict[str, Any] | None = None, *,
              expected: int = 1) -> Answer:
        """One query; partial answers come back with their ``errors``. Raises GraphQLError."""
        for _attempt in range(3):
            self.ensure_budget(expected)
            answer = self._post(query, variables or {})
            if answer is not None:
                return answer
        raise GraphQLRateLimited("GitHub GraphQL: rate limited again after waiting; stopped")

    def _post(self, query: str, variables: dict[str, Any]) -> Answer | None:
        self.stats.requests += 1
        try:
            status, headers, body = self.requester.requestJson(
                "POST", self.endpoint, input={"query": query, "variables": variables}
            )
        except GithubException as e:
            raise GraphQLError(redact(f"GitHub GraphQL: {e.status} {_message(e.data)}"),
                               e.status) from None
        except Exception as e:  # connection errors after PyGithub's retries
            raise GraphQLError(redact(
                f"GitHub GraphQL at {self.endpoint} unreachable: {network_reason(e)}"
            )) from None
        try:
            doc = json.loads(body) if body else {}
        except ValueError:
            doc = {"message": body[:200]}
        if not isinstance(doc, dict):
            doc = {}
        if status >= 400:
            raise GraphQLError(redact(f"GitHub GraphQL: {status} {_message(doc)}"), status)
        errors = [e for e in doc.get("errors") or [] if isinstance(e, dict)]
        if any(e.get("type") == "RATE_LIMITED" for e in errors):
            self.stats.remaining = 0
            reset = headers.get("x-ratelimit-reset")
            if reset and reset.isdigit():
                self.stats.reset_at = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                    time.gmtime(int(reset)))
            return None  # query() waits (or stops) and asks again
        data = doc.get("data")
        if not isinstance(data, dict):
            why = "; ".join(_message(e) for e in errors[:3]) or "no data in the answer"
            raise GraphQLError(redact(f"GitHub GraphQL: {why}"))
        answer = Answer(data=data, errors=errors)
        rate = data.get("rateLimit")
        if isinstance(rate, dict):
            answer.cost = int(rate.get("cost") or 0)
            answer.node_count = rate.get("nodeCount")
            self.stats.points += answer.cost
            self.stats.remaining = rate.get("remaining")
            self.stats.reset_at = rate.get("resetAt")
            self._spent.append((self.clock(), answer.cost))
        log.debug("GitHub GraphQL: cost %s, %s points left", answer.cost, self.stats.remaining)
        return answer


def _message(e: Any) -> str:
    if isinstance(e, dict):
        kind = f"{e['type']}: " if e.get("type") else ""
        return f"{kind}{e.get('message') or ''}"[:300]
    return str(e)[:300]


class BatchSizer:
    """How many PRs the next query asks for, from the cost GitHub reported for the last one.

    Starts at ``start``; after each answer, the size whose cost at the observed points per PR
    stays within ``cost_budget`` and whose possible nodes stay within ``node_budget``
    (``nodes_per_item`` is the static count of the query's connections), between 1 and
    ``maximum``. A failed query halves it.
    """

    def __init__(self, nodes_per_item: int, *, start: int = DEFAULT_BATCH,
                 maximum: int = MAX_BATCH, cost_budget: int = COST_BUDGET,
                 node_budget: int = NODE_BUDGET) -> None:
        self.maximum = maximum
        self.cost_budget = cost_budget
        self.node_cap = max(1, node_budget // max(1, nodes_per_item))
        self.size = max(1, min(start, maximum, self.node_cap))
        self.per_item: float | None = None

    def observe(self, items: int, cost: int | None) -> None:
        if not items or cost is None:
            return
        self.per_item = cost / items
        fit = int(self.cost_budget / self.per_item) if self.per_item > 0 else self.maximum
        self.size = max(1, min(self.maximum, self.node_cap, fit))

    def expected(self, items: int) -> int:
        """Points a query of ``items`` is expected to cost (1 before any observation)."""
        return max(1, round(items * self.per_item)) if self.per_item else 1

    def shrink(self) -> None:
        self.size = max(1, self.size // 2)
