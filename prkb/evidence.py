"""The evidence of a relation as data: a list of items, each a dict with a ``kind``.

The graph builder (``prkb.graph``) makes the items; the store keeps them as JSON text in
``relations.evidence``; the report and digest templates word each kind in every language
(``templates/report/_evidence.j2``, one catalog sentence per kind); the graph exports and the
CLI print :func:`summary`, a short English reading. Free text from a PR (a title, a body, a
comment) stays as it was written, in a ``quote`` item that names the PR and the field.

Kinds and their fields (PRs are labels such as ``#47144``, or a short commit):

- ``quote``: ``pr``, ``where`` (title, body, comment, review, review-comment), ``path`` (a
  review comment's file, else absent), ``text`` (the PR's words, cut around the reference).
- ``record``: ``text``, the evidence a curated record states (its own words).
- ``legacy``: ``text``, evidence a knowledge base stored before evidence was data (prkb's
  English of the time, shown as a quote).
- ``older``: ``older``, ``newer``: the older PR cannot have replaced the newer one.
- ``last-set``: ``class``, ``attr``, ``before_attr`` (the old spelling on a rename, else
  absent), ``before``, ``after``, ``direction`` of this change; ``by``, ``by_before``,
  ``by_after``: the earlier PR that last set the value, and what it set.
- ``undoes-level``: ``pr``, ``class``, ``before``, ``after`` (``pr`` lowers), ``back`` (back to the
  level before the earlier change), ``by``, ``by_direction``, ``by_before``, ``by_after``,
  ``days`` (whole days between the two, or absent), ``title`` (this PR's title, quoted as
  the sign that it is a fix).
- ``blame``: ``lines``, ``files``, ``commits``, ``by``: changed lines whose previous version
  (blame on the parent) was last changed by ``commits``, merged as ``by``; at most five files
  and five commits are listed, ``more`` (when present) counts those left out, whose lines
  ``lines`` counts too.
- ``revert-title``: ``pr``: its title says it is a revert.
- ``blamed-declaration``: ``classes``, ``pr``, ``by``: the blamed lines declare the classes;
  ``by`` raised or added their level and ``pr`` lowers it.
- ``culprit-named``: ``pr``, ``culprits``: the PR's own text names them as the culprit.
- ``closed-unmerged``: ``pr``, and ``fix`` and ``of`` when a merged fix of the same culprit
  is known.
- ``superseded``: ``old``, ``new``, ``state`` (of the new one): the old one was closed
  unmerged and is older.
- ``same-change``: ``class``, ``attr``, ``days``, ``similarity`` (of the titles, 0..1, or
  absent), ``test`` (a test both name, or absent): two PRs change the same declaration
  within ``days``, one closed unmerged.
- ``stale-restored``: ``class``, ``file``, ``attr`` (the spelling the code stopped reading),
  ``by`` (the PR whose change left the builder on it), ``pr`` (the PR that puts it back),
  ``level_before``, ``level_stale``, ``level_after``: the builder's effective level before,
  while stale, and after (``prkb.graph.stale``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

Item = dict[str, Any]
MAX_CUES = 3  # distinct cues whose items an edge keeps (best first)


def is_inferred(origin: str | None, confidence: float | None) -> bool:
    """A relation read only from code lineage (origin ``lineage``) or from a timeline or code
    heuristic (a candidate below confidence 1), not stated by anyone: outputs mark it."""
    if origin == "lineage":
        return True
    return origin in ("timeline", "code") and float(confidence or 0.0) < 1.0


def dumps(items: list[Item]) -> str:
    """The stored form: compact JSON, keys sorted (equal evidence is equal text)."""
    return json.dumps(items, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class Evidence(list[Item]):
    """The items of one stored evidence text, with that text (``text``): equal text is equal
    evidence, so what a template makes of the items can be kept by it
    (:mod:`prkb.render.evidence_lines`). Otherwise a list: it compares, serializes and
    pickles as one."""

    __slots__ = ("text",)

    def __init__(self, items: list[Item], text: str) -> None:
        super().__init__(items)
        self.text = text


def loads(text: str | None) -> list[Item]:
    """The items of a stored evidence text (an :class:`Evidence`); text that is not a JSON
    list of items (a knowledge base written before evidence was data) is one ``legacy``
    item."""
    if not text:
        return Evidence([], "")
    return Evidence(_parse(text), text)


# parsed once per process (a relation's evidence is read for the pages of both its PRs and
# for its week's digest): a pure function of the text. The item dicts are shared by every
# Evidence of that text (each a list of its own): nothing changes an item once read
@lru_cache(maxsize=65536)
def _parse(text: str) -> list[Item]:
    if text.startswith("["):
        try:
            got = json.loads(text)
        except ValueError:
            got = None
        if isinstance(got, list) and all(isinstance(x, dict) and "kind" in x for x in got):
            return got
    return [{"kind": "legacy", "text": text}]


def make(*items: Item) -> str:
    """Stored evidence of the given items (fields that are None are left out)."""
    return dumps([{k: v for k, v in it.items() if v is not None} for it in items])


def add(evidence: str, item: Item) -> str:
    """``evidence`` with one more item at its end."""
    return dumps([*loads(evidence), {k: v for k, v in item.items() if v is not None}])


def merge(cues: list[str]) -> str:
    """One edge's evidence from the evidence of several cues (best first): the items of the
    first :data:`MAX_CUES` distinct cues, each item once."""
    seen: list[str] = []
    out: list[Item] = []
    keys: set[str] = set()
    for cue in cues:
        if not cue or cue in seen:
            continue
        seen.append(cue)
        if len(seen) > MAX_CUES:
            break
        for it in loads(cue):
            key = dumps([it])
            if key not in keys:
                keys.add(key)
                out.append(it)
    return dumps(out)


def _v(value: Any) -> str:
    return "-" if value in (None, "") else str(value)


def _one(it: Item) -> str:
    kind = it.get("kind")
    if kind == "quote":
        where = it.get("where", "text")
        if it.get("path"):
            where = f"{where} on {it['path']}"
        return f"{it.get('pr', '')} {where}: \"{it.get('text', '')}\"".strip()
    if kind in ("record", "legacy"):
        return str(it.get("text", ""))
    if kind == "older":
        return f"{it['older']} is older than {it['newer']}"
    if kind == "last-set":
        attr = it["attr"] if not it.get("before_attr") else f"{it['before_attr']}->{it['attr']}"
        return (f"{it['class']}.{attr}: {_v(it.get('before'))} -> {_v(it.get('after'))} "
                f"({it.get('direction')}); last set by {it['by']}: {_v(it.get('by_before'))} "
                f"-> {_v(it.get('by_after'))}")
    if kind == "undoes-level":
        days = f", {it['days']} days earlier" if it.get("days") is not None else ""
        return (f"lowers {it['class']} {_v(it.get('before'))} -> {_v(it.get('after'))}; "
                f"{it['by']} {it.get('by_direction')} it ({_v(it.get('by_before'))} -> "
                f"{_v(it.get('by_after'))}){days}; fix title \"{it.get('title', '')}\"")
    if kind == "blame":
        more = f" and {it['more']} more files or commits" if it.get("more") else ""
        return (f"blame: {it['lines']} line(s) in {', '.join(it['files'])} last changed by "
                f"{', '.join(it['commits'])}{more} ({it['by']})")
    if kind == "revert-title":
        return "revert title"
    if kind == "blamed-declaration":
        return f"blamed lines declare {', '.join(it['classes'])}, raised there, lowered here"
    if kind == "culprit-named":
        return f"own text names {', '.join(it['culprits'])} as the culprit"
    if kind == "closed-unmerged":
        if it.get("fix"):
            return f"{it['pr']} closed unmerged; {it['fix']} is the merged fix of {it['of']}"
        return f"{it['pr']} closed unmerged"
    if kind == "superseded":
        return f"{it['old']} closed unmerged and older than {it['new']} ({it['state']})"
    if kind == "same-change":
        why = []
        if it.get("similarity") is not None:
            why.append(f"titles {it['similarity']:.0%} alike")
        if it.get("test"):
            why.append(f"both name {it['test']}")
        return (f"both change {it['class']}.{it['attr']} within {it['days']} days, one closed "
                f"unmerged; {'; '.join(why)}")
    if kind == "stale-restored" and not it.get("level_before"):
        return (f"{it['by']} added {it['class']} on {it['attr']}, which the code did not read "
                f"({_v(it.get('level_stale'))}); {it['pr']} puts it on the read spelling "
                f"({_v(it.get('level_after'))})")
    if kind == "stale-restored":
        return (f"{it['by']} left {it['class']} on {it['attr']}, which the code no longer read "
                f"({_v(it.get('level_before'))} -> {_v(it.get('level_stale'))}); {it['pr']} "
                f"restores it ({_v(it.get('level_after'))})")
    return json.dumps(it, ensure_ascii=False, sort_keys=True)


def summary(evidence: str | list[Item] | None) -> str:
    """A short English reading of evidence (stored text or its items), for graph exports and
    the CLI."""
    items = evidence if isinstance(evidence, list) else loads(evidence)
    return "; ".join(_one(it) for it in items)
