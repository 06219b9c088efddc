"""The site identifies a builder by its file and class: two classes of one name in two files
(a V0 and a V1 builder) are two builder pages, two matrix rows, and every link goes to the
right one."""

from __future__ import annotations

import re
from pathlib import Path

from sitekb import plain_record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.site.build import build_site
from prkb.site.gather import gather
from prkb.store import Store

PROFILE = load_profile(None)
V0 = "vllm/attention/backends/x_attn.py"
V1 = "vllm/v1/attention/backends/x_attn.py"
CLS = "XMetadataBuilder"


def v1_record() -> dict:
    rec = plain_record(91001, "X v1 raised", "2025-02-01T00:00:00Z", "UNIFORM_BATCH", CLS,
                       path=V1)
    rec["prkb"]["findings"] = [{"rule": "cg-uniform-without-spec-decode", "file": V1,
                                "class": CLS, "message_en": "v1 finding",
                                "message_zh": "v1 发现"}]
    return rec


def v0_record() -> dict:
    # merged after the v1 finding: it changes the V0 class, not the builder of the finding
    return plain_record(91002, "X v0 declared", "2025-03-01T00:00:00Z", "NEVER", CLS, path=V0)


def pages_of(site: Path, lang: str) -> dict[str, str]:
    """Builder page file name -> its text, for the pages of CLS."""
    return {p.name: p.read_text() for p in (site / lang / "builder").glob(f"{CLS}*.html")}


def the_page(pages: dict[str, str], file: str) -> str:
    names = [n for n, text in pages.items() if f"<code>{file}</code>" in text]
    assert len(names) == 1, (file, sorted(pages))
    return names[0]


def test_same_named_builders_of_two_files_are_two_pages_and_rows(tmp_path: Path) -> None:
    site = tmp_path / "site"
    with Store(tmp_path / "kb.sqlite") as store:
        ingest(store, v1_record(), PROFILE)
        ingest(store, v0_record(), PROFILE)
        build_site(store, site, PROFILE, search=False)
    for lang in ("en", "zh"):
        pages = pages_of(site, lang)
        assert len(pages) == 2, sorted(pages)
        v0, v1 = the_page(pages, V0), the_page(pages, V1)
        assert v0 != v1
        assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.html", n) for n in pages)
        # each page: its own level now, its own PR only
        now = re.compile(r"<dd><span class=\"badge [^\"]*\" title=\"([A-Z_]+)\"")
        assert now.findall(pages[v1])[:1] == ["UNIFORM_BATCH"]
        assert now.findall(pages[v0])[:1] == ["NEVER"]
        assert "pr/91001.html" in pages[v1] and "pr/91002.html" not in pages[v1]
        assert "pr/91002.html" in pages[v0] and "pr/91001.html" not in pages[v0]
        # a PR page links to the builder of its own file, and shows that builder's level now
        pr1 = (site / lang / "pr" / "91001.html").read_text()
        pr0 = (site / lang / "pr" / "91002.html").read_text()
        assert f"builder/{v1}" in pr1 and f"builder/{v0}" not in pr1
        assert f"builder/{v0}" in pr0 and f"builder/{v1}" not in pr0
        changes = pr1.split("</tbody>", 1)[0]
        assert 'title="UNIFORM_BATCH"' in changes and 'title="NEVER"' not in changes
        # the matrix: two rows, one per page
        matrix = (site / lang / "matrix.html").read_text()
        rows = matrix.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
        assert rows.count(f"builder/{v0}") == 1 and rows.count(f"builder/{v1}") == 1
        # the audit: the finding's builder is the V1 one, and a later change of the V0
        # class does not count as a change of it
        audit = (site / lang / "audit.html").read_text()
        assert f"builder/{v1}" in audit and f"builder/{v0}" not in audit
        assert "st-open" in audit and "pr/91002.html" not in audit


def test_a_builder_slug_is_stable_when_a_same_named_class_appears(tmp_path: Path) -> None:
    """The page of a builder keeps its name in a later build where a class of the same name
    in another file has appeared (links to it from outside keep working)."""
    with Store(tmp_path / "kb.sqlite") as store:
        ingest(store, v1_record(), PROFILE)
        before = {(b["file"], b["class"]): b["slug"]
                  for b in gather(store, PROFILE).builders.values()}
        ingest(store, v0_record(), PROFILE)
        after = {(b["file"], b["class"]): b["slug"]
                 for b in gather(store, PROFILE).builders.values()}
    assert before[(V1, CLS)] == after[(V1, CLS)]
    assert after[(V0, CLS)] != after[(V1, CLS)]


def test_an_override_s_report_is_the_level_in_force_on_real_history(bundled):
    """vLLM at #38076 (the fork's main has the same class): DeepseekV32IndexerMetadataBuilder
    declares no attribute (it inherits NEVER) and its get_cudagraph_support returns
    UNIFORM_BATCH; FlashInferMetadataBuilder's override returns UNIFORM_BATCH or
    UNIFORM_SINGLE_TOKEN_DECODE by has_trtllm_support (read with git show in the fork). The
    site shows what the override reports, as `prkb matrix` does, not the attribute."""
    from prkb.profile import load_profile
    from prkb.site.gather import gather

    data = gather(bundled, load_profile())
    now = {(b["class"], b["file"]): b["current"] for b in data.builders.values()}
    indexer = now[("DeepseekV32IndexerMetadataBuilder",
                   "vllm/v1/attention/backends/mla/indexer.py")]
    assert (indexer["value"], indexer["level"], indexer["dynamic"]) == (
        "UNIFORM_BATCH", "UNIFORM_BATCH", True)
    fi = now[("FlashInferMetadataBuilder", "vllm/v1/attention/backends/flashinfer.py")]
    assert fi["dynamic"] and fi["level"] is None
    assert fi["value"] == ("UNIFORM_BATCH when has_trtllm_support; "
                           "UNIFORM_SINGLE_TOKEN_DECODE when not has_trtllm_support")


def test_class_pages_live_in_the_folder_the_profile_names_them_by(tmp_path: Path) -> None:
    """A profile whose classes are backends ([wording] holder) gets backend/ pages, and every
    link to a class page goes there; none is left under builder/."""
    from gitrepo import kv_backend_history

    from prkb.collect.git import collect_git
    from prkb.site.page import holder_dir

    kv = load_profile("vllm-kv-update-in-forward")
    assert holder_dir(kv) == "backend" and holder_dir(PROFILE) == "builder"
    repo = kv_backend_history(tmp_path / "src")
    with Store(tmp_path / "kb.sqlite") as store:
        collect_git(store, str(repo.path), kv, quiet=True, warn=lambda m: None)
        build_site(store, tmp_path / "site", kv, search=False)
    site = tmp_path / "site"
    for lang in ("en", "zh"):
        pages = sorted(p.name for p in (site / lang / "backend").glob("*.html"))
        assert pages and all(p.startswith("XAttnBackend") for p in pages)
        assert not (site / lang / "builder").exists()
        html = "".join(p.read_text() for p in (site / lang).rglob("*.html"))
        assert f'backend/{pages[0]}' in html and "builder/" not in html
