"""Where prkb finds its bundled resources (data/ and templates/ at the project root)."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The folder that holds ``prkb/``, ``data/`` and ``templates/``."""
    env = os.environ.get("PRKB_HOME")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The bundled data: profiles, glossary, relation rules, snapshots."""
    return project_root() / "data"


def templates_dir() -> Path:
    """The Jinja2 templates and Babel catalogs."""
    return project_root() / "templates"


def default_db_path(explicit: str | None = None) -> Path:
    """``--db`` beats ``PRKB_DB`` beats ``./prkb.sqlite``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PRKB_DB")
    if env:
        return Path(env)
    return Path("prkb.sqlite")


def cache_dir() -> Path | None:
    """prkb's per-user cache folder (``$XDG_CACHE_HOME/prkb``, else ``~/.cache/prkb``), not
    made here; None when there is no home folder to put it in. What is kept there is only ever
    a shortcut: prkb works the same, more slowly, without it."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "prkb"
    try:
        return Path.home() / ".cache" / "prkb"
    except RuntimeError:  # no home folder (no HOME, no password entry)
        return None
