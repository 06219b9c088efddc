"""What the ``prkb`` command leaves to the end of its process instead of freeing it.

A site build returns having made hundreds of thousands of objects (the gathered data, the
plan, the manifest): freeing them one by one took 0.09 s at 10,000 PRs, on one core, after
the site was complete (and each memory page they sit on was first copied, as the build's
forked workers had shared it). Called as a library, :func:`leave` does nothing and they are
freed as usual. The ``prkb`` command ends right after its work (``prkb.cli.run``): it calls
:func:`leave_to_exit` first, and what is left is then held by a list that holds itself, which
the command's last ``gc.freeze()`` puts out of the collector's reach: neither the
interpreter's teardown nor a last collection frees it, and the operating system takes the
process's memory back whole. Only plain data is left so: a resource (a file, a database
connection, a child process) is closed by its owner as before.
"""

from __future__ import annotations

_left: list[object] = []
_on = False


def leave_to_exit() -> None:
    """From now on, keep what :func:`leave` is given until the process ends."""
    global _on
    _on = True
    if not _left:
        _left.append(_left)  # a cycle: no count ever drops to zero (see the module)


def leave(obj: object) -> None:
    """``obj`` is freed with the process after :func:`leave_to_exit`; else nothing is done
    (it is freed when its last reference goes, as usual)."""
    if _on:
        _left.append(obj)
