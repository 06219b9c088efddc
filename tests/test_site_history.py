"""The site's per-builder history from declaration changes (no audit rows for the class)."""

from __future__ import annotations

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site.gather import builder_histories, builder_slug, gather
from prkb.store import Store


def rec(number: int, when: str, changes: list[dict[str, object]]) -> dict[str, object]:
    return {
        "number": number,
        "title": f"change {number}",
        "state": "merged",
        "merged_at": when,
        "files": [{"filename": c["file"], "status": "modified"} for c in changes],
        "source": "git",
        "merge_commit_sha": f"{number:040x}",
        "prkb": {"symbol_changes": changes},
    }


def test_declaration_moved_between_files_is_two_builders(tmp_path):
    """A builder is its file and class: a declaration moved to another file is a builder in
    the new file with the value, and the one in the old file shows the removal."""
    profile = load_profile()
    store = Store(tmp_path / "kb.sqlite")
    old, new = "vllm/v1/attention/backends/utils.py", "vllm/v1/attention/backend.py"
    ingest(store, rec(1, "2026-01-01T00:00:00Z", [
        {"file": old, "class": "Base", "attr": "_cudagraph_support", "before": None,
         "after": "NEVER", "direction": "added"},
    ]), profile)
    # the move: added in the new file, then removed from the old one (file order)
    ingest(store, rec(2, "2026-02-01T00:00:00Z", [
        {"file": new, "class": "Base", "attr": "_cudagraph_support", "before": None,
         "after": "NEVER", "direction": "added"},
        {"file": old, "class": "Base", "attr": "_cudagraph_support", "before": "NEVER",
         "after": None, "direction": "removed"},
    ]), profile)
    ingest(store, rec(3, "2026-03-01T00:00:00Z", [
        {"file": new, "class": "Gone", "attr": "_cudagraph_support", "before": "ALWAYS",
         "after": None, "direction": "removed"},
    ]), profile)
    hist = builder_histories(gather(store, profile), profile)
    assert hist[builder_slug(new, "Base")]["current"]["value"] == "NEVER"
    assert [r["value"] for r in hist[builder_slug(old, "Base")]["runs"]] == ["NEVER", None]
    assert hist[builder_slug(new, "Gone")]["current"]["value"] is None  # removed


def test_declaration_merged_after_the_mined_history_moves_the_reading(tmp_path):
    profile = load_profile()
    store = Store(tmp_path / "kb.sqlite")
    mined = rec(10, "2026-05-01T00:00:00Z", [
        {"file": "m.py", "class": "Tri", "attr": "_cudagraph_support", "before": None,
         "after": "UNIFORM_BATCH", "direction": "added"},
    ])
    mined["prkb"]["builder_levels"] = [  # type: ignore[index]
        {"class": "Tri", "file": "m.py", "declared": "UNIFORM_BATCH",
         "effective": "UNIFORM_BATCH", "dynamic": False, "spec_ready": False},
    ]
    ingest(store, mined, profile)
    curated = rec(11, "2026-07-09T00:00:00Z", [
        {"file": "m.py", "class": "Tri", "attr": "_cudagraph_support",
         "before": "UNIFORM_BATCH", "after": "UNIFORM_SINGLE_TOKEN_DECODE",
         "direction": "lowered"},
    ])
    curated["source"] = "curated"
    ingest(store, curated, profile)
    hist = builder_histories(gather(store, profile), profile)
    assert [r["value"] for r in hist[builder_slug("m.py", "Tri")]["runs"]] == [
        "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE"
    ]


def test_the_repository_site_folder_with_its_readme_is_built_into(tmp_path):
    """``prkb site build`` with the default ``-o site`` in a checkout: the tracked
    site/README.md is accepted and kept across builds."""
    from prkb.site.build import build_site

    profile = load_profile()
    store = Store(tmp_path / "kb.sqlite")
    ingest(store, rec(1, "2026-01-05T00:00:00Z", [
        {"file": "m.py", "class": "A", "attr": "_cudagraph_support", "before": None,
         "after": "ALWAYS", "direction": "added"},
    ]), profile)
    out = tmp_path / "site"
    out.mkdir()
    (out / "README.md").write_text("placeholder\n", encoding="utf-8")
    for _ in range(2):
        build_site(store, out, profile, search=False)
        assert (out / "README.md").read_text(encoding="utf-8") == "placeholder\n"
        assert (out / "en" / "index.html").exists()
