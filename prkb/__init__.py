"""prkb: a PR-analysis knowledge base and report generator.

What a Python user may import from ``prkb`` (everything else is internal and may change)::

    import prkb

    profile = prkb.load_profile()                    # data/profiles/vllm-cudagraph.toml
    with prkb.Store("kb.sqlite") as store:           # one SQLite file, created on first use
        prkb.import_jsonl(store, path, profile, relations="changed")
        print(prkb.render_report(store, 47144, lang="en", fmt="md", profile=profile))

The stages, in pipeline order:

- **store**: :class:`Store` (the knowledge base), :func:`load_profile` / :class:`Profile`;
- **collect**: :func:`collect_git` (a clone), :func:`collect_github` (the API; starting from
  the PRs git found when the knowledge base holds git records), :func:`import_jsonl` /
  :func:`export_jsonl` (snapshots), :func:`ingest` (one record) and :func:`ingest_all` (what
  a collector yields: :class:`Collected` items); :class:`Collector`, the protocol of a
  ``prkb collect`` source that another package adds through the entry-point group
  ``prkb.collectors``;
- **analyze**: :func:`audit_revision` (builders and findings at a revision),
  :func:`run_check` (a pull request: base against head);
- **graph**: :func:`build_relations`, :func:`load_graph` (networkx);
- **render**: :func:`render_report` (one PR, zh or en, Markdown, text or HTML);
- **publish**: :func:`build_site`, :func:`render_digest`, :func:`matrix_at`, :func:`drift_at`;
- :func:`data_dir`: the bundled data (profiles, snapshots).

Errors a user can act on are :class:`PrkbError` (and its :class:`InputError`,
:class:`NotFound`). Names are imported on first use, so ``import prkb`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_API: dict[str, str] = {
    "Store": "prkb.store",
    "Profile": "prkb.profile",
    "load_profile": "prkb.profile",
    "PrkbError": "prkb.errors",
    "InputError": "prkb.errors",
    "NotFound": "prkb.errors",
    "ingest": "prkb.ingest",
    "ingest_all": "prkb.ingest",
    "Collected": "prkb.ingest",
    "Collector": "prkb.collect.plugin",
    "collect_git": "prkb.collect.git",
    "collect_github": "prkb.collect.github_assisted",
    "import_jsonl": "prkb.collect.snapshot",
    "export_jsonl": "prkb.collect.snapshot",
    "audit_revision": "prkb.analyze.audit",
    "run_check": "prkb.check",
    "build_relations": "prkb.graph",
    "load_graph": "prkb.graph",
    "render_report": "prkb.render.report",
    "build_site": "prkb.site.build",
    "render_digest": "prkb.publish.digest",
    "matrix_at": "prkb.publish.matrix",
    "drift_at": "prkb.publish.docsdrift",
    "data_dir": "prkb.paths",
}

__all__ = [
    "Collected",
    "Collector",
    "InputError",
    "NotFound",
    "PrkbError",
    "Profile",
    "Store",
    "__version__",
    "audit_revision",
    "build_relations",
    "build_site",
    "collect_git",
    "collect_github",
    "data_dir",
    "drift_at",
    "export_jsonl",
    "import_jsonl",
    "ingest",
    "ingest_all",
    "load_graph",
    "load_profile",
    "matrix_at",
    "render_digest",
    "render_report",
    "run_check",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time names load on first use
    from .analyze.audit import audit_revision
    from .check import run_check
    from .collect.git import collect_git
    from .collect.github_assisted import collect_github
    from .collect.plugin import Collector
    from .collect.snapshot import export_jsonl, import_jsonl
    from .errors import InputError, NotFound, PrkbError
    from .graph import build_relations, load_graph
    from .ingest import Collected, ingest, ingest_all
    from .paths import data_dir
    from .profile import Profile, load_profile
    from .publish.digest import render_digest
    from .publish.docsdrift import drift_at
    from .publish.matrix import matrix_at
    from .render.report import render_report
    from .site.build import build_site
    from .store import Store


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'prkb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
