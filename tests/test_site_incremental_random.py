"""Incremental site builds against fresh ones, on random histories of edits.

Each run starts from the site test knowledge base and a few synthetic PRs on two builders,
then applies random edits the way collectors make them (a title, labels, a state and its
dates, a declared level, relations added or dropped, a new PR, relations rebuilt), builds
incrementally after each and compares every file with a build from scratch. A page that an
incremental build leaves stale shows up as a difference, with the seed and the step.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from sitekb import files, make_kb, plain_record

from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import plan as site_plan
from prkb.site.build import build_site
from prkb.site.state import MODEL
from prkb.store import Store

# heavy: many random incremental site builds: not in the fast tier
pytestmark = pytest.mark.heavy

PROFILE = load_profile(None)
LEVELS = ["NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS"]
CLASSES = ["SynthMetadataBuilder", "OtherSynthMetadataBuilder"]
WEEKS = [f"2025-{m:02d}-{d:02d}T10:00:00Z" for m in (2, 3, 4, 5) for d in (3, 12, 21)]


class History:
    """The synthetic PRs as records, edited at random and ingested again."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.recs: dict[int, dict[str, Any]] = {}
        self.clock = 0

    def record(self, number: int) -> dict[str, Any]:
        rng = self.rng
        when = rng.choice(WEEKS)
        rec = plain_record(number, f"Synth {number} {rng.choice(['graph', 'decode'])}", when,
                           rng.choice(LEVELS), rng.choice(CLASSES))
        if rng.random() < 0.3:
            rec.update(state="open", merged_at=None)
        return rec

    def put(self, store: Store, rec: dict[str, Any]) -> None:
        self.clock += 1
        rec["updated_at"] = f"2026-01-01T00:{self.clock // 60:02d}:{self.clock % 60:02d}Z"
        self.recs[rec["number"]] = rec
        assert ingest(store, rec, PROFILE).outcome in ("new", "updated"), rec["number"]

    def edit(self, store: Store) -> str:
        rng = self.rng
        if not self.recs or rng.random() < 0.15:
            number = 90100 + len(self.recs)
            rec = self.record(number)
            if self.recs and rng.random() < 0.7:
                rec["prkb"]["relations"] = [{"type": "follow-up-of",
                                             "target": rng.choice(sorted(self.recs))}]
            self.put(store, rec)
            return f"new {number}"
        number = rng.choice(sorted(self.recs))
        rec = {**self.recs[number], "prkb": dict(self.recs[number]["prkb"])}
        kind = rng.choice(["title", "labels", "merge", "reopen", "date", "level", "relate",
                           "unrelate", "relations"])
        if kind == "title":
            rec["title"] = f"{rec['title']} (edited {self.clock})"
        elif kind == "labels":
            rec["labels"] = [{"name": rng.choice(["rocm", "v1", "ci"])}]
        elif kind == "merge":
            when = rng.choice(WEEKS)
            rec.update(state="merged", merged_at=when, closed_at=when)
        elif kind == "reopen":
            rec.update(state="open", merged_at=None, closed_at=None)
        elif kind == "date":
            when = rng.choice(WEEKS)
            rec.update(created_at=when)
            if rec["state"] == "merged":
                rec.update(merged_at=when, closed_at=when)
        elif kind == "level":
            sc = dict(rec["prkb"]["symbol_changes"][0])
            sc["after"] = rng.choice([lv for lv in LEVELS if lv != sc["after"]])
            rec["prkb"]["symbol_changes"] = [sc]
            bl = dict(rec["prkb"]["builder_levels"][0])
            bl["declared"] = bl["effective"] = sc["after"]
            rec["prkb"]["builder_levels"] = [bl]
        elif kind == "relate":
            others = [n for n in self.recs if n != number]
            if not others:
                return "nothing"
            rec["prkb"]["relations"] = [{"type": rng.choice(["follow-up-of", "depends-on"]),
                                         "target": rng.choice(others)}]
        elif kind == "unrelate":
            rec["prkb"]["relations"] = []
        else:
            build_relations(store, PROFILE)
            return "relations rebuilt"
        self.put(store, rec)
        return f"{kind} {number}"


# seeds 1-4, and 17 and 22, which found the digest's stale relation week (a page kept where
# a fresh build drops a relation) before week hashes covered relation ends; 48 seeds pass
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 17, 22])
def test_random_edits_keep_incremental_builds_equal_to_fresh_ones(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two rows in the graph page's table: its PRs are planned in full when edited, the
    # others from a partial read (on a large site most PRs are not in that table)
    monkeypatch.setattr(site_plan, "GRAPH_ROWS", 2)
    random_history(tmp_path, seed)


def random_history(tmp_path: Path, seed: int) -> list[bool]:
    """Random edits, each followed by an incremental and a fresh build compared file by
    file; returns, per incremental build, whether it was planned from a partial read."""
    rng = random.Random(seed)
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    history = History(rng)
    with make_kb(tmp_path / "kb.sqlite") as store:
        for _ in range(3):
            history.edit(store)
        build_relations(store, PROFILE)
        build_site(store, out, PROFILE, search=False)
        done: list[str] = []
        rendered: list[bool] = []
        patched: list[bool] = []
        for step in range(8):
            done.append(history.edit(store))
            if rng.random() < 0.3:
                done.append(history.edit(store))
            inc = build_site(store, out, PROFILE, search=False)
            shutil.rmtree(fresh, ignore_errors=True)
            build_site(store, fresh, PROFILE, search=False)
            got, want = files(out), files(fresh)
            assert sorted(got) == sorted(want), (seed, step, done)
            stale = [name for name in want if got[name] != want[name]]
            assert stale == [], f"seed {seed}, after {done}: stale {stale[:8]}"
            rendered.append(inc.rendered < inc.pages)
            patched.append(inc.patched)
            # what the site keeps for the next build's partial read is a fresh build's
            assert (json.loads((out / MODEL).read_text())["model"]
                    == json.loads((fresh / MODEL).read_text())["model"]), (seed, done)
        assert any(rendered)  # the builds were incremental (pages kept), not all made again
        return patched
