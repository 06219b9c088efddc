"""The digest as an email: MIME message, SMTP delivery, and the exactly-once ledger.

Each recipient gets its own SMTP transaction (MAIL, RCPT, DATA) and its own message. A row
``(week, recipient, message_id, sent_at)`` goes into ``digest_ledger`` only after the server
answered 250 to that recipient's DATA, in its own transaction; a rerun skips every recipient
already in the ledger, so a run cut short (a refused recipient, a dropped connection, a
server that is down) is completed by the next run without sending anything twice.

The one window no client can close: the server accepts DATA and the connection drops before
its 250 reaches us. That recipient is not recorded and gets the message again on the rerun
(at least once, never lost).

The SMTP password is read only from ``PRKB_SMTP_PASSWORD``, registered as a secret, and never
put into messages, files, the KB or error text.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
import re
import smtplib
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, parseaddr
from pathlib import Path
from urllib.parse import quote

from ..dates import utc_stamp
from ..errors import InputError, PrkbError
from ..secrets import redact, register_secret
from ..store import Store

SECURITY = ("starttls", "ssl", "none")
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}
PASSWORD_ENV = "PRKB_SMTP_PASSWORD"


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    from_addr: str
    security: str = "starttls"
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    cafile: str | None = None
    timeout: float = 30.0

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def smtp_settings(
    *,
    host: str | None,
    port: int | str | None,
    user: str | None,
    security: str | None,
    from_addr: str | None,
    cafile: str | None = None,
    env: Mapping[str, str] | None = None,
) -> SmtpSettings:
    """Flags beat ``PRKB_SMTP_*``/``PRKB_MAIL_FROM``; the password comes only from the env."""
    env = os.environ if env is None else env
    host = host or env.get("PRKB_SMTP_HOST")
    if not host:
        raise InputError("no SMTP server: give --smtp-host or set PRKB_SMTP_HOST")
    security = (security or env.get("PRKB_SMTP_SECURITY") or "starttls").lower()
    if security not in SECURITY:
        raise InputError(f"--smtp-security must be starttls, ssl or none, got {security!r:.20}")
    raw_port = port if port not in (None, "") else env.get("PRKB_SMTP_PORT")
    try:
        port_n = int(raw_port) if raw_port not in (None, "") else DEFAULT_PORTS[security]
    except (TypeError, ValueError):
        raise InputError(f"SMTP port must be a number, got {raw_port!r:.20}") from None
    if not 0 < port_n < 65536:
        raise InputError(f"SMTP port must be 1-65535, got {port_n}")
    sender = from_addr or env.get("PRKB_MAIL_FROM")
    if not sender:
        raise InputError("no sender address: give --from or set PRKB_MAIL_FROM")
    sender = check_address(sender, "--from")
    user = user or env.get("PRKB_SMTP_USER") or None
    password = env.get(PASSWORD_ENV) or None
    register_secret(password)
    if user and not password:
        raise InputError(f"--smtp-user {user} is set but {PASSWORD_ENV} is empty")
    if password and not user:
        raise InputError(f"{PASSWORD_ENV} is set but no --smtp-user / PRKB_SMTP_USER")
    if password and security == "none" and not _is_loopback(host):
        raise InputError(
            f"refusing to send the SMTP password unencrypted to {host}: "
            "use --smtp-security starttls or ssl"
        )
    cafile = cafile or env.get("PRKB_SMTP_CAFILE") or None
    if cafile and not Path(cafile).is_file():
        raise InputError(f"--smtp-cafile {cafile} is not a file")
    return SmtpSettings(host, port_n, sender, security, user, password, cafile)


_BAD_ADDR = re.compile(r"[\s<>,;\"\\\x00-\x1f\x7f]")


def check_address(addr: str, what: str = "--to") -> str:
    """One bare address (``name@domain``), domain lower-cased; raises InputError."""
    addr = addr.strip()
    local, at, domain = addr.rpartition("@")
    if not at or not local or not domain or _BAD_ADDR.search(addr) or "." not in domain:
        raise InputError(f"{what} {addr!r:.80} is not an email address like name@example.org")
    try:
        Address(addr_spec=f"{local}@{domain.lower()}")
    except (ValueError, IndexError) as e:
        raise InputError(f"{what} {addr!r:.80} is not a valid email address ({e})") from None
    return f"{local}@{domain.lower()}"


# --- the message ----------------------------------------------------------------------------


def list_id(profile_name: str) -> str:
    """``prkb digest <vllm-cudagraph.prkb.local>``: stable per profile, for mail filters."""
    label = re.sub(r"[^a-z0-9-]+", "-", profile_name.lower()).strip("-") or "prkb"
    return f"prkb digest <{label}.prkb.local>"


def message_id(week: str, recipient: str, sender: str, *, resend: int | None = None) -> str:
    """Deterministic per (week, recipient), under the sender's domain; ``resend`` (a
    timestamp) makes a forced resend a new message."""
    domain = sender.rpartition("@")[2] or "prkb.local"
    digest = hashlib.sha256(recipient.lower().encode("utf-8")).hexdigest()[:16]
    week_part = re.sub(r"[^A-Za-z0-9-]+", "_", week)
    extra = f".r{resend}" if resend is not None else ""
    return f"<prkb-digest.{week_part}.{digest}{extra}@{domain}>"


def build_message(
    *,
    subject: str,
    text: str,
    html: str,
    sender: str,
    recipient: str | None,
    msg_id: str,
    list_header: str,
    language: str,
    when: datetime | None = None,
    unsubscribe: str | None = None,
) -> EmailMessage:
    """multipart/alternative: text/plain then text/html, both UTF-8. ``List-Unsubscribe``
    (RFC 2369) is ``unsubscribe`` (an https or mailto URL), else a mail to the sender asking
    to leave the list."""
    msg = EmailMessage(policy=SMTP)
    msg["Subject"] = " ".join(subject.split())
    msg["From"] = sender
    if recipient:
        msg["To"] = recipient
    msg["Date"] = format_datetime((when or datetime.now(UTC)).astimezone(UTC))
    msg["Message-ID"] = msg_id
    msg["List-Id"] = list_header
    if unsubscribe is None:
        address = parseaddr(sender)[1] or sender
        unsubscribe = f"mailto:{address}?subject={quote('unsubscribe ' + list_header)}"
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(text, subtype="plain", charset="utf-8")
    msg.add_alternative(html, subtype="html", charset="utf-8")
    msg["Content-Language"] = language  # after set_content, which drops Content-* headers
    return msg


def write_eml(msg: EmailMessage, path: Path) -> None:
    """The message as an .eml file, written atomically (a temp file renamed over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(msg.as_bytes())
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except OSError as e:
        with contextlib.suppress(OSError):  # on a read-only folder, unlink fails too
            tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {e.strerror}") from None


# --- the ledger -----------------------------------------------------------------------------


def record_sent(store: Store, week: str, recipient: str, msg_id: str) -> None:
    """One accepted delivery, in its own transaction, stamped now (UTC)."""
    store.record_sent(week, recipient, msg_id, utc_stamp(datetime.now(UTC)))


# --- SMTP -----------------------------------------------------------------------------------


def _reply(code: int, resp: bytes | str) -> str:
    text = resp.decode("utf-8", "replace") if isinstance(resp, bytes) else str(resp)
    return redact(f"{code} {' '.join(text.split())}".strip())


def _tls_context(settings: SmtpSettings) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=settings.cafile)


def connect(settings: SmtpSettings) -> smtplib.SMTP:
    """An open, secured and logged-in connection; every failure is one PrkbError line."""
    where = settings.where
    smtp: smtplib.SMTP | None = None
    try:
        if settings.security == "ssl":
            smtp = smtplib.SMTP_SSL(
                settings.host, settings.port, timeout=settings.timeout,
                context=_tls_context(settings),
            )
        else:
            smtp = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
        smtp.ehlo()
        if settings.security == "starttls":
            if not smtp.has_extn("starttls"):
                raise PrkbError(
                    f"SMTP server {where} does not offer STARTTLS "
                    "(use --smtp-security ssl, or none on a trusted network)"
                )
            smtp.starttls(context=_tls_context(settings))
            smtp.ehlo()
        if settings.user and settings.password:
            smtp.login(settings.user, settings.password)
        return smtp
    except PrkbError:
        _close(smtp)
        raise
    except ConnectionRefusedError:
        _close(smtp)
        raise PrkbError(f"SMTP server {where} refused the connection") from None
    except ssl.SSLCertVerificationError as e:
        _close(smtp)
        raise PrkbError(
            f"SMTP server {where}: its TLS certificate is not trusted ({e.verify_message}); "
            "give its CA with --smtp-cafile or PRKB_SMTP_CAFILE"
        ) from None
    except smtplib.SMTPAuthenticationError as e:
        _close(smtp)
        raise PrkbError(
            f"SMTP server {where} refused the login of {settings.user}: "
            f"{_reply(e.smtp_code, e.smtp_error)}"
        ) from None
    except smtplib.SMTPServerDisconnected as e:
        _close(smtp)
        if "timed out" in str(e):
            raise PrkbError(
                f"SMTP server {where} did not answer within {settings.timeout:g}s "
                "(if it speaks TLS from the first byte, use --smtp-security ssl)"
            ) from None
        raise PrkbError(f"SMTP server {where} closed the connection: {redact(str(e))}") from None
    except smtplib.SMTPResponseException as e:
        _close(smtp)
        raise PrkbError(f"SMTP server {where}: {_reply(e.smtp_code, e.smtp_error)}") from None
    except TimeoutError:
        _close(smtp)
        raise PrkbError(
            f"SMTP server {where} did not answer within {settings.timeout:g}s"
        ) from None
    except socket.gaierror:
        _close(smtp)
        raise PrkbError(f"SMTP server {settings.host} is not a known host name") from None
    except (smtplib.SMTPException, OSError) as e:
        _close(smtp)
        reason = redact(str(e)) or type(e).__name__
        raise PrkbError(f"SMTP server {where}: {reason}") from None


def _close(smtp: smtplib.SMTP | None) -> None:
    if smtp is None:
        return
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()


@dataclass
class SendReport:
    week: str
    sent: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    not_tried: list[str] = field(default_factory=list)
    error: str | None = None  # the connection failed or dropped: the rest waits for a rerun

    @property
    def complete(self) -> bool:
        return not self.refused and not self.not_tried and self.error is None

    def to_json(self) -> dict[str, object]:
        return {
            "week": self.week,
            "sent": self.sent,
            "already_sent": self.already,
            "refused": self.refused,
            "not_tried": self.not_tried,
            "error": self.error,
        }

    def problems(self) -> list[str]:
        out = [f"recipient {r} refused: {why}" for r, why in self.refused.items()]
        if self.error:
            out.append(self.error)
        return out


def send_digest(
    store: Store,
    week: str,
    recipients: Iterable[str],
    make_message: Callable[[str, bool], EmailMessage],
    settings: SmtpSettings,
    *,
    force: bool = False,
    on_sent: Callable[[str], None] | None = None,
) -> SendReport:
    """Send ``make_message(recipient, forced)`` to each recipient not yet in the ledger.

    Returns what happened; a refused recipient does not stop the others, a dropped
    connection stops the run (the report names who is left for the next run).
    """
    report = SendReport(week)
    done = set() if force else store.sent_recipients(week)
    pending: list[str] = []
    for rcpt in dict.fromkeys(check_address(r) for r in recipients):
        (report.already if rcpt.lower() in done else pending).append(rcpt)
    if not pending:
        return report
    try:  # the ledger must take each delivery: refuse before sending anything, else a rerun
        with store.transaction():  # would send again to those not recorded
            pass
    except PrkbError as e:
        report.error = f"nothing sent: the ledger cannot be written ({e})"
        report.not_tried = pending
        return report
    try:
        smtp = connect(settings)
    except PrkbError as e:
        report.error = str(e)
        report.not_tried = pending
        return report
    try:
        for i, rcpt in enumerate(pending):
            msg = make_message(rcpt, force)
            try:
                smtp.send_message(msg, from_addr=settings.from_addr, to_addrs=[rcpt])
            except smtplib.SMTPRecipientsRefused as e:
                code, resp = e.recipients.get(rcpt, (0, b"refused"))
                report.refused[rcpt] = _reply(code, resp)
                continue
            except smtplib.SMTPDataError as e:
                report.refused[rcpt] = _reply(e.smtp_code, e.smtp_error)
                continue
            except smtplib.SMTPSenderRefused as e:
                report.error = (
                    f"SMTP server {settings.where} refused the sender {settings.from_addr}: "
                    f"{_reply(e.smtp_code, e.smtp_error)}"
                )
                report.not_tried = pending[i:]
                break
            except (smtplib.SMTPServerDisconnected, OSError) as e:
                del e
                report.error = (
                    f"SMTP server {settings.where} dropped the connection after "
                    f"{len(report.sent)} of {len(pending)} recipients; rerun to send the rest"
                )
                report.not_tried = pending[i:]
                break
            except smtplib.SMTPException as e:
                report.error = f"SMTP server {settings.where}: {redact(str(e))}"
                report.not_tried = pending[i:]
                break
            record_sent(store, week, rcpt, str(msg["Message-ID"]))
            report.sent.append(rcpt)
            if on_sent:
                on_sent(rcpt)
    finally:
        _close(smtp)
    return report
