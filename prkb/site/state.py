"""What one site build leaves for the next: the manifest, the links file, the dirty set.

``.prkb-manifest.json`` (small, read at every build) keeps per page the hash of its inputs, a
short hash of its internal links and, for a page in the search index of a site that has one, a
short hash of what the index reads of it (:func:`prkb.site.search.searchable_hash`; "" in a
site built without search); per PR the hashes of
its own data and of its page's inputs; per builder (its slug: file and class) a hash of its
current reading; and
the knowledge base's change-journal cursor (:meth:`prkb.store.Store.change_cursor`) at the time
of the build.
``.prkb-search.json`` keeps, per search shard, a hash of its pages (their paths and hashes).
``.prkb-links.json`` keeps every page's internal links; it is read only when pages were
removed (kept pages may link to them) and rewritten only when a page's links changed.
``.prkb-model.json`` keeps what a partial read of the next build needs to know of the whole
site (:attr:`prkb.site.plan.Plan.model`: every PR's place, the months, weeks and builders
with their PRs, the counts...); read only by the one-PR rebuild (:mod:`prkb.site.partial`),
named by an id the manifest keeps, and linked unchanged into a build that patched.

With the cursor, the next build asks the knowledge base what changed
(:meth:`~prkb.store.Store.changes_since`) and works out which PRs' pages can have changed
(:func:`unchanged_hashes`); for every other PR it takes the hashes from here instead of
hashing the PR's data again. Anything the journal cannot vouch for (another knowledge base, a
restored file, a different salt) means every PR is hashed again, as in a first build.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .gather import SiteData

MANIFEST = ".prkb-manifest.json"
LINKS = ".prkb-links.json"
SEARCH = ".prkb-search.json"  # search shard -> hash of its pages (prkb.site.search)
MODEL = ".prkb-model.json"  # the whole site, for a partial read (prkb.site.partial)
# Files a fresh output folder may already hold (the repository's own site/README.md): the
# build accepts such a folder and carries them into every new tree, so they are never lost.
PLACEHOLDERS = frozenset({"README.md", ".gitkeep"})
VERSION = 3


@dataclass
class State:
    """The previous build as the manifest describes it (empty for a first build)."""

    salt: str | None = None
    kb: list[Any] | None = None  # change-journal cursor [seq, nonce]
    # path -> [hash of its inputs, links hash, searchable hash ("": not in the search index)]
    pages: dict[str, list[str]] = field(default_factory=dict)
    prs: dict[str, list[str]] = field(default_factory=dict)  # PR id -> [own data, page] hashes
    currents: dict[str, str] = field(default_factory=dict)  # builder slug -> its reading's hash
    search: bool = False
    shards: dict[str, str] = field(default_factory=dict)  # search shard -> hash of its pages
    model: str = ""  # the id of the model file written with this manifest ("": none)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "salt": self.salt, "kb": self.kb, "search": self.search,
                "currents": self.currents, "prs": self.prs, "pages": self.pages,
                "model": self.model}


def load(out: Path) -> State:
    """The manifest of the site in ``out``; refuses a non-empty folder a build did not write."""
    if not out.exists():
        return State()
    if not out.is_dir():
        raise InputError(f"output {out} exists and is not a folder")
    path = out / MANIFEST
    if not path.exists():
        if any(p.name not in PLACEHOLDERS for p in out.iterdir()):
            raise InputError(
                f"output folder {out} is not empty and was not written by 'prkb site build' "
                f"(no {MANIFEST}); choose another -o or remove it"
            )
        return State()
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return State()
    if not isinstance(m, dict) or m.get("version") != VERSION:
        return State()
    pages, prs, currents = m.get("pages"), m.get("prs"), m.get("currents")
    if not (isinstance(pages, dict) and isinstance(prs, dict) and isinstance(currents, dict)):
        return State()
    kb = m.get("kb")
    return State(
        salt=m.get("salt") if isinstance(m.get("salt"), str) else None,
        kb=kb if isinstance(kb, list) else None,
        pages={p: v for p, v in pages.items()  # (the three tests spelled out: 20,000 entries)
               if type(v) is list and len(v) == 3 and type(v[0]) is str and type(v[1]) is str
               and type(v[2]) is str},
        prs={k: v for k, v in prs.items()
             if type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is str},
        currents={k: v for k, v in currents.items() if isinstance(v, str)},
        search=m.get("search") is True,
        shards=_load_shards(out) if m.get("search") is True else {},
        model=str(m["model"]) if isinstance(m.get("model"), str) else "",
    )


def load_model(out: Path, model_id: str) -> dict[str, Any] | None:
    """The model the previous build wrote with its manifest (``model_id``); None when it is
    missing, damaged or another build's."""
    if not model_id:
        return None
    try:
        m = json.loads((out / MODEL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("id") != model_id or not isinstance(m.get("model"), dict):
        return None
    model: dict[str, Any] = m["model"]
    if any(not isinstance(model.get(k), t) for k, t in _MODEL_KEYS.items()):
        return None
    return model


_MODEL_KEYS: dict[str, type] = {
    "prs": dict, "months": dict, "newest": list, "counts": dict, "total": int, "builders": dict,
    "weeks": dict, "week_ends": dict, "audit": list, "graph_ends": list, "search": list,
}


def save_model(tmp: Path, model: dict[str, Any]) -> str:
    """Write the model; returns its id (for the manifest)."""
    model_id = os.urandom(8).hex()
    (tmp / MODEL).write_text(json.dumps({"id": model_id, "model": model},
                                        separators=(",", ":"), ensure_ascii=False),
                             encoding="utf-8")
    return model_id


def _load_shards(out: Path) -> dict[str, str]:
    try:
        raw = json.loads((out / SEARCH).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}


def save(tmp: Path, state: State) -> None:
    (tmp / MANIFEST).write_text(json.dumps(state.to_json(), separators=(",", ":")),
                                encoding="utf-8")
    if state.search:
        (tmp / SEARCH).write_text(json.dumps(state.shards, separators=(",", ":")),
                                  encoding="utf-8")


def links_text(links: list[str]) -> str:
    """A page's links as the links file and their hash hold them: one per line."""
    return "\n".join(links)


def links_text_hash(text: str) -> str:
    """The hash of a page's links (the manifest's), from their :func:`links_text`."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# a JSON string (quotes and escapes; other characters as they are: ensure_ascii=False)
_json_string = json.encoder.encode_basestring


def links_entry(path: str, text: str) -> str:
    """One page's member of the links file, its path and :func:`links_text`, as
    :func:`save_links` writes it (what ``json.dumps`` writes of that key and value), to
    make while the pages come in (:func:`save_link_entries`)."""
    return f"{_json_string(path)}:{_json_string(text)}"


def load_links(out: Path) -> dict[str, list[str]] | None:
    """Every page's links from the previous build, or None when they cannot be read."""
    try:
        raw = json.loads((out / LINKS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    return {p: v.split("\n") if v else [] for p, v in raw.items() if isinstance(v, str)}


def save_links(tmp: Path, links: dict[str, list[str]]) -> None:
    """Write every page's links (path -> its links), a JSON object of their
    :func:`links_text`."""
    save_link_entries(tmp, [links_entry(p, links_text(v)) for p, v in links.items()])


def save_link_entries(tmp: Path, entries: list[str]) -> None:
    """Write the links file of these members (:func:`links_entry`, one per page)."""
    (tmp / LINKS).write_text("{" + ",".join(entries) + "}", encoding="utf-8")


def reuse_links(out: Path, tmp: Path) -> bool:
    """Hard-link (or copy) the previous links file unchanged; False when it cannot."""
    try:
        os.link(out / LINKS, tmp / LINKS)
        return True
    except OSError:
        return False


def unchanged_hashes(
    data: SiteData,
    state: State,
    changed: dict[str, set[str]] | None,
    currents: dict[str, str],
) -> dict[int, tuple[str, str]]:
    """PR id -> the previous build's hashes (own data, page inputs: see
    :func:`prkb.site.plan.plan_pages`), for the PRs whose pages cannot have changed.

    A PR page shows the PR's own rows and relations, the label, title and state of each PR or
    node at the other end of its relations, and the current reading of the classes it changed.
    So a PR is dirty when the journal names it, names its node or a node at the other end of
    one of its relations, or when the current reading of one of its classes changed (or the
    previous build did not know it). ``changed`` None: nothing can be vouched for.
    """
    if changed is None:
        return {}
    ids = set()
    for key in changed.get("pr", ()):
        try:
            ids.add(int(key))
        except ValueError:
            continue
    nodes = set(changed.get("node", ()))
    for i in ids:
        pr = data.by_id.get(i)
        if pr is None:  # a PR went away: which pages named it is not known here
            return {}
        nodes.add(pr["node"])
    builders = {s for s, d in currents.items() if state.currents.get(s) != d}
    builders |= {s for s in state.currents if s not in currents}
    dirty = set(ids)
    if nodes:  # PRs at the other end of a relation of a changed node
        for r in data.relations:
            for end, other in ((r[0], r[1]), (r[1], r[0])):
                if end in nodes:
                    pr = data.by_node.get(other)
                    if pr is not None:
                        dirty.add(pr["id"])
        dirty.update(data.by_node[n]["id"] for n in nodes if n in data.by_node)
    out: dict[int, tuple[str, str]] = {}
    for pr in data.prs:
        old = state.prs.get(str(pr["id"]))
        if old is None or pr["id"] in dirty:
            continue
        if builders and any(c["slug"] in builders for c in pr["changes"]):
            continue
        out[pr["id"]] = (old[0], old[1])
    return out
