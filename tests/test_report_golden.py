"""Golden files: PRs rendered in each language and format.

- pr-101, pr-102: small synthetic GitHub records;
- pr-47144, pr-45149: the bundled data (data/snapshots, relations built as ``prkb demo``
  does);
- pr-402, pr-403, pr-404, pr-406, pr-407: collected with ``collect git`` from the generated
  repository of tests/fivecases.py (a bool flag made a level, a rename, a raise with the
  reorder call, a lowering fix, a run-time override), code read from its blobs.

Regenerate after an intended change with ``PRKB_UPDATE_GOLDEN=1 python3 -m pytest
tests/test_report_golden.py`` and review the diff of tests/golden/report/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fivecases import CASES as GIT_CASES
from fivecases import five_cases_kb

from prkb.collect.snapshot import import_jsonl
from prkb.graph import build_relations
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.render.report import render_report
from prkb.store import Store
from tests.report_helpers import add, decl_patch, record

GOLDEN = Path(__file__).parent / "golden" / "report"


def _kb(tmp_path: Path) -> Store:
    store = Store(tmp_path / "kb.sqlite")
    # a lowering with a test, a review thread, an open question and a mention
    add(store, record(
        101,
        title="[Bugfix][XPU] Lower XPU builder to single-token decode",
        body=(
            "## Purpose\n\nThe XPU builder crashes at capture with MTP; follow-up to #100.\n\n"
            "<!-- hidden note -->\n## Test Plan\n\n```\npytest tests/v1/test_xpu.py -k capture\n```"
        ),
        files=[
            {"filename": "vllm/v1/attention/backends/xpu_attn.py", "status": "modified",
             "additions": 1, "deletions": 1,
             "patch": decl_patch("XPUMetadataBuilder", "UNIFORM_BATCH",
                                 "UNIFORM_SINGLE_TOKEN_DECODE")},
            {"filename": "tests/v1/test_xpu.py", "status": "modified", "additions": 12,
             "deletions": 0, "patch": "@@ -1,1 +1,2 @@\n import pytest\n+def test_capture(): ..."},
        ],
        reviews=[
            {"user": {"login": "rev-a"}, "state": "APPROVED", "body": "LGTM, the test covers it.",
             "submitted_at": "2026-03-01T10:00:00Z"},
            {"user": {"login": "rev-b"}, "state": "COMMENTED",
             "body": "Does this slow down decode throughput?",
             "submitted_at": "2026-03-01T11:00:00Z"},
        ],
    ))
    # a raise without the matching reorder call; no body, no discussion
    add(store, record(
        102,
        title="[Perf] Raise FlashInfer builder to ALWAYS",
        user=None,
        merged_at=None,
        state="open",
        files=[
            {"filename": "vllm/v1/attention/backends/flashinfer.py", "status": "modified",
             "additions": 1, "deletions": 1,
             "patch": decl_patch("FlashInferMetadataBuilder", "UNIFORM_BATCH", "ALWAYS")},
        ],
    ))
    return store


BUNDLED = (47144, 45149)
CASES = [(n, lang, fmt) for n in (101, 102, *BUNDLED, *GIT_CASES) for lang in ("zh", "en")
         for fmt in ("md", "txt", "html")]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    store = _kb(tmp_path_factory.mktemp("golden"))
    yield store
    store.close()


@pytest.fixture(scope="module")
def bundled_kb(tmp_path_factory: pytest.TempPathFactory):
    profile = load_profile()
    store = Store(tmp_path_factory.mktemp("golden-bundled") / "kb.sqlite")
    for snap in sorted((data_dir() / "snapshots").glob("*.jsonl")):
        assert not import_jsonl(store, snap, profile).errors
    build_relations(store, profile)
    yield store
    store.close()


@pytest.fixture(scope="module")
def git_kb(tmp_path_factory: pytest.TempPathFactory):
    store, _repo, _shas = five_cases_kb(tmp_path_factory.mktemp("golden-git"))
    yield store
    store.close()


@pytest.mark.parametrize(("number", "lang", "fmt"), CASES)
def test_golden(request, number, lang, fmt):
    which = "bundled_kb" if number in BUNDLED else "git_kb" if number in GIT_CASES else "kb"
    got = render_report(request.getfixturevalue(which), number, lang=lang, fmt=fmt)
    path = GOLDEN / f"pr-{number}.{lang}.{fmt}"
    if os.environ.get("PRKB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with PRKB_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


def test_golden_facts(kb):
    """The golden files say what the synthetic facts imply (not only 'same as before')."""
    en = render_report(kb, 101, lang="en", fmt="md")
    assert "files under `tests/` changed: `tests/v1/test_xpu.py`" in en
    assert "A correctness fix that changes tests in the same PR: merge it." in en
    # two topics: rev-b's question nobody answered, and rev-a's approval quoted
    assert "Conversation opened by @rev-b (1 comments)." in en
    assert "unanswered: nobody else replied." in en
    assert "approved; no reviewer's last verdict requests changes." in en
    assert "> LGTM, the test covers it." in en and "> Does this slow down decode" in en
    assert "hidden note" not in en
    assert "#100" in en and "unclassified mentions" in en
    other = render_report(kb, 102, lang="en", fmt="md")
    assert "The knowledge base holds no description for this PR." in other
    assert "Unknown: the knowledge base holds no review, comment or line comment" in other
    assert "`FlashInferMetadataBuilder` (declared `ALWAYS`): unknown, not checked" in other
    assert "the consistency audit has not checked this PR" in other
    assert "State: open" in other
