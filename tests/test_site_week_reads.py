"""A site build's week pages read their relations and PR dates from the plan's full gather
(``prkb.site.digest_pages.FromGather``), not a query a week: what the digest makes of every
week is what it makes reading the store, and the two reads return the store's rows in the
store's order, on a knowledge base with the cases that could tell them apart."""

from __future__ import annotations

from pathlib import Path

from sitekb import make_kb, plain_record

from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.publish.digest import digest_weeks, gather, week_period
from prkb.site.digest_pages import FromGather
from prkb.site.gather import gather as site_gather
from prkb.store import Store

OTHER = "someone/fork"


def _kb(path: Path) -> Store:
    store = make_kb(path)
    profile = load_profile(None)
    cls = "SynthMetadataBuilder"
    # one week of several PRs whose relations run both ways, with more than one type, so
    # that the order of the rows shows
    for n, day in ((70001, "02"), (70002, "03"), (70003, "04")):
        ingest(store, plain_record(n, f"week PR {n}", f"2026-03-{day}T10:00:00Z",
                                   "UNIFORM_BATCH", cls,
                                   [{"type": "follow-up-of", "target": 70001}] if n > 70001
                                   else []), profile)
    # a PR of another repository numbered as one of the profile's
    other = plain_record(70002, "same number, other repository", "2026-03-05T10:00:00Z",
                         "ALWAYS", cls)
    other["prkb"]["repo"] = OTHER
    ingest(store, other, profile)
    build_relations(store, profile)
    with store.conn:  # ends that are no PR of the site: a commit, a PR not stored
        store.conn.executemany(
            "INSERT OR IGNORE INTO relations (source, target, type, evidence, confidence, "
            "origin) VALUES (?, ?, ?, '', 0.5, 'text')",
            [("pr:70003", "commit:" + "c" * 40, "mentions"),
             ("pr:99999999", "pr:70002", "depends-on"),
             ("pr:70002", "pr:70003", "alternative-to")])
        # two rows of one repository with one number (another ref): the store's read gives
        # the newer row
        store.conn.execute(
            "INSERT INTO prs (repo, ref, number, title, state, created_at, closed_at, source, "
            "raw, raw_hash) VALUES (?, 'other-ref', 70003, 'a second row', 'closed', "
            "'2026-03-06T10:00:00Z', '2026-03-07T10:00:00Z', 'git', '{}', 'x')",
            (profile.repo,))
    return store


def test_every_week_is_what_the_store_gives(tmp_path: Path) -> None:
    store = _kb(tmp_path / "kb.sqlite")
    profile = load_profile(None)
    data = site_gather(store, profile)
    read = FromGather(data)
    weeks = digest_weeks(store, profile)
    busiest = max(len(store.relations_touching(
        [f"pr:{it.number}" for it in gather(store, week_period(w), profile).merged]))
        for w in weeks)
    assert len(weeks) >= 3 and busiest >= 4
    for week in weeks:
        period = week_period(week)
        assert gather(store, period, profile, read=read) == gather(store, period, profile)


def test_the_reads_return_the_store_rows_in_its_order(tmp_path: Path) -> None:
    store = _kb(tmp_path / "kb.sqlite")
    profile = load_profile(None)
    read = FromGather(site_gather(store, profile))
    keys = sorted({k for r in store.conn.execute("SELECT source, target FROM relations")
                   for k in r})
    assert any(k.startswith("commit:") for k in keys) and "pr:99999999" in keys
    assert read.relations_touching(keys) == store.relations_touching(keys)
    # keys given once, as an iterator: a PR's, then one of no PR (which sends the read to
    # the whole list of relations, the PR's key among those it looks for)
    once = ["pr:70001", "commit:" + "c" * 40]
    assert read.relations_touching(iter(once)) == store.relations_touching(once) != []
    for key in keys:  # each end alone, a stored PR or not
        assert read.relations_touching([key]) == store.relations_touching([key]), key
    assert read.relations_touching([]) == store.relations_touching([]) == []
    numbers = [n for (n,) in store.conn.execute("SELECT number FROM prs")
               if n is not None] + [99999999]
    for repo in (profile.repo, OTHER, "nobody/none"):
        assert read.pr_dates(repo, numbers) == store.pr_dates(repo, numbers), repo
    assert read.pr_dates(OTHER, [70002])[70002]["created_at"].startswith("2026-03-05")
    assert read.pr_dates(profile.repo, [70003])[70003]["state"] == "closed"
