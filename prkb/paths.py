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
