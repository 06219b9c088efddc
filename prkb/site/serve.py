"""``prkb site serve``: a local preview of the built site, on loopback only."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Any

from ..errors import InputError

HOST = "127.0.0.1"


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right types for Pagefind, the 404 page, and no directory lists."""

    extensions_map = {  # noqa: RUF012 (the base class declares it as a class attribute)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".xml": "application/xml",
        ".svg": "image/svg+xml",
    }

    def __init__(self, *args: Any, directory: str, **kwargs: Any) -> None:
        super().__init__(*args, directory=directory, **kwargs)

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def list_directory(self, path: Any) -> None:
        self.send_error(404)
        return None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(str(self.directory)) / "404.html"
        if code == 404 and page.is_file():
            body = page.read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: Any) -> None:
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


def make_server(site: str | Path, port: int = 8000, *, verbose: bool = False) -> Any:
    """A threaded HTTP server for ``site`` on 127.0.0.1 (port 0 picks a free one)."""
    root = Path(site)
    if not (root / "index.html").is_file():
        raise InputError(f"no site in {root}: run 'prkb site build -o {root}' first")
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be between 0 and 65535, got {port}")
    handler = functools.partial(SiteHandler, directory=str(root.resolve()))
    try:
        server = http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as e:
        raise InputError(f"cannot listen on {HOST}:{port}: {e.strerror}") from None
    server.daemon_threads = True
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


def serve_in_thread(site: str | Path, port: int = 0) -> tuple[Any, str]:
    """Start a server in a daemon thread; returns it and its base URL (for tests)."""
    server = make_server(site, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{HOST}:{server.server_address[1]}/"
