"""Errors that the CLI shows as one clear line (no traceback)."""


class PrkbError(Exception):
    """A problem the user can act on. ``str(err)`` is the whole message."""

    exit_code = 2


class NotFound(PrkbError):
    exit_code = 1


class InputError(PrkbError):
    """Bad input: a record, file or option that cannot be used."""

    exit_code = 2


class Damaged(PrkbError):
    """A knowledge base file whose pages SQLite cannot read; nothing is written to it."""

    exit_code = 1


class ReadOnly(PrkbError):
    """A write asked of a knowledge base opened read-only (its folder is not writable)."""

    exit_code = 2
