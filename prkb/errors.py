"""Errors that the CLI shows as one clear line (no traceback)."""


class PrkbError(Exception):
    """A problem the user can act on. ``str(err)`` is the whole message."""

    exit_code = 2


class NotFound(PrkbError):
    exit_code = 1


class InputError(PrkbError):
    """Bad input: a record, file or option that cannot be used."""

    exit_code = 2
