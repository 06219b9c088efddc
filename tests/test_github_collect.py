"""The GitHub collector against a fake GitHub REST API on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ghserver import FIXTURE_KEPT, FakeGitHub, FakeRepo, Fault, file_entry, fixture_repo, make_pr

from prkb.collect.github import GithubStats, collect_github
from prkb.collect.snapshot import export_records
from prkb.errors import InputError, PrkbError
from prkb.profile import load_profile
from prkb.store import Store

REPO = "vllm-project/vllm"
TOKEN = "ghp_" + "T3st" * 9


@pytest.fixture()
def server() -> Iterator[FakeGitHub]:
    with FakeGitHub(fixture_repo(), token=TOKEN) as srv:
        yield srv


def run(store: Store, srv: FakeGitHub, **kw: object) -> GithubStats:
    return collect_github(store, REPO, load_profile(), token=TOKEN, api_url=srv.url, **kw)  # type: ignore[arg-type]


def export(store: Store) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in export_records(store)]


def record(store: Store, number: int) -> dict[str, Any]:
    row = store.pr_row(number)
    assert row is not None
    return store.raw_record(row)


def kept_numbers(store: Store) -> set[int]:
    return {r[0] for r in store.conn.execute("SELECT number FROM prs")}


def test_first_run_keeps_family_prs_with_discussion(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        stats = run(store, server)
        assert stats.complete and stats.examined == len(server.repo.prs)
        assert kept_numbers(store) == FIXTURE_KEPT
        assert stats.kept == stats.new == len(FIXTURE_KEPT)

        rec = record(store, 101)
        assert rec["source"] == "github" and rec["state"] == "merged"
        assert rec["user"] == {"login": "rocm-dev"}
        assert [lab["name"] for lab in rec["labels"]] == ["rocm", "ready"]
        assert "Follow-up to #99" in rec["body"]
        assert len(rec["comments"]) == 130  # two pages of conversation comments
        assert [r["state"] for r in rec["reviews"]] == ["CHANGES_REQUESTED", "APPROVED"]
        assert rec["reviews"][1]["user"] is None
        rc = rec["review_comments"][0]
        assert rc["path"].endswith("rocm_aiter_fa.py") and rc["diff_hunk"].startswith("@@")
        facts = store.pr_facts(101)
        assert [(c["class"], c["before"], c["after"], c["direction"])
                for c in facts["symbol_changes"]] == [
            ("AiterFlashAttentionMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE",
             "UNIFORM_BATCH", "raised")
        ]
        assert "rocm" in facts["platforms"]

        assert store.pr_facts(102)["author"] is None  # deleted account: user null
        assert store.pr_facts(102)["symbol_changes"][0]["direction"] == "renamed"

        # no patch from GitHub: read at base and head, analysed from whole files
        f103 = store.pr_facts(103)
        assert [(c["class"], c["after"]) for c in f103["symbol_changes"]] == [
            ("MLACommonMetadataBuilder", "UNIFORM_BATCH")
        ]
        # 103: base and head; 104: its base answers 404, so its head is not asked for
        assert server.count("/contents/") == 3
        # no patch and no contents: kept with a finding
        f104 = store.pr_facts(104)
        assert f104["state"] == "open"
        assert [f["rule"] for f in f104["findings"]] == ["patch-unavailable"]

        f108 = store.pr_facts(108)
        assert f108["symbol_changes"][0]["direction"] == "dynamic-added"


def test_request_budget_and_noop_rerun(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        stats = run(store, server)
        assert stats.requests == server.requests  # the collector counts what the server saw
        n = len(server.repo.prs)
        list_pages = server.count("/pulls", 200) - server.count("/pulls/", 200)
        assert list_pages == -(-n // 100)
        assert server.count("/files") == n  # one file-list request per examined PR
        per_kept = (server.requests - list_pages - n) / len(FIXTURE_KEPT)
        assert per_kept <= 4.0, per_kept
        assert server.requests <= 1.05 * n + 4 * len(FIXTURE_KEPT)
        assert all(r.authorized for r in server.log)

        left = server.remaining
        server.reset_counters()
        again = run(store, server)
        assert server.requests == again.requests == 1
        assert server.log[0].status == 304 and server.log[0].conditional
        assert server.remaining == left  # a 304 is free
        assert again.examined == 0 and again.complete


def test_second_run_asks_only_for_what_changed(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        run(store, server)
        before = export(store)
        server.touch(101, "2026-01-02T00:00:00Z", comment="Merged; see also #108.")
        server.touch(1005, "2026-01-01T00:00:00Z")
        server.reset_counters()
        stats = run(store, server)
        assert stats.examined == 2 and stats.kept == 1 and stats.updated == 1
        assert server.count("/pulls/105/") == 0 and server.count("/pulls/1006/") == 0
        # 101's files, reviews and review comments did not change: answered 304
        assert server.count("/pulls/101/files", 304) == 1
        assert server.count("/pulls/101/reviews", 304) == 1
        assert server.count("/pulls/101/comments", 304) == 1
        assert server.count("/issues/101/comments", 200) >= 1
        rec = record(store, 101)
        assert rec["comments"][-1]["body"] == "Merged; see also #108."
        after = export(store)
        assert len(after) == len(before) and after != before


def test_faults_are_retried_and_change_nothing(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "clean.sqlite") as store:
        run(store, server)
        clean = export(store)
    server.reset_counters()
    server.faults = [
        Fault("primary", "/pulls"),
        Fault("secondary", "/pulls/101/files"),
        Fault("502", "/pulls/103/files"),
        Fault("drop", "/issues/101/comments"),
        Fault("502", "/contents/"),
    ]
    t0 = time.monotonic()
    with Store(tmp_path / "faulty.sqlite") as store:
        stats = run(store, server)
        assert export(store) == clean
    assert not server.faults  # every fault was served
    assert time.monotonic() - t0 < 15
    assert stats.requests == server.requests  # retries are counted too
    assert server.count("", 403) == 2 and server.count("", 502) == 2 and server.count("", 0) == 1


def test_max_and_resume_and_since(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        first = run(store, server, max_prs=3)
        assert first.examined == 3 and not first.complete
        assert store.get_state("github", f"{REPO}@vllm-cudagraph", "hwm") is None
        rest = run(store, server)
        assert rest.complete and rest.skipped == 3
        assert first.examined + rest.examined == len(server.repo.prs)
        assert kept_numbers(store) == FIXTURE_KEPT
    with Store(tmp_path / "since.sqlite") as store:
        stats = run(store, server, since="2025-10-29")
        assert stats.complete
        got = kept_numbers(store)
        assert got == {n for n in FIXTURE_KEPT
                       if server.repo.prs[n]["updated_at"] >= "2025-10-29"}
        assert 101 not in got and got  # 101 is from 2025-10-28
        # a later run without --since goes further back
        run(store, server)
        assert kept_numbers(store) == FIXTURE_KEPT


def test_unauthenticated_and_bad_input(tmp_path: Path, server: FakeGitHub) -> None:
    with Store(tmp_path / "kb.sqlite") as store:
        stats = collect_github(store, REPO, load_profile(), token=None, api_url=server.url,
                               max_prs=2)
        assert not stats.authenticated
        assert not any(r.authorized for r in server.log)
        assert stats.rate_left is not None and stats.rate_left <= 60
        with pytest.raises(InputError, match="OWNER/REPO"):
            collect_github(store, "not a repo", load_profile(), token=None, api_url=server.url)
        with pytest.raises(InputError, match="YYYY-MM-DD"):
            run(store, server, since="last week")
        with pytest.raises(PrkbError, match="404"):
            collect_github(store, "someone/else", load_profile(), token=TOKEN,
                           api_url=server.url)


# --- the one line matcher: a value changed on a declaration's continuation line ------------

TOY = "vllm/v1/attention/backends/toy_graph.py"
DEEP = "vllm/v1/attention/backends/deep_graph.py"

# (a) only the continuation line of a parenthesised declaration changes; the hunk's context
# shows the declaration's first line, as GitHub's three lines of context do
CONTINUATION = (
    "@@ -52,7 +52,7 @@ class ToyGraphMetadataBuilder(AttentionMetadataBuilder):\n"
    "     reorder_batch_threshold: int = 1\n"
    " \n"
    "     _cudagraph_support = (\n"
    "-        AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    "+        AttentionCGSupport.UNIFORM_BATCH\n"
    "     )\n"
    " \n"
    "     def __init__(self, spec, layers, config, device):\n"
)
# (b) an unrelated line of the same file; the level stands on unchanged context lines only
UNRELATED = (
    "@@ -54,6 +54,7 @@ class ToyGraphMetadataBuilder(AttentionMetadataBuilder):\n"
    "     _cudagraph_support = (\n"
    "         AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    "     )\n"
    "+    # graphs are captured once per layer group\n"
    " \n"
    "     def __init__(self, spec, layers, config, device):\n"
)
# (c) longer identifiers that contain a family spelling or the method's name
LONGER = (
    "@@ -80,6 +80,7 @@ class ToyGraphMetadataBuilder(AttentionMetadataBuilder):\n"
    "     def build(self, common_prefix_len, common_attn_metadata):\n"
    "-        self.attn_cudagraph_support_extra = None\n"
    "+        self.attn_cudagraph_support_extra = {}\n"
    "+        get_cudagraph_support_cached = MyAttentionCGSupport.NEVER\n"
    "         return None\n"
)
# (d) and (e): the changed line is too far below the declaration's first line for the hunk
# to show it, so the patch cannot tell which declaration changed
DEEP_HUNK = (
    "@@ -62,7 +62,7 @@ class DeepGraphMetadataBuilder(AttentionMetadataBuilder):\n"
    "         if use_fast_path\n"
    "         else AttentionCGSupport.UNIFORM_BATCH\n"
    "         if use_spec_path\n"
    "-        else AttentionCGSupport.NEVER\n"
    "+        else AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
    "     )\n"
    " \n"
    "     def __init__(self, spec, layers, config, device):\n"
)


def _deep_source(last: str) -> str:
    return "\n".join([
        "from vllm.v1.attention.backend import AttentionCGSupport, AttentionMetadataBuilder",
        "",
        "use_fast_path = use_spec_path = False",
        "",
        "",
        "class DeepGraphMetadataBuilder(AttentionMetadataBuilder):",
        "    _cudagraph_support = (",
        "        AttentionCGSupport.ALWAYS",
        "        if use_fast_path",
        "        else AttentionCGSupport.UNIFORM_BATCH",
        "        if use_spec_path",
        f"        else AttentionCGSupport.{last}",
        "    )",
        "",
        "    def __init__(self, spec, layers, config, device):",
        "        self.spec = spec",
        "",
    ])


def continuation_repo() -> FakeRepo:
    repo = FakeRepo()
    repo.prs[201] = make_pr(201, "[Perf] Toy builder: uniform batch graphs",
                            [file_entry(TOY, CONTINUATION)], day=400)
    repo.prs[202] = make_pr(202, "[Misc] Toy builder: a comment",
                            [file_entry(TOY, UNRELATED)], day=401)
    repo.prs[203] = make_pr(203, "[Misc] Toy builder: cache field",
                            [file_entry(TOY, LONGER)], day=402)
    repo.prs[204] = make_pr(204, "[Bugfix] Deep builder: single-token graphs when neither path",
                            [file_entry(DEEP, DEEP_HUNK)], day=403)
    repo.prs[205] = make_pr(205, "[Bugfix] Deep builder again, files not readable",
                            [file_entry(DEEP, DEEP_HUNK)], day=404)
    pr204 = repo.prs[204]
    repo.contents[(pr204["base"]["sha"], DEEP)] = _deep_source("NEVER")
    repo.contents[(pr204["head"]["sha"], DEEP)] = _deep_source("UNIFORM_SINGLE_TOKEN_DECODE")
    return repo


def _not_collected_sentence() -> str:
    """The report's sentence for code rebuilt because the patch was not collected, as the
    template words it (read from the template, so a rewording does not void this test)."""
    from prkb.paths import templates_dir

    text = (templates_dir() / "report" / "sections" / "key_code.j2").read_text(encoding="utf-8")
    found = re.findall(r'_\("([^"]*patch was not collected[^"]*)"\)', text)
    assert len(found) == 1, found
    return found[0]


def test_continuation_line_change_is_kept_read_and_shown(tmp_path: Path) -> None:
    from prkb.render.report import render_report

    with FakeGitHub(continuation_repo(), token=TOKEN) as srv, \
            Store(tmp_path / "kb.sqlite") as store:
        stats = run(store, srv)
        assert stats.complete and stats.examined == 5
        # (a) kept, (b) an unrelated line and (c) longer identifiers are not
        assert kept_numbers(store) == {201, 204, 205}

        # (a) the patch tells the change: no file is read
        facts = store.pr_facts(201)
        assert [(c["file"], c["class"], c["attr"], c["before"], c["after"], c["direction"])
                for c in facts["symbol_changes"]] == [
            (TOY, "ToyGraphMetadataBuilder", "_cudagraph_support",
             "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "raised")
        ]
        assert srv.count(f"/contents/{TOY}") == 0

        # (d) the patch cannot tell: the file is read at base and head, whole files tell
        (deep,) = store.pr_facts(204)["symbol_changes"]
        assert (deep["class"], deep["attr"], deep["direction"]) == (
            "DeepGraphMetadataBuilder", "_cudagraph_support", "changed")
        head = ("AttentionCGSupport.ALWAYS if use_fast_path else "
                "AttentionCGSupport.UNIFORM_BATCH if use_spec_path else AttentionCGSupport.")
        assert (deep["before"], deep["after"]) == (
            head + "NEVER", head + "UNIFORM_SINGLE_TOKEN_DECODE")
        # (e) neither the patch nor the files tell: kept with no change rather than a guess
        f205 = store.pr_facts(205)
        assert f205["symbol_changes"] == [] and f205["findings"] == []
        # 204: base and head; 205: its base answers 404, so its head is not asked for
        assert srv.count(f"/contents/{DEEP}") == 3

        md = render_report(store, 201, lang="en", fmt="md")
        # the key code is the class after the change, the continuation line marked as added;
        # the value it replaced is said by the change sentence
        assert re.search(r"\d+ \+ +AttentionCGSupport\.UNIFORM_BATCH", md)
        assert "from `UNIFORM_SINGLE_TOKEN_DECODE` to `UNIFORM_BATCH`" in md
        assert _not_collected_sentence() not in md
        # the same PR with its patch taken away does say it: the sentence is the right one
        rec = record(store, 201)
        rec["files"][0]["patch"] = None
        with store.transaction() as conn:
            conn.execute("UPDATE prs SET raw=? WHERE number=201", (json.dumps(rec),))
        bare = render_report(store, 201, lang="en", fmt="md")
        assert _not_collected_sentence() in bare
        assert "+        AttentionCGSupport.UNIFORM_BATCH" not in bare
