"""Relations read from the code's state changes (:mod:`prkb.analyze.state`): a PR that puts a
builder back on the spelling the code reads fixes the PR that left it stale.

A rename of what the code reads (the spelling the root builder base declares) leaves every
builder still on the old spelling with the level it inherits; their state changes say so
(``after_source`` ``stale``). The later PR whose state change takes the same builder (file and
class) out of ``stale`` is ``fixes-regression-from`` the one that made it stale, with a
``stale-restored`` evidence item. Both sides are facts of the code at four revisions, not a
reading of anyone's words: origin ``state``, confidence 1.
"""

from __future__ import annotations

from .. import evidence as E
from ..models import PrNode, Relation
from ..profile import Profile
from ..store import Store
from .nodes import show_key

STALE = "stale"


def stale_relations(store: Store, profile: Profile) -> list[Relation]:
    """``fixes-regression-from`` from each PR that restores a stale builder to the PR that
    made it stale (the latest such PR before it), with the evidence of each builder."""
    rows = store.state_change_rows(f'"{STALE}"')
    rows.sort(key=lambda row: (row[0].date, row[0].number or 0, row[0].ref))
    made: dict[tuple[str, str], tuple[PrNode, dict[str, object]]] = {}
    found: dict[tuple[str, str], list[dict[str, object]]] = {}
    for pr, changes in rows:
        if pr.state != "merged":
            continue
        for c in changes:
            if c.get("value") != profile.display:
                continue
            key = (str(c.get("file")), str(c.get("class")))
            before, after = c.get("before_source"), c.get("after_source")
            if after == STALE and before != STALE:
                made[key] = (pr, c)
            elif before == STALE and after != STALE and key in made:
                culprit, drop = made.pop(key)
                got = drop.get("after_stale")
                stale = [str(x) for x in got] if isinstance(got, list) else []
                found.setdefault((pr.key, culprit.key), []).append({
                    "kind": "stale-restored", "class": key[1], "file": key[0],
                    "attr": stale[0].rsplit(".", 1)[-1] if stale else "",
                    "pr": show_key(pr.key), "by": show_key(culprit.key),
                    "level_before": drop.get("before"), "level_stale": drop.get("after"),
                    "level_after": c.get("after"),
                })
    return [
        Relation(src, dst, "fixes-regression-from", E.dumps(items), 1.0, "state")
        for (src, dst), items in sorted(found.items())
    ]
