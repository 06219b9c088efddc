"""digest: the weekly digest, previewed, written as .eml, or mailed exactly once."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import InputError, PrkbError
from ..progress import safe_term, warn
from . import open_store, profile_of

_DESCRIPTION = """\
Builds the digest of one period from the knowledge base: PRs opened, merged and closed,
effective level changes (each builder whose level in force changed, read from the code at
each PR's parent and commit, builders in files the PR did not touch included), declaration
changes (one sentence each, as the PR reports say them), new audit findings, risk
highlights (core path, missing tests) and new relations with their evidence. Without --send
or -o it prints the plain-text digest.

--send mails one multipart/alternative message (plain text + HTML with inlined CSS, UTF-8)
to each --to address, one SMTP transaction per recipient. A ledger in the knowledge base
records (week, recipient, message-id) after the server accepted each recipient, so a
rerun sends only to those not recorded yet (use --force to send again). Schedule
'prkb digest --send --to ...' weekly: it picks the last complete ISO week (UTC).

SMTP settings come from flags or the environment: PRKB_SMTP_HOST, PRKB_SMTP_PORT,
PRKB_SMTP_USER, PRKB_SMTP_SECURITY, PRKB_SMTP_CAFILE, PRKB_MAIL_FROM, PRKB_MAIL_TO
(comma-separated recipients). The password is read only from PRKB_SMTP_PASSWORD."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "digest",
        parents=[common],
        help="the weekly digest: preview, write an .eml, or mail it exactly once",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    when = p.add_argument_group("period (default: the last complete ISO week, UTC)")
    when.add_argument("--week", metavar="YYYY-Www", help="an ISO week, e.g. 2026-W21")
    when.add_argument("--since", metavar="DATE", help="first day (with --until), e.g. 2026-05-18")
    when.add_argument("--until", metavar="DATE", help="last day, inclusive")
    out = p.add_argument_group("content and output")
    out.add_argument(
        "--lang", choices=("zh", "en", "both"), default="both",
        help="language of the digest; both = Chinese then English (default: both)",
    )
    out.add_argument(
        "--site-url", metavar="URL",
        help="link PRs to <URL>/<lang>/pr/<N>.html and the digest to its site page",
    )
    out.add_argument(
        "--format", choices=("text", "html"), default="text",
        help="what the preview prints on stdout (default: text)",
    )
    out.add_argument(
        "-o", "--output", metavar="FILE.eml", type=Path,
        help="write the email to this file instead of sending it",
    )
    out.add_argument(
        "--send-empty", action="store_true",
        help="send (or write) even when nothing changed in the period",
    )
    out.add_argument("--json", action="store_true", help="print what was done as JSON")
    mail = p.add_argument_group("sending")
    mail.add_argument("--send", action="store_true", help="mail the digest to every --to")
    mail.add_argument(
        "--to", metavar="ADDR", action="append", default=[],
        help="a recipient (repeat, or separate with commas; default: $PRKB_MAIL_TO)",
    )
    mail.add_argument(
        "--force", action="store_true",
        help="send again to recipients the ledger says already got this period's digest",
    )
    mail.add_argument("--from", dest="from_addr", metavar="ADDR", help="sender ($PRKB_MAIL_FROM)")
    mail.add_argument("--smtp-host", metavar="HOST", help="SMTP server ($PRKB_SMTP_HOST)")
    mail.add_argument("--smtp-port", metavar="PORT", help="default 587, 465 for ssl, 25 for none")
    mail.add_argument("--smtp-user", metavar="USER", help="login ($PRKB_SMTP_USER)")
    mail.add_argument(
        "--smtp-security", choices=("starttls", "ssl", "none"),
        help="starttls (default), ssl (implicit TLS) or none",
    )
    mail.add_argument(
        "--smtp-cafile", metavar="PEM",
        help="trust this CA for the server's certificate ($PRKB_SMTP_CAFILE)",
    )
    mail.add_argument(
        "--smtp-timeout", metavar="SECONDS", type=float, default=30.0,
        help="network timeout (default: 30)",
    )
    p.set_defaults(func=cmd_digest)


def _recipients(args: argparse.Namespace) -> list[str]:
    raw = list(args.to) or [os.environ.get("PRKB_MAIL_TO", "")]
    return [a.strip() for item in raw for a in item.split(",") if a.strip()]


def cmd_digest(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..publish import digest as dgmod
    from ..publish import mail

    if args.send and args.output:
        raise InputError("give either --send or -o FILE.eml, not both")
    if args.force and not args.send:
        raise InputError("--force only applies with --send")
    period = dgmod.period_for(args.week, args.since, args.until)
    langs = dgmod.check_lang(args.lang)
    profile = profile_of(args)
    recipients = _recipients(args)
    settings = None
    if args.send:
        if not recipients:
            raise InputError("--send needs at least one --to address (or $PRKB_MAIL_TO)")
        recipients = [mail.check_address(r) for r in recipients]
        settings = mail.smtp_settings(
            host=args.smtp_host, port=args.smtp_port, user=args.smtp_user,
            security=args.smtp_security, from_addr=args.from_addr, cafile=args.smtp_cafile,
        )
        settings = replace(settings, timeout=args.smtp_timeout)

    with open_store(args) as store:
        dg = dgmod.gather(store, period, profile)
        summary: dict[str, Any] = {"week": period.key, "empty": dg.empty, **dg.counts()}
        if not args.send and not args.output:
            fmt = "html" if args.format == "html" else "text"
            body = dgmod.render(dg, args.lang, fmt, args.site_url)
            if args.json:
                print(json.dumps({**summary, fmt: body}, ensure_ascii=False, indent=1))
            else:
                sys.stdout.write(safe_term(body))
            return 0
        if dg.empty and not args.send_empty:
            summary["sent"] = []
            _say(args, summary, f"{period.key}: nothing changed; no email "
                 f"{'sent' if args.send else 'written'} (--send-empty to override)")
            return 0
        text = dgmod.render(dg, args.lang, "text", args.site_url)
        html = dgmod.render(dg, args.lang, "html", args.site_url)
        # the subject in every language of the message (zh first for both)
        subject = " / ".join(dgmod.digest_title(period, lg, profile) for lg in langs)
        list_header = mail.list_id(profile.name)
        language = ", ".join("zh-CN" if lg == "zh" else "en" for lg in langs)

        def make(recipient: str | None, forced: bool, sender: str) -> Any:
            mid = mail.message_id(
                period.key, recipient or "review", sender,
                resend=int(time.time()) if forced else None,
            )
            return mail.build_message(
                subject=subject, text=text, html=html, sender=sender, recipient=recipient,
                msg_id=mid, list_header=list_header, language=language,
            )

        if args.output:
            sender = args.from_addr or os.environ.get("PRKB_MAIL_FROM") or "prkb@prkb.local"
            sender = mail.check_address(sender, "--from")
            first = recipients[0] if recipients else None
            if first:
                first = mail.check_address(first)
            mail.write_eml(make(first, False, sender), args.output)
            summary["output"] = str(args.output)
            _say(args, summary, f"{period.key}: wrote {args.output}")
            return 0

        assert settings is not None
        from_addr = settings.from_addr
        report = mail.send_digest(
            store, period.key, recipients,
            lambda rcpt, forced: make(rcpt, forced, from_addr),
            settings, force=args.force,
            on_sent=None if args.quiet else lambda r: print(f"sent to {r}", file=sys.stderr),
        )
    summary.update(report.to_json())
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=1))
    else:
        print(
            f"{period.key}: sent {len(report.sent)}, already sent {len(report.already)}, "
            f"refused {len(report.refused)}, left for a rerun {len(report.not_tried)}"
        )
    problems = report.problems()
    if not problems:
        return 0
    for line in problems[:-1]:
        warn(line)
    raise PrkbError(problems[-1])


def _say(args: argparse.Namespace, summary: dict[str, Any], line: str) -> None:
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=1))
    else:
        print(line)
