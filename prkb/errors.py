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


def network_reason(err: BaseException) -> str:
    """Why a connection failed, in a few words ("connection refused", "timed out", "name or
    service not known"): the innermost operating-system error that the HTTP library's
    wrappers carry (requests' ConnectionError around urllib3's MaxRetryError around a
    NewConnectionError around the socket's error), else the first line of the error itself,
    cut to 160 characters (a wrapper's message repeats the URL and the retry count)."""
    seen: set[int] = set()
    todo: list[object] = [err]
    found: OSError | None = None
    while todo:
        e = todo.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and (e.strerror or isinstance(e, TimeoutError)):
            found = e  # the deepest one wins: it is visited last
        todo += [e.__context__, e.__cause__, getattr(e, "reason", None),
                 *(a for a in e.args if isinstance(a, BaseException))]
    if found is not None:
        if isinstance(found, TimeoutError) and not found.strerror:
            return "timed out"
        return str(found.strerror).strip().rstrip(".").lower()
    first = (str(err).splitlines() or [type(err).__name__])[0]
    return first if len(first) <= 160 else first[:159] + "…"
