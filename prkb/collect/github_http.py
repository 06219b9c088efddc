"""GitHub REST access for the collector: PyGithub's requester, counted, with conditional GETs.

All HTTP goes through PyGithub's :class:`~github.Requester.Requester` (auth, base URL, its
``GithubRetry`` for primary/secondary rate limits, ``Retry-After`` and 5xx, connection reuse).
On top of it this module adds what the collector needs and PyGithub's lazy objects do not
offer: ``If-None-Match`` requests answered from the ``http_cache`` table on 304, ``Link``
pagination that can stop after any page, and a count of every HTTP request spent (retries
included, counted by a ``GithubRetry`` subclass) and of the rate limit left.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from github import Auth, Github, GithubRetry
from github.GithubException import GithubException
from github.Requester import Requester

from ..errors import PrkbError, network_reason
from ..ingest import CachedPage
from ..secrets import redact
from ..store import Store

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100


class GitHubHTTPError(PrkbError):
    """GitHub answered a request with an error status (after PyGithub's retries)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class RequestCounter:
    calls: int = 0       # requests the collector asked for
    retries: int = 0     # extra attempts GithubRetry made (rate limits, 5xx, dropped connections)
    not_modified: int = 0
    rate_left: int | None = None
    rate_limit: int | None = None

    @property
    def requests(self) -> int:
        return self.calls + self.retries


class CountingRetry(GithubRetry):
    """``GithubRetry`` that counts each retry it grants (so every HTTP attempt is counted)."""

    def __init__(self, counter: RequestCounter | None = None, **kwargs: Any) -> None:
        self.counter = counter
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> CountingRetry:
        kw["counter"] = self.counter
        return super().new(**kw)

    def increment(self, *args: Any, **kwargs: Any) -> Any:
        retry = super().increment(*args, **kwargs)
        if self.counter is not None:
            self.counter.retries += 1
        return retry


@dataclass
class Page:
    items: list[Any]
    next_url: str | None
    etag: str | None
    cached: bool  # answered 304 from the cache


def _next_link(header: str | None) -> str | None:
    for part in (header or "").split(","):
        segs = part.split(";")
        if len(segs) >= 2 and any(s.strip() == 'rel="next"' for s in segs[1:]):
            return segs[0].strip().strip("<>")
    return None


def _is_loopback(api_url: str) -> bool:
    host = urllib.parse.urlsplit(api_url).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")


class GitHubClient:
    """A counted, cache-aware GET client over PyGithub's requester."""

    def __init__(
        self,
        store: Store,
        *,
        token: str | None,
        api_url: str = DEFAULT_API_URL,
        max_rate_limit_wait: float | None = 3600.0,
        pace: float | None = None,
    ) -> None:
        parsed = urllib.parse.urlsplit(api_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise PrkbError(f"--api-url must be an http(s) URL, got {api_url!r:.80}")
        self.store = store
        self.api_url = api_url.rstrip("/")
        self.counter = RequestCounter()
        retry = CountingRetry(
            counter=self.counter, total=8, connect=2, read=3, backoff_factor=0.5, backoff_max=30,
            max_rate_limit_wait=max_rate_limit_wait,
        )
        if pace is None:  # PyGithub's pacing is for github.com; a loopback server needs none
            pace = 0.0 if _is_loopback(api_url) else 0.25
        self.gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            per_page=PER_PAGE,
            retry=retry,
            seconds_between_requests=pace or None,
            # GraphQL queries (prkb.collect.github_graphql) share this requester: they are POSTs,
            # which PyGithub paces as writes (1 s apart by default), but they read
            seconds_between_writes=pace or None,
        )
        self.requester: Requester = self.gh.requester
        self._host = (parsed.hostname, parsed.port)

    def close(self) -> None:
        self.gh.close()

    # --- one request ------------------------------------------------------------------------

    def get(
        self, url: str, params: dict[str, Any] | None = None, *, etag: str | None = None
    ) -> tuple[int, dict[str, Any], Any]:
        """(status, headers, JSON) of one GET; 304 gives ``None`` as JSON. Raises PrkbError."""
        if url.startswith("http"):
            p = urllib.parse.urlsplit(url)
            if (p.hostname, p.port) != self._host:
                raise PrkbError(f"GitHub sent a link to another host: {p.hostname}")
        headers = {"Accept": "application/vnd.github+json"}
        if etag:
            headers["If-None-Match"] = etag
        self.counter.calls += 1
        try:
            status, hdrs, body = self.requester.requestJson("GET", url, params, headers)
        except GithubException as e:
            raise GitHubHTTPError(redact(f"GitHub API: {_describe(e)}"), e.status) from None
        except Exception as e:  # requests' connection errors after the retries gave up
            raise PrkbError(
                redact(f"GitHub API at {self.api_url} unreachable: {network_reason(e)}")
            ) from None
        remaining, limit = self.requester.rate_limiting
        if limit >= 0:
            self.counter.rate_left, self.counter.rate_limit = remaining, limit
        if status == 304:
            self.counter.not_modified += 1
            return status, hdrs, None
        try:
            data = json.loads(body) if body else None
        except ValueError:
            data = {"message": body[:200]}
        if status >= 400:
            exc = Requester.createException(status, hdrs, data if isinstance(data, dict) else {})
            raise GitHubHTTPError(
                redact(f"GitHub API: GET {url.split('?')[0]}: {_describe(exc)}"), status
            )
        return status, hdrs, data

    # --- pages, with the http_cache table ---------------------------------------------------

    def page(self, url: str, params: dict[str, Any] | None, *, use_cache: bool) -> Page:
        """One page of a list; with ``use_cache`` a conditional GET answered from the cache."""
        key = Requester.add_parameters_to_url(url, params or {}) if params else url
        cached = self.store.cached_page(key) if use_cache else None
        status, hdrs, data = self.get(url, params, etag=cached[0] if cached else None)
        if status == 304 and cached is not None:
            body = json.loads(cached[1])
            return Page(body["items"], body["next"], cached[0], True)
        if status == 304:
            raise PrkbError(f"GitHub answered 304 for {key} without a cached copy")
        if not isinstance(data, list):
            raise PrkbError(f"GitHub API: GET {url.split('?')[0]}: expected a list")
        return Page(data, _next_link(hdrs.get("link")), hdrs.get("etag"), False)

    def pages(
        self, url: str, params: dict[str, Any] | None = None, *, use_cache: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[str, Page]]:
        """(cache key, page) of every page, following ``Link: rel=next``."""
        params = {**(params or {}), "per_page": PER_PAGE}
        key = Requester.add_parameters_to_url(url, params)
        pg = self.page(url, params, use_cache=use_cache)
        n = 1
        yield key, pg
        while pg.next_url and (limit is None or n < limit):
            key = pg.next_url
            pg = self.page(pg.next_url, None, use_cache=use_cache)
            n += 1
            yield key, pg


def _describe(e: GithubException) -> str:
    msg = e.message if getattr(e, "message", None) else None
    if msg is None and isinstance(e.data, dict):
        msg = e.data.get("message")
    return f"{e.status} {msg or ''}".strip()


# --- the http_cache table ----------------------------------------------------------------------


def cache_update(url: str, page: Page) -> CachedPage | None:
    """What caching one page writes (None for a page without an ETag: nothing to cache)."""
    if not page.etag:
        return None
    body = json.dumps({"items": page.items, "next": page.next_url}, sort_keys=True)
    return CachedPage(url, page.etag, body)
