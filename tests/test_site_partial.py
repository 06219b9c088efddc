"""The one-PR rebuild (prkb.site.partial): an edit of what is shown of a few PRs is planned from
a partial read, the other pages carried over; the site equals a fresh build, and anything
that moves a PR (a state, a date, a relation), names it on the audit or the graph page, or
leaves the kept model unreadable, is planned in full."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sitekb import assert_same_as_fresh, hostile_record, make_kb, plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site import plan as site_plan
from prkb.site.build import build_site
from prkb.site.state import MODEL
from prkb.store import Store

PROFILE = load_profile(None)


def _edit(store: Store, number: int, title: str, when: str, level: str, cls: str,
          stamp: str, **fields: object) -> None:
    rec = plain_record(number, title, when, level, cls)
    if number == 90011:
        rec["prkb"]["relations"] = [{"type": "follow-up-of", "target": 90010}]
    rec.update(fields)
    rec["updated_at"] = stamp
    assert ingest(store, rec, PROFILE).outcome == "updated"


@pytest.fixture
def no_graph_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph page without its table of relations: on a large site most PRs are not in its
    first rows; here every related PR would be, and is planned in full when edited."""
    monkeypatch.setattr(site_plan, "GRAPH_ROWS", 0)


@pytest.mark.usefixtures("no_graph_rows")
def test_an_edited_title_is_planned_from_a_partial_read(tmp_path: Path) -> None:
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        first = build_site(store, out, PROFILE, search=False)
        assert not first.patched
        inode = (out / "en" / "matrix.html").stat().st_ino
        _edit(store, 90010, "Synth A, retitled", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-01T00:00:00Z")
        step = build_site(store, out, PROFILE, search=False)
        assert step.patched and 0 < step.rendered < step.pages // 2
        # its pages, the follow-up's (it shows the title), its builder, month, graph part
        # and digest week: each holds the new title
        for page in ("en/pr/90010.html", "zh/pr/90011.html", "en/pr/90011.html",
                     "timeline/2025-01.json"):
            assert "Synth A, retitled" in (out / page).read_text(), page
        builder = next((out / "en" / "builder").glob("SynthMetadataBuilder-*.html"))
        assert "Synth A, retitled" in builder.read_text()
        assert any("Synth A, retitled" in p.read_text() for p in (out / "graph").glob("*.json"))
        assert "Synth A, retitled" in (out / "en" / "digest" / "2025-W01.html").read_text()
        assert (out / "en" / "matrix.html").stat().st_ino == inode  # carried over
        assert_same_as_fresh(store, out, fresh)

        # labels of two PRs at once, one of them the newest of the site
        _edit(store, 90010, "Synth A, retitled", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-02T00:00:00Z", labels=[{"name": "rocm"}])
        newest = plain_record(90012, "Synth newest", "2026-09-01T00:00:00Z", "NEVER",
                              "SynthMetadataBuilder")
        ingest(store, newest, PROFILE)
        assert not build_site(store, out, PROFILE, search=False).patched  # a new PR
        newest.update(title="Synth newest, retitled", updated_at="2026-09-02T00:00:00Z")
        ingest(store, newest, PROFILE)
        step = build_site(store, out, PROFILE, search=False)
        assert step.patched
        assert "Synth newest, retitled" in (out / "en" / "index.html").read_text()
        assert "Synth newest, retitled" in (out / "feed.xml").read_text()
        assert_same_as_fresh(store, out, fresh)


@pytest.mark.usefixtures("no_graph_rows")
def test_a_move_is_planned_in_full(tmp_path: Path) -> None:
    """A new merge date moves the PR to another month and week; a new state changes the
    counts; the hostile PR is on the audit page: each is planned from a full read."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        _edit(store, 90010, "Synth A", "2025-03-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-01T00:00:00Z")
        assert not build_site(store, out, PROFILE, search=False).patched
        assert_same_as_fresh(store, out, fresh)
        _edit(store, 90010, "Synth A", "2025-03-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-02T00:00:00Z", state="closed", merged_at=None)
        assert not build_site(store, out, PROFILE, search=False).patched
        assert_same_as_fresh(store, out, fresh)
        rec = hostile_record()
        rec.update(title=rec["title"] + " edited", updated_at="2026-08-01T00:00:00Z")
        ingest(store, rec, PROFILE)
        assert not build_site(store, out, PROFILE, search=False).patched  # on the audit page
        assert_same_as_fresh(store, out, fresh)


@pytest.mark.usefixtures("no_graph_rows")
def test_a_missing_page_or_model_plans_in_full(tmp_path: Path) -> None:
    """A page the patched plan would carry over is gone from the previous site: the build
    plans again in full and makes it. A damaged model: planned in full, no error."""
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    with make_kb(tmp_path / "kb.sqlite") as store:
        build_site(store, out, PROFILE, search=False)
        (out / "en" / "audit.html").unlink()
        _edit(store, 90010, "Synth A, again", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-01T00:00:00Z")
        step = build_site(store, out, PROFILE, search=False)
        assert not step.patched and (out / "en" / "audit.html").is_file()
        assert_same_as_fresh(store, out, fresh)
        # a model of the right keys with entries of the wrong shape: planned in full
        kept = json.loads((out / MODEL).read_text(encoding="utf-8"))
        kept["model"]["prs"] = {k: 5 for k in kept["model"]["prs"]}
        (out / MODEL).write_text(json.dumps(kept), encoding="utf-8")
        _edit(store, 90010, "Synth A, bent", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-01T12:00:00Z")
        assert not build_site(store, out, PROFILE, search=False).patched
        assert_same_as_fresh(store, out, fresh)
        (out / MODEL).write_text("{not json", encoding="utf-8")
        _edit(store, 90010, "Synth A, once more", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-02T00:00:00Z")
        assert not build_site(store, out, PROFILE, search=False).patched
        assert_same_as_fresh(store, out, fresh)
        _edit(store, 90010, "Synth A, and again", "2025-01-05T00:00:00Z", "UNIFORM_BATCH",
              "SynthMetadataBuilder", "2026-02-03T00:00:00Z")
        assert build_site(store, out, PROFILE, search=False).patched  # the model is whole again
        assert_same_as_fresh(store, out, fresh)
