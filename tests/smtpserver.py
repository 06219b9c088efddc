"""A real SMTP server for tests: aiosmtpd on 127.0.0.1, STARTTLS with a trustme certificate
made in the test, AUTH (PLAIN/LOGIN) required, and failure injection.

    with smtp_server(tmp_path, refuse={"bob@example.org"}) as srv:
        ... send to 127.0.0.1:srv.port trusting srv.cafile ...
        srv.messages  # what arrived, one entry per accepted DATA

Failure injection (changeable while the server runs):
- ``srv.handler.refuse``: addresses answered ``550`` at RCPT.
- ``srv.handler.drop_after``: after this many accepted messages the server drops the
  connection at the next RCPT (no reply).
- ``srv.handler.fail_data``: addresses whose DATA is answered ``554``.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

USER = "digest-bot"
PASSWORD = "s3cret-Pa55word-for-tests"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes
    authenticated: bool
    tls: bool

    @property
    def message(self) -> Message:
        return message_from_bytes(self.data, policy=default_policy)


@dataclass
class Handler:
    refuse: set[str] = field(default_factory=set)
    fail_data: set[str] = field(default_factory=set)
    drop_after: int | None = None
    messages: list[Received] = field(default_factory=list)
    rcpt_attempts: list[str] = field(default_factory=list)
    auth_attempts: int = 0

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        self.rcpt_attempts.append(address)
        if self.drop_after is not None and len(self.messages) >= self.drop_after:
            server.transport.abort()
            return "421 4.3.2 connection dropped by the test"
        if address.lower() in {a.lower() for a in self.refuse}:
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if any(r.lower() in {a.lower() for a in self.fail_data} for r in envelope.rcpt_tos):
            return "554 5.6.0 message rejected by the test"
        self.messages.append(
            Received(
                mail_from=envelope.mail_from,
                rcpt_tos=list(envelope.rcpt_tos),
                data=envelope.original_content or envelope.content,
                authenticated=bool(session.authenticated),
                tls=server.transport.get_extra_info("ssl_object") is not None,
            )
        )
        return "250 2.0.0 accepted"


@dataclass
class SmtpTestServer:
    host: str
    port: int
    cafile: str
    handler: Handler
    user: str
    password: str

    @property
    def messages(self) -> list[Received]:
        return self.handler.messages

    def delivered_to(self) -> list[str]:
        return [r for m in self.handler.messages for r in m.rcpt_tos]


def make_ca(tmp_path: Path) -> tuple[trustme.CA, str]:
    ca = trustme.CA()
    cafile = tmp_path / "smtp-ca.pem"
    ca.cert_pem.write_to_path(str(cafile))
    return ca, str(cafile)


@contextmanager
def smtp_server(
    tmp_path: Path,
    *,
    user: str = USER,
    password: str = PASSWORD,
    refuse: set[str] | None = None,
    drop_after: int | None = None,
    port: int | None = None,
    ca: tuple[trustme.CA, str] | None = None,
    implicit_tls: bool = False,
) -> Iterator[SmtpTestServer]:
    """The server, running in a thread until the ``with`` block ends; STARTTLS required, or
    TLS from the first byte with ``implicit_tls`` (port 465 style)."""
    ca_obj, cafile = ca or make_ca(tmp_path)
    cert = ca_obj.issue_cert("127.0.0.1", "localhost")
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(tls)
    handler = Handler(refuse=set(refuse or ()), drop_after=drop_after)

    def authenticator(
        server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
    ) -> AuthResult:
        handler.auth_attempts += 1
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user.encode()
            and auth_data.password == password.encode()
        )
        return AuthResult(success=ok, handled=False)

    port = port or free_port()
    tls_kw: dict[str, Any] = (
        {"ssl_context": tls} if implicit_tls else {"tls_context": tls, "require_starttls": True}
    )
    controller = Controller(
        handler,
        hostname="127.0.0.1",
        port=port,
        authenticator=authenticator,
        auth_required=True,
        # aiosmtpd only counts STARTTLS as TLS for AUTH; with implicit TLS every byte is
        # encrypted already.
        auth_require_tls=not implicit_tls,
        **tls_kw,
    )
    controller.start()
    try:
        yield SmtpTestServer("127.0.0.1", port, cafile, handler, user, password)
    finally:
        controller.stop()
