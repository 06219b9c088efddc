"""Secrets (GitHub token, SMTP password) are registered here and scrubbed from any text."""

from __future__ import annotations

import logging
import re

_SECRETS: set[str] = set()
_TOKEN_PATTERNS = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|(?i:authorization:\s*\S+\s+)\S+)"
)


def register_secret(value: str | None) -> None:
    if value and len(value) >= 4:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for s in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(s, "***")
    return _TOKEN_PATTERNS.sub("***", text)


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs registered secrets from every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        record.msg = redact(msg)
        record.args = None
        return True


def install_log_filter() -> None:
    flt = RedactingFilter()
    root = logging.getLogger()
    root.addFilter(flt)
    for h in root.handlers:
        h.addFilter(flt)
    for name in ("github", "urllib3", "smtplib"):
        logging.getLogger(name).addFilter(flt)
