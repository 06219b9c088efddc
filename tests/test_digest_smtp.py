"""Sending the digest to a real SMTP server (aiosmtpd on 127.0.0.1, STARTTLS + AUTH with a
trustme certificate): once per recipient, failure injection and reruns, password secrecy."""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from digestkb import EN_TITLE, WEEK, ZH_TITLE, digest_kb
from smtpserver import PASSWORD, USER, free_port, make_ca, smtp_server

from prkb.cli import main

# heavy: a real SMTP server: not in the fast tier
pytestmark = pytest.mark.heavy

TEAM = ["ann@example.org", "bob@example.org", "cy@example.org"]
SITE = "https://kb.example.org"


def _env(monkeypatch: pytest.MonkeyPatch, port: int, cafile: str, password: str = PASSWORD) -> None:
    monkeypatch.setenv("PRKB_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("PRKB_SMTP_PORT", str(port))
    monkeypatch.setenv("PRKB_SMTP_USER", USER)
    monkeypatch.setenv("PRKB_SMTP_PASSWORD", password)
    monkeypatch.setenv("PRKB_SMTP_CAFILE", cafile)
    monkeypatch.setenv("PRKB_MAIL_FROM", "digest@kb.example.org")
    for var in ("PRKB_SMTP_SECURITY", "PRKB_MAIL_TO"):
        monkeypatch.delenv(var, raising=False)


def _send(db: Path, *extra: str, to: list[str] = TEAM) -> int:
    argv = ["--db", str(db), "-q", "digest", "--week", WEEK, "--site-url", SITE, "--send"]
    for addr in to:
        argv += ["--to", addr]
    return main([*argv, *extra])


def _ledger(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT week, recipient FROM digest_ledger").fetchall())


def test_each_recipient_gets_one_message_and_reruns_send_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    with smtp_server(tmp_path) as srv:
        _env(monkeypatch, srv.port, srv.cafile)
        assert _send(db) == 0
        assert Counter(srv.delivered_to()) == Counter(TEAM)
        assert _ledger(db) == [(WEEK, a) for a in TEAM]
        for rec in srv.messages:
            assert rec.authenticated and rec.tls
            msg = rec.message
            (rcpt,) = rec.rcpt_tos
            assert msg["To"] == rcpt and rec.mail_from == "digest@kb.example.org"
            assert str(msg["Subject"]) == f"{ZH_TITLE} / {EN_TITLE}"  # --lang both: both
            assert "=?utf-8?" in rec.data.decode("ascii").split("\r\n\r\n", 1)[0]
            assert msg["List-Id"] == "prkb digest <vllm-cudagraph.prkb.local>"
            assert msg["Message-ID"].endswith("@kb.example.org>") and msg["Date"]
            plain, html = msg.get_body(("plain",)), msg.get_body(("html",))
            assert plain is not None and html is not None
            text, page = plain.get_content(), html.get_content()
            assert "声明变更" in text and "Declaration changes" in text
            assert text.index("声明变更") < text.index("Declaration changes")
            assert f"{SITE}/zh/pr/101.html" in text
            assert f'href="{SITE}/en/pr/101.html"' in page and "<script" not in page
            assert "&lt;script&gt;" in page
        ids = {r.message["Message-ID"] for r in srv.messages}
        assert len(ids) == 3  # one message per recipient

        # A rerun sends nothing; a new recipient gets it, the others do not.
        assert _send(db) == 0
        assert _send(db, to=[*TEAM, "dee@example.org"]) == 0
        assert Counter(srv.delivered_to()) == Counter([*TEAM, "dee@example.org"])
        out = capsys.readouterr().out
        assert "sent 0, already sent 3" in out and "sent 1, already sent 3" in out

        # --force sends again, under new Message-IDs.
        assert _send(db, "--force", to=TEAM[:1]) == 0
        assert srv.delivered_to().count(TEAM[0]) == 2
        assert srv.messages[-1].message["Message-ID"] not in ids


def test_refused_recipient_is_completed_by_the_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    with smtp_server(tmp_path, refuse={"bob@example.org"}) as srv:
        _env(monkeypatch, srv.port, srv.cafile)
        assert _send(db) == 2
        err = capsys.readouterr().err
        assert "recipient bob@example.org refused: 550 5.1.1 mailbox unavailable" in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert Counter(srv.delivered_to()) == Counter(["ann@example.org", "cy@example.org"])
        assert [r for _, r in _ledger(db)] == ["ann@example.org", "cy@example.org"]

        srv.handler.refuse.clear()
        assert _send(db) == 0
        assert Counter(srv.delivered_to()) == Counter(TEAM)  # each exactly once
        assert len(_ledger(db)) == 3


def test_dropped_connection_after_first_recipient_is_completed_by_the_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    with smtp_server(tmp_path, drop_after=1) as srv:
        _env(monkeypatch, srv.port, srv.cafile)
        assert _send(db) == 2
        err = capsys.readouterr().err
        assert f"SMTP server 127.0.0.1:{srv.port} dropped the connection after 1 of 3" in err
        assert srv.delivered_to() == ["ann@example.org"]
        assert [r for _, r in _ledger(db)] == ["ann@example.org"]

        srv.handler.drop_after = None
        assert _send(db) == 0
        assert Counter(srv.delivered_to()) == Counter(TEAM)
        assert len(_ledger(db)) == 3


def test_server_down_then_up_delivers_everything_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    port = free_port()
    ca = make_ca(tmp_path)
    _env(monkeypatch, port, ca[1])
    assert _send(db) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prkb: error: SMTP server 127.0.0.1:{port} refused the connection"
    assert _ledger(db) == []
    with smtp_server(tmp_path, port=port, ca=ca) as srv:
        assert _send(db) == 0
        assert _send(db) == 0
        assert Counter(srv.delivered_to()) == Counter(TEAM)


def test_untrusted_certificate_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca = make_ca(tmp_path / "other")  # a CA the server's certificate does not come from
    with smtp_server(tmp_path) as srv:
        _env(monkeypatch, srv.port, other_ca[1])
        assert _send(db) == 2
        assert "TLS certificate is not trusted" in capsys.readouterr().err
        assert srv.messages == [] and srv.handler.auth_attempts == 0
    assert _ledger(db) == []


def test_password_appears_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    log_file = tmp_path / "prkb.log"
    handler = logging.FileHandler(log_file)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    eml = tmp_path / "out.eml"
    wrong = "Wr0ng-pa55word-xyz"
    try:
        with smtp_server(tmp_path, refuse={"cy@example.org"}) as srv:
            _env(monkeypatch, srv.port, srv.cafile)
            assert _send(db, "--json") == 2
            assert main(["--db", str(db), "digest", "--week", WEEK, "-o", str(eml)]) == 0
            # A failing AUTH: the error names the user, never the password.
            _env(monkeypatch, srv.port, srv.cafile, password=wrong)
            assert _send(db, "--force") == 2
            err = capsys.readouterr().err
            assert f"refused the login of {USER}: 535" in err
            payloads = b"".join(m.data for m in srv.messages)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    out_err = capsys.readouterr()
    files = [db, Path(f"{db}-wal"), eml, log_file]
    blobs = [p.read_bytes() for p in files if p.exists()] + [payloads]
    texts = [err, out_err.out, out_err.err]
    for secret in (PASSWORD, wrong):
        assert all(secret not in t for t in texts)
        assert all(secret.encode() not in b for b in blobs)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_implicit_tls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = digest_kb(tmp_path)
    with smtp_server(tmp_path, implicit_tls=True) as srv:
        _env(monkeypatch, srv.port, srv.cafile)
        # A STARTTLS client waits for a greeting the TLS server never sends in clear.
        assert _send(db, "--smtp-security", "starttls", "--smtp-timeout", "1") == 2
        assert "did not answer within 1s" in capsys.readouterr().err
        assert srv.messages == []
        assert _send(db, "--smtp-security", "ssl") == 0
        assert Counter(srv.delivered_to()) == Counter(TEAM)
        assert all(m.tls and m.authenticated for m in srv.messages)


def test_a_read_only_knowledge_base_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exactly once needs the ledger: on a knowledge base that cannot be written, no recipient
    gets a message (one used to get one, unrecorded, and again on every rerun)."""
    import os

    db = digest_kb(tmp_path)
    real = os.access
    # the folder reads as not writable (root can write anywhere: os.access is what prkb asks)
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if (
        mode & os.W_OK and str(p) in (str(db), str(db.parent))) else real(p, mode, *a, **k))
    with smtp_server(tmp_path) as srv:
        _env(monkeypatch, srv.port, srv.cafile)
        assert _send(db) == 2
        err = capsys.readouterr().err
        assert "nothing sent: the ledger cannot be written" in err and "read-only" in err
        assert srv.delivered_to() == []
    monkeypatch.setattr(os, "access", real)
    assert _ledger(db) == []
