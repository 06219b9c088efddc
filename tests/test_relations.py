"""Relations from PR texts: every type, both directions, negation, code, URLs, other repos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prkb.errors import InputError
from prkb.graph.relations import (
    clean_text,
    default_rules,
    load_rules,
    relations_in_text,
    relations_in_title,
    relations_of_record,
)
from prkb.profile import load_profile
from prkb.records import normalize_record

PROFILE = load_profile()
REPO = PROFILE.repo
SNAPSHOTS = Path(__file__).resolve().parent.parent / "data" / "snapshots"


def rels(text: str, *, title: str = "Some change", number: int = 100) -> dict[int | str, tuple]:
    """{target number (or key): (type, direction, confidence)} of one body text."""
    out = {}
    for r in relations_in_text(text, number=number, title=title, where="body", profile=PROFILE):
        k: int | str = r.ref.number if not (r.ref.repo or r.ref.commit) else r.ref.key
        out[k] = (r.type, r.direction, r.confidence)
    return out


@pytest.mark.parametrize(
    ("text", "title", "expected"),
    [
        ("This reverts #41 because it broke ROCm.", "Revert a thing", ("reverts", "out")),
        ("This was reverted in #41.", "x", ("reverts", "in")),
        ("The crash was introduced by #41.", "[Bugfix] crash", ("fixes-regression-from", "out")),
        ("Fix a regression from #41 in the MLA path.", "x", ("fixes-regression-from", "out")),
        ("The speed-up was added in #41.", "[Perf] more", ("follow-up-of", "out")),
        ("The declaration was added in #41.", "[Bugfix] lower", ("fixes-regression-from", "out")),
        ("Fixes the hang that #41 introduced.", "x", ("fixes-regression-from", "out")),
        ("This PR depends on #41.", "x", ("depends-on", "out")),
        ("Requires #41 to be merged first.", "x", ("depends-on", "out")),
        ("It works again now that #41 has landed.", "x", ("depends-on", "out")),
        ("Stacked on top of #41.", "x", ("depends-on", "out")),
        ("#41 only works once this PR has landed.", "x", ("depends-on", "in")),
        ("This blocks #41.", "x", ("depends-on", "in")),
        ("Follow-up to #41: also cover XPU.", "x", ("follow-up-of", "out")),
        ("#41 will be a follow-up with the tests.", "x", ("follow-up-of", "in")),
        # follow-up-of points from the later PR to the earlier one, whichever names the other
        ("Follow up of #41 for the XPU builders.", "x", ("follow-up-of", "out")),
        ("A follow-up on #41.", "x", ("follow-up-of", "out")),
        ("The tests were followed up in #41.", "x", ("follow-up-of", "in")),
        ("The follow-up is #41.", "x", ("follow-up-of", "in")),
        ("Supersedes #41 with a smaller diff.", "x", ("supersedes", "out")),
        ("Superseded by #41.", "x", ("supersedes", "in")),
        ("Closing in favor of #41.", "x", ("supersedes", "in")),
        ("An alternative to #41 that keeps the level.", "x", ("alternative-to", "out")),
        ("Another fix for the same crash: closed in favour of #41.",
         "x", ("supersedes", "in")),
        ("This alternative approach was closed in favor of #41.", "x", ("alternative-to", "out")),
        ("cc #41", "x", ("mentions", "out")),
        ("Related: #41", "x", ("mentions", "out")),
    ],
)
def test_phrase_gives_type_and_direction(text: str, title: str, expected: tuple) -> None:
    got = rels(text, title=title)
    assert 41 in got, got
    assert got[41][:2] == expected


def test_explicit_verbs_are_stronger_than_mentions() -> None:
    assert rels("This PR depends on #41.")[41][2] == 0.9
    assert rels("See the discussion in the channel about #41.")[41] == ("mentions", "out", 0.3)


@pytest.mark.parametrize(
    "text",
    [
        "This is not related to #41.",
        "Unlike #41, this keeps the level.",
        "This does not depend on #41.",
        "It no longer requires #41.",
        "This PR doesn't revert #41.",
        "#41 is unrelated.",
        "#41 is not needed anymore.",
    ],
)
def test_negation_gives_no_edge(text: str) -> None:
    assert 41 not in rels(text)


def test_negation_is_limited_to_its_clause() -> None:
    got = rels("This is not a new bug, but it depends on #41.")
    assert got[41][:2] == ("depends-on", "out")


def test_code_blocks_inline_code_and_html_comments_are_ignored() -> None:
    text = (
        "Depends on #41.\n\n```\n# fixes #42 in the old code\nreverts #43\n```\n"
        "Run `pytest -k '#44'` and:\n~~~ text\n#45\n~~~\n"
        "<!-- template: fixes #46 -->\nAlso see #47."
    )
    got = rels(text)
    assert set(got) == {41, 47}


def test_urls_same_repo_count_other_repos_do_not() -> None:
    text = (
        "Depends on https://github.com/vllm-project/vllm/pull/41.\n\n"
        "Same crash as https://github.com/vllm-project/vllm/issues/42#issuecomment-1.\n\n"
        "Upstream fix: https://github.com/pytorch/pytorch/pull/43 and "
        "https://example.org/page#44."
    )
    got = rels(text)
    assert got[41][:2] == ("depends-on", "out")
    assert 42 in got
    assert 43 not in got and 44 not in got
    refs = relations_in_text(text, number=100, title="x", where="body", profile=PROFILE)
    issue = next(r for r in refs if r.ref.number == 42)
    assert issue.ref.issue_hint and issue.ref.key == "issue:42"


def test_cross_repository_references_are_external_nodes() -> None:
    got = rels("This depends on pytorch/pytorch#123 and fixes vllm-project/vllm#41.")
    assert got["ext:pytorch/pytorch#123"][:2] == ("depends-on", "out")
    # the own repository written out is a plain reference
    assert 41 in got


def test_issue_references() -> None:
    refs = relations_in_text(
        "Fixes issue #41. Also depends on #42.", number=100, title="x", where="body",
        profile=PROFILE,
    )
    by = {r.ref.number: r for r in refs}
    assert by[41].ref.issue_hint and by[41].ref.key == "issue:41"
    assert not by[42].ref.issue_hint


def test_conflicting_cues_are_all_reported_per_reference() -> None:
    # each reference is classified on its own; graph.resolve picks the winner per pair
    refs = relations_in_text("This reverts #41. It needed #41 to land first, not #42.",
                             number=100, title="x", where="body", profile=PROFILE)
    assert sorted(r.type for r in refs if r.ref.number == 41) == ["depends-on", "reverts"]
    assert all(r.ref.number != 42 for r in refs)


def test_lists_of_references_share_the_phrase() -> None:
    got = rels("This depends on #41, #42 and #43.")
    assert {got[n][0] for n in (41, 42, 43)} == {"depends-on"}
    got = rels("Now that #41 and #42 have landed this works.")
    assert got[41][0] == got[42][0] == "depends-on"


def test_self_references_are_skipped() -> None:
    assert rels("This PR (#100) depends on #41.", number=100).keys() == {41}


def test_revert_title_and_commit_body() -> None:
    out = relations_in_title('Revert "[Bugfix] Lower the level (#41)" (#100)', number=100,
                             profile=PROFILE)
    assert [(r.ref.number, r.type) for r in out] == [(41, "reverts")]
    # the squash suffix is the PR itself, not a reference
    assert relations_in_title("[Perf] Raise it (#100)", number=100, profile=PROFILE) == []
    body = "This reverts commit 0123456789abcdef0123456789abcdef01234567."
    refs = relations_in_text(body, number=100, title="x", where="body", profile=PROFILE)
    assert [(r.ref.key, r.type) for r in refs] == [
        ("commit:0123456789abcdef0123456789abcdef01234567", "reverts")
    ]


def test_record_texts_all_count_with_where() -> None:
    rec = normalize_record(
        {
            "number": 100,
            "title": "[ROCm] enable it",
            "body": "Part of the plan.",
            "reviews": [{"body": "Is this superseded by #42?", "state": "COMMENTED"}],
            "comments": [{"body": "Works now that #41 has landed."}],
            "review_comments": [
                {"body": "See #43", "path": "a.py", "diff_hunk": "@@ -1 +1 @@\n-# fixes #44"}
            ],
        }
    )
    got = {
        r.ref.number: (r.type, r.where, r.path) for r in relations_of_record(rec, PROFILE)
    }
    assert got == {
        41: ("depends-on", "comment", None),
        42: ("supersedes", "review", None),
        43: ("mentions", "review-comment", "a.py"),
    }


def test_clean_text_keeps_code_for_evidence() -> None:
    codes: list[str] = []
    text = clean_text("Set `x = #41` here", REPO, codes)
    assert "#41" not in text and codes == ["x = #41"]
    ev = relations_in_text("`Builder` was added in #41.", number=1, title="[Bugfix] y",
                           where="body", profile=PROFILE)[0].quote
    assert "`Builder`" in ev and "#41" in ev


def test_rules_are_data_and_validated(tmp_path: Path) -> None:
    rules = load_rules(
        {
            "relations": {"priority": ["depends-on", "mentions"]},
            "rules": [{"type": "depends-on", "pre": r"\bwants\s+", "confidence": 0.7}],
        }
    )
    out = relations_in_text("It wants #5.", number=1, title="x", where="body",
                            profile=PROFILE, rules=rules)
    assert [(r.ref.number, r.type, r.confidence) for r in out] == [(5, "depends-on", 0.7)]
    with pytest.raises(InputError, match="not a relation type"):
        load_rules({"rules": [{"type": "causes", "pre": "x"}]})
    with pytest.raises(InputError, match="bad regex"):
        load_rules({"rules": [{"type": "mentions", "pre": "("}]})
    with pytest.raises(InputError, match="pre or a post"):
        load_rules({"rules": [{"type": "mentions"}]})
    bad = tmp_path / "r.toml"
    bad.write_text("[relations\n", encoding="utf-8")
    with pytest.raises(InputError, match="relation rules"):
        default_rules(str(bad))


def test_in_favor_of_says_what_it_becomes_when_the_replacing_pr_is_older() -> None:
    """The graph turns "closed in favor of #N" into alternative-to when #N is the older PR
    (it cannot have replaced a PR opened after it); the text rule carries that choice."""
    (r,) = relations_in_text("Closing in favor of #41.", number=100, title="x", where="body",
                             profile=PROFILE)
    assert (r.type, r.direction, r.older_type) == ("supersedes", "in", "alternative-to")
    (r,) = relations_in_text("Superseded by #41.", number=100, title="x", where="body",
                             profile=PROFILE)
    assert r.older_type is None


def test_curated_seed_texts() -> None:
    recs = {}
    with (SNAPSHOTS / "curated-seeds.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = normalize_record(json.loads(line))
            recs[rec["number"]] = rec
    got = {
        (n, r.ref.number, r.type, r.direction)
        for n, rec in recs.items()
        for r in relations_of_record(rec, PROFILE)
    }
    assert (47144, 42885, "fixes-regression-from", "out") in got
    assert (45149, 47766, "depends-on", "out") in got
    assert (47766, 45149, "depends-on", "in") in got
    assert (47310, 47144, "alternative-to", "out") in got
    assert (47310, 42885, "fixes-regression-from", "out") in got
    # "#48015 will fix more tests" names another PR without a relation verb
    assert (47144, 48015, "mentions", "out") in got


@pytest.mark.parametrize("snap", sorted(SNAPSHOTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_bundled_snapshot_reads_without_error(snap: Path) -> None:
    n = 0
    with snap.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = normalize_record(json.loads(line))
            for r in relations_of_record(rec, PROFILE):
                assert r.type in default_rules().priority
                assert 0.0 < r.confidence <= 1.0
                assert r.quote and r.where
            n += 1
    assert n > 0
