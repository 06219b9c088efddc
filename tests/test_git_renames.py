"""Declaration changes in commits that rename a file (issue #33): a class removed in the commit
that renamed its file lived at the old path, a class added there lives at the new path, and a
class that went along with the file is a move (its value changed on the way: a change at the
new path that names the old one). The collector's records, their state changes, the symbol
timeline, the report, ``prkb check`` and a GitHub record's reading agree."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from githistory import UTILS, base
from gitrepo import GitRepoBuilder, git

from prkb.check import run_check
from prkb.collect.git import collect_git
from prkb.graph.query import class_timeline
from prkb.profile import load_profile
from prkb.store import Store

D = "vllm/v1/attention/backends/"
OLD, MID, NEW, LAST = (f"{D}old_attn.py", f"{D}mid_attn.py", f"{D}new_attn.py",
                       f"{D}last_attn.py")
E = "AttentionCGSupport"
HEAD = f"""\"\"\"A backend renamed three times; its helpers keep git's rename detection.\"\"\"

from vllm.v1.attention.backends.utils import {E}, AttentionMetadataBuilder


def helper_one(x):
    return x + 1


def helper_two(x):
    return x * 2


def helper_three(x, y):
    total = 0
    for i in range(x):
        total += i * y
    return total
"""


def foo(level: str = "UNIFORM_BATCH") -> str:
    return (f"\n\nclass FooMetadataBuilder(AttentionMetadataBuilder):\n"
            f"    _cudagraph_support = {E}.{level}\n\n"
            "    @classmethod\n"
            "    def get_cudagraph_support(cls, config):\n"
            f"        return {E}.NEVER if config.x else cls._cudagraph_support\n")


def bar(level: str = "UNIFORM_SINGLE_TOKEN_DECODE") -> str:
    return (f"\n\nclass BarMetadataBuilder(AttentionMetadataBuilder):\n"
            f"    _cudagraph_support = {E}.{level}\n")


def baz() -> str:
    return (f"\n\nclass BazMetadataBuilder(AttentionMetadataBuilder):\n"
            f"    _cudagraph_support = {E}.ALWAYS\n")


def build(root: Path) -> GitRepoBuilder:
    r = GitRepoBuilder.init(root)
    r.commit({UTILS: base("_cudagraph_support"), OLD: HEAD + foo() + bar()},
             "[Feature] two builders (#1)")
    # renamed, and Foo dropped in the same commit
    r.commit({OLD: None, MID: HEAD + bar()}, "[Refactor] rename the module, drop Foo (#2)")
    # renamed, and Baz added in the same commit
    r.commit({MID: None, NEW: HEAD + bar() + baz()}, "[Feature] rename, add Baz (#3)")
    # renamed, and Bar raised in the same commit
    r.commit({NEW: None, LAST: HEAD + bar("UNIFORM_BATCH") + baz()},
             "[Perf] rename, raise Bar (#4)")
    return r


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepoBuilder:
    r = build(tmp_path_factory.mktemp("renames") / "src")
    for rev, old, new in (("HEAD~2", OLD, MID), ("HEAD~1", MID, NEW), ("HEAD", NEW, LAST)):
        status = git(r.path, "diff-tree", "-r", "-M", "--name-status", f"{rev}~1", rev)
        assert f"\t{old}\t{new}" in status and status.startswith("R"), status  # git sees it
    return r


@pytest.fixture(scope="module")
def store(repo: GitRepoBuilder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    warnings: list[str] = []
    with Store(tmp_path_factory.mktemp("kb") / "kb.sqlite") as st:
        collect_git(st, str(repo.path), load_profile(), quiet=True, warn=warnings.append)
        assert warnings == []
        yield st


def changes(store: Store, ref: str) -> list[tuple[str, str, str, str | None, str | None, str,
                                                   str | None]]:
    return sorted(
        (c["file"], c["class"], c["attr"], c["before"], c["after"], c["direction"],
         c["before_file"])
        for c in store.pr_facts(ref)["symbol_changes"]
    )


def states(store: Store, ref: str) -> list[tuple[str, str, str | None, str | None, str | None]]:
    return sorted(
        (s["file"], s["class"], s["before"], s["after"], s.get("previous_file"))
        for s in store.pr_facts(ref)["state_changes"] or []
        if s["class"] != "AttentionMetadataBuilder"
    )


DYN = "NEVER if config.x; else cls._cudagraph_support"
DYN_LEVELS = "NEVER if config.x; else UNIFORM_BATCH"


def test_a_class_removed_in_a_rename_commit_is_removed_where_it_lived(store: Store) -> None:
    assert changes(store, "2") == [
        (MID, "BarMetadataBuilder", "_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
         "UNIFORM_SINGLE_TOKEN_DECODE", "moved", OLD),
        (OLD, "FooMetadataBuilder", "_cudagraph_support", "UNIFORM_BATCH", None, "removed",
         None),
        (OLD, "FooMetadataBuilder", "get_cudagraph_support", DYN, None, "dynamic-removed",
         None),
    ]
    # the state model: Foo leaves the old path; Bar only moved (no value changed)
    assert states(store, "2") == [(OLD, "FooMetadataBuilder", f"dynamic: {DYN_LEVELS}", None,
                                   None)]


def test_a_class_added_in_a_rename_commit_lives_at_the_new_path(store: Store) -> None:
    assert changes(store, "3") == [
        (NEW, "BarMetadataBuilder", "_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
         "UNIFORM_SINGLE_TOKEN_DECODE", "moved", MID),
        (NEW, "BazMetadataBuilder", "_cudagraph_support", None, "ALWAYS", "added", None),
    ]
    assert states(store, "3") == [(NEW, "BazMetadataBuilder", None, "ALWAYS", None)]


def test_a_value_changed_in_a_rename_commit_names_the_old_path(store: Store) -> None:
    assert changes(store, "4") == [
        (LAST, "BarMetadataBuilder", "_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
         "UNIFORM_BATCH", "raised", NEW),
        (LAST, "BazMetadataBuilder", "_cudagraph_support", "ALWAYS", "ALWAYS", "moved", NEW),
    ]
    assert states(store, "4") == [
        (LAST, "BarMetadataBuilder", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", NEW)]


def test_the_timeline_follows_the_class_through_the_renames(store: Store) -> None:
    profile = load_profile()
    foo_tl = class_timeline(store, profile, "FooMetadataBuilder")
    assert foo_tl["declared_now_by_file"] == {OLD: None}  # removed where it lived
    assert foo_tl["declared_now"] is None
    bar_tl = class_timeline(store, profile, "BarMetadataBuilder")
    # one builder: the old paths are left behind, the raise is the last word
    assert bar_tl["declared_now_by_file"] == {LAST: "UNIFORM_BATCH"}
    assert bar_tl["declared_now"] == "UNIFORM_BATCH"


@pytest.mark.parametrize(("step", "want"), [
    (1, [(MID, "BarMetadataBuilder", "_cudagraph_support", "moved", OLD),
         (OLD, "FooMetadataBuilder", "_cudagraph_support", "removed", None),
         (OLD, "FooMetadataBuilder", "get_cudagraph_support", "dynamic-removed", None)]),
    (2, [(NEW, "BarMetadataBuilder", "_cudagraph_support", "moved", MID),
         (NEW, "BazMetadataBuilder", "_cudagraph_support", "added", None)]),
    (3, [(LAST, "BarMetadataBuilder", "_cudagraph_support", "raised", NEW),
         (LAST, "BazMetadataBuilder", "_cudagraph_support", "moved", NEW)]),
])
def test_check_reads_a_rename_commit_the_same_way(
    repo: GitRepoBuilder, step: int, want: list[tuple[str, ...]]
) -> None:
    """``prkb check`` (base against head) on each rename commit: the collector's reading."""
    res = run_check(str(repo.path), repo.shas[step - 1], repo.shas[step], load_profile())
    assert sorted((c.file, c.class_name, c.attr, c.direction, c.before_file)
                  for c in res.changes) == want


def test_the_raise_after_the_renames_points_to_the_pr_that_set_the_value(store: Store) -> None:
    """Bar's chain goes along with its file through two moves and the raise in the third
    rename: the raise modifies the declaration #1 set (not a new builder's first change)."""
    rels = {(r["type"], r["direction"], r["other"]) for r in store.pr_facts("4")["relations"]}
    assert ("modifies-declaration-of", "out", 1) in rels


def github_file(repo: GitRepoBuilder, step: int, old: str, new: str) -> dict[str, object]:
    """The renamed file of commit ``step`` as GitHub lists a PR's file (hunks only)."""
    diff = git(repo.path, "diff", "-M", repo.shas[step - 1], repo.shas[step], "--", old, new)
    patch = diff[diff.index("\n@@") + 1:]
    return {"filename": new, "status": "renamed", "previous_filename": old, "patch": patch,
            "additions": 1, "deletions": 1}


WANT_GITHUB = {
    1: [(OLD, "FooMetadataBuilder", "_cudagraph_support", "removed", None),
        (OLD, "FooMetadataBuilder", "get_cudagraph_support", "dynamic-removed", None)],
    2: [(NEW, "BazMetadataBuilder", "_cudagraph_support", "added", None)],
    3: [(LAST, "BarMetadataBuilder", "_cudagraph_support", "raised", NEW)],
}


@pytest.mark.parametrize("whole", [True, False], ids=["whole-files", "patch-only"])
@pytest.mark.parametrize(("step", "old", "new"), [(1, OLD, MID), (2, MID, NEW), (3, NEW, LAST)])
def test_a_github_record_of_a_rename_reads_the_same_way(
    repo: GitRepoBuilder, step: int, old: str, new: str, whole: bool
) -> None:
    """A GitHub PR's renamed file, read from the whole files at base and head or from its
    patch alone: a removed class at the previous path, an added one and a raise at the new
    (a class that only went along with the file is no change there)."""
    from prkb.ingest import symbol_changes_for

    rec = {"files": [github_file(repo, step, old, new)]}
    contents = {new: (git(repo.path, "show", f"{repo.shas[step - 1]}:{old}"),
                      git(repo.path, "show", f"{repo.shas[step]}:{new}"))} if whole else None
    got, _findings, notes = symbol_changes_for(rec, load_profile(), contents)
    assert notes == []
    assert sorted((c.file, c.class_name, c.attr, c.direction, c.before_file)
                  for c in got) == WANT_GITHUB[step]


def test_the_report_does_not_call_the_renamed_files_old_path_untouched(store: Store) -> None:
    """The effective state of the class removed with the rename is at the old path, which
    the PR changed (it renamed it): not a builder "in a file this PR did not change"."""
    from prkb.render.report import render_report

    text = render_report(store, "2", lang="en", fmt="md", profile=load_profile())
    row = next(ln for ln in text.splitlines() if "`FooMetadataBuilder` in " in ln)
    assert f"`{OLD}`" in row and "no builder" in row
    assert "did not change" not in row
    (pr_id,) = store.conn.execute("SELECT id FROM prs WHERE ref = '2'").fetchone()
    # what the digest's effective changes read
    assert store.paths_of([pr_id]) == {pr_id: {OLD, MID}}


def test_a_class_moved_out_of_a_renamed_file_comes_from_the_old_path(tmp_path: Path) -> None:
    """Foo leaves the file the commit renames for a module of its own, value unchanged: one
    move from the path where it lived (not from the renamed file's new path)."""
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({UTILS: base("_cudagraph_support"), OLD: HEAD + foo() + bar()},
             "[Feature] two builders (#1)")
    own = f"{D}foo_attn.py"
    r.commit({OLD: None, MID: HEAD + bar(),
              own: f"from vllm.v1.attention.backends.utils import {E}, "
                   "AttentionMetadataBuilder\n" + foo()},
             "[Refactor] Foo in its own module (#2)")
    warnings: list[str] = []
    with Store(tmp_path / "kb.sqlite") as st:
        collect_git(st, str(r.path), load_profile(), quiet=True, warn=warnings.append)
        got = changes(st, "2")
    assert warnings == []
    assert got == [
        (own, "FooMetadataBuilder", "_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_BATCH",
         "moved", OLD),
        (own, "FooMetadataBuilder", "get_cudagraph_support", DYN, DYN, "moved", OLD),
        (MID, "BarMetadataBuilder", "_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE",
         "UNIFORM_SINGLE_TOKEN_DECODE", "moved", OLD),
    ]


def test_the_lines_a_rename_commit_changed_are_blamed_on_the_pr_that_wrote_them(
    repo: GitRepoBuilder, store: Store
) -> None:
    """The patch of a renamed file is git's rename diff (not the whole file added): Foo's
    removed declaration (#2) and Bar's raised one (#4) are blamed on #1, as without a rename;
    a pure move blames nothing."""
    def lineage(ref: str) -> list[tuple[str, str, bool, str]]:
        (raw,) = store.conn.execute("SELECT raw FROM prs WHERE ref = ?", (ref,)).fetchone()
        return sorted((r["file"], r["commit"], r["decl"], r["kind"])
                      for r in json.loads(raw)["prkb"]["lineage"])

    assert lineage("2") == [(OLD, repo.shas[0], True, "semantic")]
    assert lineage("3") == []
    assert lineage("4") == [(NEW, repo.shas[0], True, "semantic")]
    files = {f["path"]: f for f in store.pr_facts("2")["files"]}
    assert files[MID]["previous_path"] == OLD
