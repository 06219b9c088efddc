"""The code's effective state at both revisions of a PR (prkb/analyze/state.py), on real git
histories built here: what ``prkb show --json`` carries as ``state_changes``, and what the
report's facts say from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from githistory import RUNNER, UTILS, base
from gitrepo import GitRepoBuilder, git

from prkb.analyze.audit import audit_revision
from prkb.analyze.state import changes_json, state_changes
from prkb.collect.git import collect_git
from prkb.gitrepo import GitRepo
from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.render.report import render_report, report_context
from prkb.store import Store
from tests.report_helpers import add, decl_patch, record

BACKENDS = "vllm/v1/attention/backends"


def builder(
    cls: str,
    body: str,
    parent: str = "AttentionMetadataBuilder",
    module: str = "vllm.v1.attention.backends.utils",
) -> str:
    return (
        "from typing import ClassVar\n"
        f"from {module} import {parent}\n"
        "from vllm.v1.attention.backends.utils import AttentionCGSupport\n\n\n"
        f"class {cls}({parent}):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )


def level(attr: str, lv: str) -> str:
    return f"{attr}: ClassVar[AttentionCGSupport] = AttentionCGSupport.{lv}"


def collect(repo: Path, db: Path) -> Store:
    store = Store(db)
    collect_git(store, str(repo), load_profile(), quiet=True, warn=lambda m: None)
    return store


def effects(store: Store, ref: str) -> list[dict[str, Any]]:
    """The effects the English report's facts give every changed builder of PR ``ref``."""
    ctx = report_context(store, ref, "en")
    return [e for bl in ctx["risks"].builders for e in bl["effects"]]


def effect(store: Store, ref: str, reason: str) -> dict[str, Any]:
    return next(e for e in effects(store, ref) if e["reason"] == reason)


def sc(store: Store, ref: str) -> list[dict[str, Any]]:
    got = store.pr_facts(ref)["state_changes"]
    assert got is not None
    return got


def by(
    changes: list[dict[str, Any]], cls: str, value: str = "_cudagraph_support"
) -> dict[str, Any]:
    hits = [c for c in changes if c["class"] == cls and c["value"] == value]
    assert len(hits) == 1, changes
    return hits[0]


@pytest.fixture(scope="module")
def renamed_reading(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    """#1 two builders on ``attn_cudagraph_support``; #2 renames what the base declares (the
    spelling the code reads) and one builder, leaving ``XMetadataBuilder`` on the old spelling; #3
    restores it."""
    root = tmp_path_factory.mktemp("stale")
    r = GitRepoBuilder.init(root / "src")
    x, y = f"{BACKENDS}/x_attn.py", f"{BACKENDS}/y_attn.py"
    s = {
        "1": r.commit(
            {
                UTILS: base("attn_cudagraph_support"),
                x: builder("XMetadataBuilder", level("attn_cudagraph_support", "ALWAYS")),
                y: builder("YMetadataBuilder", level("attn_cudagraph_support", "UNIFORM_BATCH")),
            },
            "Builders (#1)",
        ),
        "2": r.commit(
            {
                UTILS: base("cudagraph_support"),
                y: builder("YMetadataBuilder", level("cudagraph_support", "UNIFORM_BATCH")),
            },
            "Rename the support attribute (#2)",
        ),
        "3": r.commit(
            {x: builder("XMetadataBuilder", level("cudagraph_support", "ALWAYS"))},
            "[Bugfix] XMetadataBuilder reads again (#3)",
        ),
    }
    return collect(r.path, root / "kb.sqlite"), s


def test_a_rename_of_what_the_code_reads_leaves_a_builder_stale(renamed_reading):
    store, _ = renamed_reading
    changes = sc(store, "2")
    x = by(changes, "XMetadataBuilder")
    assert (x["before"], x["before_source"]) == ("ALWAYS", "declared")
    assert (x["after"], x["after_source"]) == ("NEVER", "stale")
    assert x["after_stale"] == ["XMetadataBuilder.attn_cudagraph_support"]
    # YMetadataBuilder moved to the new spelling with the base: its effective level did not change
    assert not [c for c in changes if c["class"] == "YMetadataBuilder"]
    ctx = report_context(store, "2", "en")
    state = ctx["implementation"].state
    row = next(r for r in state["changes"] if r["class"] == "XMetadataBuilder")
    assert row["after"]["kind"] == "stale" and row["outside"]
    # XMetadataBuilder's file did not change: its users pay for the drop, nobody gains
    (drop,) = [e for e in effects(store, "2") if e["builder"] == "XMetadataBuilder"]
    assert (drop["reason"], drop["side"], drop["stale_attr"]) == (
        "left-stale",
        "pays",
        "attn_cudagraph_support",
    )
    assert (drop["before"], drop["after"]) == ("ALWAYS", "NEVER")
    fw, changed = ctx["implementation"].state["framework"]
    # the base's file is one of the profile's framework files: said as such
    assert (changed["kind"], changed["file"]) == ("file", UTILS)
    assert (fw["class"], fw["old"], fw["new"], fw["left"]) == (
        "AttentionMetadataBuilder",
        "attn_cudagraph_support",
        "cudagraph_support",
        ["XMetadataBuilder"],
    )
    assert fw["restored"] == [{"class": "XMetadataBuilder", "by": "#3"}]
    assert report_context(store, "3", "en")["implementation"].state["framework"] == []
    text = render_report(store, "2", lang="en", fmt="md")
    assert "**Framework change**" in text
    assert "#3 puts `XMetadataBuilder` back on the spelling the code reads." in text
    assert "left on a spelling the code no longer reads" in text
    assert "stale: it declares `attn_cudagraph_support`" in text


def test_the_restore_reads_as_a_raise_from_the_stale_level(renamed_reading):
    store, _ = renamed_reading
    x = by(sc(store, "3"), "XMetadataBuilder")
    assert (x["before"], x["before_source"], x["after"], x["after_source"]) == (
        "NEVER",
        "stale",
        "ALWAYS",
        "declared",
    )
    gain = effect(store, "3", "more-batches-captured")
    assert (gain["basis"], gain["before"], gain["after"]) == ("restored", "NEVER", "ALWAYS")
    assert not any(e["reason"] == "no-value-change" for e in effects(store, "3"))


def test_the_restore_fixes_the_pr_that_left_the_builder_stale(renamed_reading):
    """A relation read from the state changes: #3 puts XMetadataBuilder back on the spelling
    the code reads, which #2 left it off."""
    store, _ = renamed_reading
    rel = [r for r in store.pr_facts("3")["relations"] if r["type"] == "fixes-regression-from"]
    assert [(r["other"], r["direction"], r["origin"], r["confidence"]) for r in rel] == [
        (2, "out", "state", 1.0)
    ]
    (item,) = [it for it in rel[0]["evidence"] if it["kind"] == "stale-restored"]
    assert (item["class"], item["attr"], item["by"], item["pr"]) == (
        "XMetadataBuilder",
        "attn_cudagraph_support",
        "#2",
        "#3",
    )
    assert (item["level_before"], item["level_stale"], item["level_after"]) == (
        "ALWAYS",
        "NEVER",
        "ALWAYS",
    )
    for lang, words in (("en", "a spelling the code no longer read"), ("zh", "不再读取的拼写")):
        assert words in render_report(store, "3", lang=lang, fmt="md")
    # the PR that left it stale is not said to fix anything
    assert not [
        r
        for r in store.pr_facts("2")["relations"]
        if r["type"] == "fixes-regression-from" and r["direction"] == "out"
    ]


def test_state_changes_equal_two_independent_audits(renamed_reading, tmp_path):
    """One model: what the collector stored is the difference of ``matrix --rev`` at the
    parent and at the commit, each audited on its own tree listing."""
    store, shas = renamed_reading
    profile = load_profile()
    repo_path = Path(str(store.path)).parent / "src"
    with GitRepo(repo_path) as repo:
        for ref in ("2", "3"):
            before = audit_revision(repo, shas[ref] + "^", profile).builders
            after = audit_revision(repo, shas[ref], profile).builders
            want = changes_json(state_changes(before, after))
            key = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
            assert sorted(map(key, sc(store, ref))) == sorted(map(key, want))


def test_an_inherited_change_through_a_base_in_another_file(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    fam, sub = f"{BACKENDS}/fam/base_attn.py", f"{BACKENDS}/sub_attn.py"
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            fam: builder(
                "FamMetadataBuilder", level("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE")
            ),
            sub: builder(
                "SubMetadataBuilder",
                "pass",
                "FamMetadataBuilder",
                "vllm.v1.attention.backends.fam.base_attn",
            ),
        },
        "Family (#10)",
    )
    r.commit(
        {fam: builder("FamMetadataBuilder", level("_cudagraph_support", "UNIFORM_BATCH"))},
        "Raise the family (#11)",
    )
    store = collect(r.path, tmp_path / "kb.sqlite")
    s = by(sc(store, "11"), "SubMetadataBuilder")
    assert s["file"] == sub
    assert (s["before"], s["after"]) == ("UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH")
    assert s["before_source"] == s["after_source"] == "inherited:FamMetadataBuilder"
    assert s["after_origin_file"] == fam
    ctx = report_context(store, "11", "en")
    state = ctx["implementation"].state
    row = next(r for r in state["changes"] if r["class"] == "SubMetadataBuilder")
    assert row["outside"] and ctx["implementation"].state["outside"] == 1
    # the subclass's users gain too, and the report says where the level comes from
    gain = next(e for e in effects(store, "11") if e["builder"] == "SubMetadataBuilder")
    assert (gain["reason"], gain["basis"], gain["from_class"]) == (
        "more-batches-captured",
        "base-changed",
        "FamMetadataBuilder",
    )
    text = render_report(store, "11", lang="zh", fmt="md")
    assert "此 PR 未改动该文件" in text and "继承自" in text


def test_thresholds_as_written_init_augmented_helper_and_constant(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    a, b, c = (f"{BACKENDS}/{n}_attn.py" for n in ("a", "b", "c"))
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            a: builder("AMetadataBuilder", "reorder_batch_threshold: ClassVar[int] = 1"),
            b: builder(
                "BMetadataBuilder",
                "def __init__(self):\n    self.reorder_batch_threshold = 1\n"
                "    self.reorder_batch_threshold += min(self.num_spec_tokens, 1)",
            ),
            c: builder("CMetadataBuilder", "reorder_batch_threshold: ClassVar[int] = 512"),
        },
        "Thresholds (#20)",
    )
    r.commit(
        {
            a: builder(
                "AMetadataBuilder",
                "def __init__(self):\n"
                "    self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)",
            ),
            b: builder(
                "BMetadataBuilder",
                "def __init__(self):\n    self.reorder_batch_threshold = 1\n"
                "    if self.num_spec_tokens > 1:\n"
                "        raise ValueError('at most one speculative token')\n"
                "    self.reorder_batch_threshold += self.num_spec_tokens",
            ),
            c: builder(
                "CMetadataBuilder",
                "reorder_batch_threshold: ClassVar[int] = 128\n"
                + level("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE"),
            ),
        },
        "Thresholds again (#21)",
    )
    store = collect(r.path, tmp_path / "kb.sqlite")
    got = sc(store, "21")
    ta = by(got, "AMetadataBuilder", "reorder_batch_threshold")
    assert (ta["before"], ta["before_source"]) == ("1", "declared")
    assert ta["after"] == "_init_reorder_batch_threshold(1, supports_spec_as_decode=True)"
    assert ta["after_source"] == "init"
    tb = by(got, "BMetadataBuilder", "reorder_batch_threshold")
    assert tb["before"] == "1 + min(self.num_spec_tokens, 1)"
    assert tb["after"] == "1 + self.num_spec_tokens"
    assert tb["before_source"] == tb["after_source"] == "init"
    # the raise before the setting bounds it: said with the value
    assert tb["after_raises"] == ["ValueError when self.num_spec_tokens > 1"]
    assert "before_raises" not in tb
    text = render_report(store, "21", lang="en", fmt="md")
    assert "raises `ValueError` when `self.num_spec_tokens > 1`" in text
    # a constant threshold stays a constant: it does not "grow"
    assert (
        "Threshold mechanism: `CMetadataBuilder` declares `reorder_batch_threshold` = "
        "`128` in its class body. A constant: it does not change with the number of "
        "speculative tokens, and requests of up to 128 tokens count as decodes."
    ) in text
    tc = by(got, "CMetadataBuilder", "reorder_batch_threshold")
    assert (tc["before"], tc["after"], tc["after_source"]) == ("512", "128", "declared")
    # the thresholds of A and B changed, not their level
    assert [x["class"] for x in got if x["value"] == "_cudagraph_support"] == ["CMetadataBuilder"]


def test_an_override_and_a_new_builder(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    d = f"{BACKENDS}/d_attn.py"
    r.commit({UTILS: base("_cudagraph_support")}, "Base (#30)")
    r.commit(
        {d: builder("DMetadataBuilder", level("_cudagraph_support", "UNIFORM_BATCH"))},
        "New backend (#31)",
    )
    r.commit(
        {
            d: builder(
                "DMetadataBuilder",
                level("_cudagraph_support", "UNIFORM_BATCH") + "\n"
                "@classmethod\ndef get_cudagraph_support(cls, cfg):\n"
                "    if cfg.x:\n        return AttentionCGSupport.NEVER\n"
                "    return cls._cudagraph_support",
            )
        },
        "Decide at run time (#32)",
    )
    store = collect(r.path, tmp_path / "kb.sqlite")
    new = by(sc(store, "31"), "DMetadataBuilder")
    assert (new["before"], new["before_source"], new["after"]) == (None, None, "UNIFORM_BATCH")
    got = effects(store, "31")
    assert got[0]["reason"] == "new-builder"
    assert not any(e["reason"] == "more-batches-captured" for e in got)
    dyn = by(sc(store, "32"), "DMetadataBuilder")
    assert dyn["after_source"] == "method" and dyn["after"].startswith("dynamic: NEVER if cfg.x")


def test_a_pure_file_rename_changes_no_state(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    old, new = f"{BACKENDS}/e_attn.py", f"{BACKENDS}/e2_attn.py"
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            old: builder("EMetadataBuilder", level("_cudagraph_support", "ALWAYS")),
        },
        "E (#40)",
    )
    git(r.path, "mv", old, new)
    r.commit(None, "Rename e_attn to e2_attn (#41)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    assert sc(store, "41") == []
    text = render_report(store, "41", lang="en", fmt="md")
    assert "the effective value of no builder changed" in text
    assert "raised" not in text.split("## Risks")[1].split("## Related")[0].lower()


def test_an_added_declaration_is_measured_against_the_inherited_level(tmp_path):
    r = GitRepoBuilder.init(tmp_path / "src")
    fam, sub = f"{BACKENDS}/fam2_attn.py", f"{BACKENDS}/sub2_attn.py"
    sub3 = f"{BACKENDS}/sub3_attn.py"
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            fam: builder(
                "Fam2MetadataBuilder", level("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE")
            ),
            sub: builder(
                "Sub2MetadataBuilder",
                "pass",
                "Fam2MetadataBuilder",
                "vllm.v1.attention.backends.fam2_attn",
            ),
            sub3: builder(
                "Sub3MetadataBuilder",
                "pass",
                "Fam2MetadataBuilder",
                "vllm.v1.attention.backends.fam2_attn",
            ),
        },
        "Family (#50)",
    )
    r.commit(
        {
            sub: builder(
                "Sub2MetadataBuilder",
                level("_cudagraph_support", "UNIFORM_BATCH"),
                "Fam2MetadataBuilder",
                "vllm.v1.attention.backends.fam2_attn",
            )
        },
        "Sub2 declares its own (#51)",
    )
    r.commit(
        {
            sub: builder(
                "Sub2MetadataBuilder",
                "pass",
                "Fam2MetadataBuilder",
                "vllm.v1.attention.backends.fam2_attn",
            )
        },
        "Sub2 inherits again (#52)",
    )
    r.commit(
        {
            sub3: builder(
                "Sub3MetadataBuilder",
                level("_cudagraph_support", "UNIFORM_SINGLE_TOKEN_DECODE"),
                "Fam2MetadataBuilder",
                "vllm.v1.attention.backends.fam2_attn",
            )
        },
        "Sub3 declares what it inherits (#53)",
    )
    store = collect(r.path, tmp_path / "kb.sqlite")
    gain = effect(store, "51", "more-batches-captured")
    assert (gain["basis"], gain["from_class"], gain["from_file"]) == (
        "inherited",
        "Fam2MetadataBuilder",
        fam,
    )
    assert (gain["before"], gain["after"]) == ("UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH")
    text = render_report(store, "51", lang="en", fmt="md")
    assert "may have been inherited and is not known here" not in text
    assert "inherited before from `Fam2MetadataBuilder`" in text
    # #52 removes the declaration: it now inherits the lower level, and the report says so
    fix = effect(store, "52", "correctness-fix")
    assert (fix["basis"], fix["before"], fix["after"]) == (
        "now-inherits",
        "UNIFORM_BATCH",
        "UNIFORM_SINGLE_TOKEN_DECODE",
    )
    assert "which this record does not give" not in render_report(store, "52", lang="en", fmt="md")
    # #53 declares the level it already had: nobody gains or pays
    assert [e["reason"] for e in effects(store, "53")] == ["same-effective"]


def a_file(path: str, patch: str, status: str = "modified") -> dict[str, Any]:
    """One changed file of a GitHub-shaped record (one line out, one in)."""
    return {"filename": path, "status": status, "additions": 1, "deletions": 1, "patch": patch}


def test_a_record_without_a_clone_says_the_state_is_unknown(tmp_path):
    store = Store(tmp_path / "kb.sqlite")
    patch = decl_patch("XMetadataBuilder", "NEVER", "ALWAYS")
    add(store, record(7, files=[a_file(f"{BACKENDS}/x_attn.py", patch)]))
    facts = store.pr_facts("7")
    assert facts["state_changes"] is None
    assert facts["state_changes_unknown"].startswith("unknown: the clone is not known")
    text = render_report(store, "7", lang="en", fmt="md")
    assert "unknown: the clone is not known" in text


def test_platforms_come_from_every_changed_file(tmp_path):
    """A ROCm-looking backend that also edits the CUDA platform module is CUDA code too."""
    store = Store(tmp_path / "kb.sqlite")
    patch = decl_patch("RocmNewMetadataBuilder", "NEVER", "ALWAYS")
    files = [
        a_file(f"{BACKENDS}/rocm_new_attn.py", patch, "added"),
        a_file("vllm/platforms/cuda.py", "@@ -1,1 +1,1 @@\n-x = 1\n+y = 2"),
    ]
    add(store, record(8, title="Add a backend", files=files))
    ctx = report_context(store, "8", "en")
    assert {"AMD ROCm", "NVIDIA CUDA"} <= set(ctx["risks"].platforms)


def test_a_stale_spelling_is_a_finding_of_its_own(renamed_reading):
    """Rule stale-symbol-spelling: stored with the PR that left the builder stale, in both
    languages, and in the check's SARIF with prkb's own rule metadata; the restore fixes it."""
    from prkb.check import run_check
    from prkb.check.formats import to_sarif

    store, shas = renamed_reading
    (f,) = [x for x in store.pr_facts("2")["findings"] if x["rule"] == "stale-symbol-spelling"]
    assert f["class"] == "XMetadataBuilder"
    assert "attn_cudagraph_support" in f["message_en"] and "cudagraph_support" in f["message_zh"]
    assert "不读取" in f["message_zh"]
    repo = Path(str(store.path)).parent / "src"
    profile = load_profile()
    rep = run_check(str(repo), shas["1"], shas["2"], profile)
    assert [(x.rule, x.class_name) for x in rep.new] == [
        ("stale-symbol-spelling", "XMetadataBuilder")
    ]
    (eff,) = [e for e in rep.effective if e.class_name == "XMetadataBuilder"]
    assert (eff.before_source, eff.after_source) == ("declared", "stale")
    sarif = to_sarif(rep, profile, base_url="http://127.0.0.1/README")
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["stale-symbol-spelling"]["name"] == "StaleSymbolSpelling"
    assert rules["stale-symbol-spelling"]["properties"]["zh"]["help"]
    fixed = run_check(str(repo), shas["2"], shas["3"], profile)
    assert [(x.rule, x.class_name) for x in fixed.fixed] == [
        ("stale-symbol-spelling", "XMetadataBuilder")
    ]


def test_the_audit_page_says_which_commit_fixed_a_finding(renamed_reading, tmp_path):
    """The site's audit page: the stale finding of #2 is fixed by #3 (the audit at #3's
    parent had it, at #3 not), not merely "changed since"."""
    from prkb.site.build import build_site

    store, _ = renamed_reading
    assert [
        p.number
        for p in store.finding_fixes()[
            ("stale-symbol-spelling", f"{BACKENDS}/x_attn.py", "XMetadataBuilder")
        ]
    ] == [3]
    build_site(store, tmp_path / "site", load_profile(), langs=["en"], search=False)
    page = (tmp_path / "site" / "en" / "audit.html").read_text(encoding="utf-8")
    row = page.split("XMetadataBuilder</code>")[0].rsplit("<tr", 1)[1]
    assert 'class="fixed"' in row and "st-fixed" in row
    after = page.split("XMetadataBuilder</code>")[1].split("</tr>")[0]
    fixer = after.rsplit("<td>", 1)[1]
    assert fixer.startswith('<a href="pr/3.html">#3</a>')


def test_a_blame_count_says_what_it_leaves_out(tmp_path):
    """Relation evidence counts honestly: a blame item lists at most five files, and its line
    count covers them all, so the sentence says how many it does not list."""
    store = Store(tmp_path / "kb.sqlite")
    files = [f"{BACKENDS}/f{i}_attn.py" for i in range(7)]
    base_rec = {
        "number": 1,
        "title": "base",
        "state": "merged",
        "source": "git",
        "merged_at": "2026-01-01T00:00:00Z",
        "created_at": "2026-01-01T00:00:00Z",
        "merge_commit_sha": "a" * 40,
        "user": {"login": "a"},
        "files": [],
    }
    later = {
        **base_rec,
        "number": 2,
        "title": "later",
        "merge_commit_sha": "b" * 40,
        "merged_at": "2026-01-02T00:00:00Z",
        "prkb": {"lineage": [{"commit": "a" * 40, "file": f, "lines": 2} for f in files]},
    }
    profile = load_profile()
    ingest(store, base_rec, profile, repo="o/r")
    ingest(store, later, profile, repo="o/r")
    build_relations(store, profile)
    (rel,) = [r for r in store.pr_facts("2")["relations"] if r["other"] == 1]
    (blame,) = [it for it in rel["evidence"] if it["kind"] == "blame"]
    assert (blame["lines"], len(blame["files"]), blame["more"]) == (14, 5, 2)
    text = render_report(store, "2", lang="en", fmt="md")
    assert "14 changed line(s)" in text and "2 more files or commits are counted" in text


def test_a_threshold_read_through_self_and_a_private_threshold(tmp_path):
    """``self.<threshold>`` in an inherited ``__init__`` reads the subclass's own class
    attribute (an MLA-like builder with 512 passes 512, not the base's 1); a private split
    threshold written from the public one is 1 + k while the public one stays 1."""
    r = GitRepoBuilder.init(tmp_path / "src")
    common, mla, swa = (f"{BACKENDS}/{n}.py" for n in ("common_mla", "fa_mla", "swa_attn"))
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            common: builder(
                "CommonMLAMetadataBuilder",
                "reorder_batch_threshold: ClassVar[int] = 1\n"
                "def __init__(self, spec):\n"
                "    self._init_reorder_batch_threshold(self.reorder_batch_threshold,"
                " spec)",
            ),
            mla: builder(
                "FaMLAMetadataBuilder",
                "reorder_batch_threshold: ClassVar[int] = 512",
                "CommonMLAMetadataBuilder",
                "vllm.v1.attention.backends.common_mla",
            ),
            swa: builder(
                "SwaMetadataBuilder",
                "reorder_batch_threshold: ClassVar[int] = 1\n"
                "def __init__(self):\n"
                "    self.decode_threshold = self.reorder_batch_threshold"
                " + self.num_speculative_tokens",
            ),
        },
        "Builders (#60)",
    )
    with GitRepo(r.path) as repo:
        res = audit_revision(repo, "HEAD", load_profile())
    got = {b.class_name: b.values for b in res.builders}
    assert got["FaMLAMetadataBuilder"]["reorder_batch_threshold"] == {
        "value": "_init_reorder_batch_threshold(512, spec)",
        "source": "inherited:CommonMLAMetadataBuilder",
        "origin_file": common,
        "via": "__init__",  # its base's __init__ sets it, not a class attribute
    }
    assert got["CommonMLAMetadataBuilder"]["reorder_batch_threshold"]["value"] == (
        "_init_reorder_batch_threshold(1, spec)"
    )
    swa_values = got["SwaMetadataBuilder"]
    assert swa_values["reorder_batch_threshold"]["value"] == "1"
    assert swa_values["decode_threshold"] == {
        "value": "1 + self.num_speculative_tokens",
        "source": "init",
        "origin_file": swa,
    }


def test_speculative_decoding_users_gain_only_where_the_threshold_grows(tmp_path):
    """A raise to UNIFORM_BATCH of an MLA builder whose threshold is pinned to 1: its
    speculative-decoding users gain nothing (capture fails); they pay, and the audit says
    why."""
    from githistory import MLA, MLA_SRC, TRITON, triton

    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            MLA: MLA_SRC,
            TRITON: triton("UNIFORM_SINGLE_TOKEN_DECODE"),
        },
        "Triton MLA (#70)",
    )
    r.commit({TRITON: triton("UNIFORM_BATCH")}, "[Perf] Triton MLA uniform batches (#71)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    got = [(e["reason"], e["side"], e["party"]) for e in effects(store, "71")]
    assert got == [
        ("no-gain-not-ready", "neither", "rule-users"),
        ("correctness-risk", "pays", "rule-users"),
    ]
    assert effect(store, "71", "correctness-risk")["audit"] == "finding"
    assert "Who gains: nobody among" in render_report(store, "71", lang="en", fmt="md")


def test_a_new_subclass_that_inherits_a_level_carries_its_risk(tmp_path):
    """A new builder the PR adds without a declaration of its own (it inherits UNIFORM_BATCH
    with a threshold pinned to 1): it adds a row, and its users pay what the audit flags."""
    r = GitRepoBuilder.init(tmp_path / "src")
    fam, sub = f"{BACKENDS}/fam3_attn.py", f"{BACKENDS}/sub4_attn.py"
    r.commit(
        {
            UTILS: base("_cudagraph_support"),
            fam: builder(
                "Fam3MetadataBuilder",
                "def __init__(self):\n    self._init_reorder_batch_threshold(1)",
            ),
        },
        "Family (#80)",
    )
    r.commit(
        {
            fam: builder(
                "Fam3MetadataBuilder",
                level("_cudagraph_support", "UNIFORM_BATCH") + "\n"
                "def __init__(self):\n    self._init_reorder_batch_threshold(1)",
            ),
            sub: builder(
                "Sub4MetadataBuilder",
                "pass",
                "Fam3MetadataBuilder",
                "vllm.v1.attention.backends.fam3_attn",
            ),
        },
        "Family takes uniform batches, with a new member (#81)",
    )
    store = collect(r.path, tmp_path / "kb.sqlite")
    got = [
        (e["reason"], e.get("audit"))
        for e in effects(store, "81")
        if e["builder"] == "Sub4MetadataBuilder"
    ]
    assert got == [("new-builder", None), ("correctness-risk", "finding")]


def test_a_fix_in_the_base_class_file_of_a_flagged_builder_is_collected(tmp_path):
    """The finding is on a subclass; the fix lets the base's threshold grow, in the base's
    file, and names no symbol: it is collected as the commit that fixed the finding."""
    r = GitRepoBuilder.init(tmp_path / "src")
    fam, sub = f"{BACKENDS}/fam5_attn.py", f"{BACKENDS}/sub5_attn.py"

    def family(flag: str) -> str:
        return builder(
            "Fam5MetadataBuilder",
            f"def __init__(self):\n    self._init_reorder_batch_threshold(1{flag})",
        )

    r.commit({UTILS: base("_cudagraph_support"), fam: family("")}, "Family (#90)")
    r.commit(
        {
            sub: builder(
                "Sub5MetadataBuilder",
                level("_cudagraph_support", "UNIFORM_BATCH"),
                "Fam5MetadataBuilder",
                "vllm.v1.attention.backends.fam5_attn",
            )
        },
        "Sub5 takes uniform batches (#91)",
    )
    r.commit({fam: family(", supports_spec_as_decode=True")}, "[Bugfix] Family grows (#92)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    assert [f["class"] for f in store.pr_facts("91")["findings"]] == ["Sub5MetadataBuilder"]
    assert [
        p.number
        for p in store.finding_fixes()[
            ("cg-uniform-without-spec-decode", sub, "Sub5MetadataBuilder")
        ]
    ] == [92]
    assert any("input of the audit rule" in n for n in store.pr_facts("92")["notes"])


RUNNER_SRC = '''
"""The model runner. A docstring that names builder.cudagraph_support reads nothing."""


def capture(builders):
    for b in builders:
        # b.full_cudagraph_supported is what older code read
        if b.{attr} == "x":
            return b
    b.other = 1
'''


def runner(attr: str) -> str:
    return RUNNER_SRC.replace("{attr}", attr)


def test_reads_in_counts_attribute_loads_of_code_only():
    from prkb.analyze.audit import reads_in

    family = ("full_cudagraph_supported", "attn_cudagraph_support", "cudagraph_support",
              "_cudagraph_support")
    text = (runner("attn_cudagraph_support")
            + "\nclass B:\n    _cudagraph_support = 1\n\n    def get(cls):\n"
              "        self.cudagraph_support = 2\n        x: int = self.cudagraph_support\n"
              "        return cls._cudagraph_support\n")
    got = reads_in(text, family)
    # the docstring, the comment, the declaration and the assignment read nothing
    assert got == {"attn_cudagraph_support": 8, "cudagraph_support": 17,
                   "_cudagraph_support": 18}


@pytest.fixture(scope="module")
def runner_lags(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    """The base declares both spellings; #2 moves ``XMetadataBuilder`` to the new one while the
    model runner still reads the old one (stale, though its base declares what it declares);
    #3 changes only the runner to read the new spelling (``XMetadataBuilder`` counts again)."""
    root = tmp_path_factory.mktemp("runner")
    r = GitRepoBuilder.init(root / "src")
    x = f"{BACKENDS}/x_attn.py"
    both = base("attn_cudagraph_support").replace(
        "\n    def _init", "\n    cudagraph_support: ClassVar[AttentionCGSupport] = "
        "AttentionCGSupport.NEVER\n\n    def _init")
    s = {
        "1": r.commit({UTILS: both, RUNNER: runner("attn_cudagraph_support"),
                       x: builder("XMetadataBuilder", level("attn_cudagraph_support", "ALWAYS"))},
                      "Builders (#1)"),
        "2": r.commit({x: builder("XMetadataBuilder", level("cudagraph_support", "ALWAYS"))},
                      "Move X to the new spelling (#2)"),
        "3": r.commit({RUNNER: runner("cudagraph_support")},
                      "The runner reads the new spelling (#3)"),
    }
    return collect(r.path, root / "kb.sqlite"), s


def test_the_reading_site_decides_which_spelling_is_in_force(runner_lags):
    store, shas = runner_lags
    repo = Path(str(store.path)).parent / "src"
    profile = load_profile()
    with GitRepo(repo) as git:
        at2 = audit_revision(git, shas["2"], profile)
        at3 = audit_revision(git, shas["3"], profile)
    # the runner reads the old spelling at #2 (line 8 of its file), the new one at #3
    assert at2.reads == {"attn_cudagraph_support": f"{RUNNER}:8"}
    assert at3.reads == {"cudagraph_support": f"{RUNNER}:8"}
    (x2,) = [b for b in at2.builders if b.class_name == "XMetadataBuilder"]
    assert x2.unread == ["XMetadataBuilder.cudagraph_support"]
    assert x2.values["_cudagraph_support"]["source"] == "stale"
    (f,) = [f for f in at2.findings if f.rule == "stale-symbol-spelling"]
    assert f"the code reads attn_cudagraph_support, at {RUNNER}:8" in f.message_en
    assert f"{RUNNER}:8" in f.message_zh
    (x3,) = [b for b in at3.builders if b.class_name == "XMetadataBuilder"]
    assert (x3.unread, x3.effective) == ([], "ALWAYS")
    # the state changes: #2 leaves X stale (its base declares the spelling it moved to), and #3,
    # which changes no builder's file, puts it back
    x = by(sc(store, "2"), "XMetadataBuilder")
    assert (x["before"], x["before_source"], x["after"], x["after_source"]) == (
        "ALWAYS", "declared", "NEVER", "stale")
    x = by(sc(store, "3"), "XMetadataBuilder")
    assert (x["before"], x["before_source"], x["after"], x["after_source"]) == (
        "NEVER", "stale", "ALWAYS", "declared")


def test_a_change_of_what_the_code_reads_is_a_framework_change(runner_lags):
    """#3 changes only the model runner: the report's framework item says which spelling the
    code reads from then on, and where; #2 changes no part of the mechanism."""
    store, _ = runner_lags
    ctx = report_context(store, "3", "en")
    fw, changed = ctx["implementation"].state["framework"]
    assert (fw["kind"], fw["old"], fw["new"], fw["where"]) == (
        "read-spelling", "attn_cudagraph_support", "cudagraph_support", f"{RUNNER}:8")
    assert (changed["kind"], changed["file"]) == ("file", RUNNER)
    text = render_report(store, "3", lang="en", fmt="md")
    assert ("from this commit on the code reads `cudagraph_support` where it read "
            f"`attn_cudagraph_support` (`{RUNNER}:8`).") in text
    # the runner is listed once, as the framework file it is, not again as an "Other file"
    assert (f"**Framework change**: `{RUNNER}` changed (+1/-1): the model runner, which reads "
            "every builder's level and picks the CUDA graph mode.") in text
    assert f"**Other file**: `{RUNNER}`" not in text
    assert report_context(store, "2", "en")["implementation"].state["framework"] == []


def test_the_digest_lists_effective_level_changes_from_the_state(renamed_reading):
    """The digest's "Effective level changes" are the stored state changes: #2 leaves
    ``XMetadataBuilder`` (a file #2 did not touch) stale, #3 puts it back; the declaration
    changes stay in a section of their own."""
    from prkb.publish import digest as dg

    store, _ = renamed_reading
    d = dg.gather(store, dg.period_for(since="2000-01-01", until="2100-01-01"))
    rows = [(e.pr.number, e.class_name, e.before.get("value"), e.before["kind"],
             e.after.get("value"), e.after["kind"], e.outside) for e in d.effective]
    assert (2, "XMetadataBuilder", "ALWAYS", "declared", "NEVER", "stale", True) in rows
    assert (3, "XMetadataBuilder", "NEVER", "stale", "ALWAYS", "declared", False) in rows
    # a rename with the base changed no effective level: no row for YMetadataBuilder in #2
    assert not [r for r in rows if r[:2] == (2, "YMetadataBuilder")]
    assert d.effective_unknown == []
    text = dg.render_section(d, "en", "text")
    assert ("• #2: `XMetadataBuilder`: `ALWAYS` (declared in the class) → `NEVER` (stale: it "
            "declares `attn_cudagraph_support`, which the code at that revision no longer "
            "reads, so it falls back to this) (in a file the change did not touch: the class "
            "is left on a spelling the code no longer reads)") in text
    assert text.index("Effective level changes") < text.index("Declaration changes")
    html = dg.render_section(d, "zh", "html")
    assert "有效级别变更" in html and "已失效" in html


def test_an_assert_before_the_setting_is_a_raise(tmp_path):
    """``assert k <= 2`` in ``__init__`` raises AssertionError when ``k > 2``: kept with the
    threshold's value like an ``if ...: raise``. A check of something the value is not made of
    (``max_cudagraph_size``) does not bound it and is not kept."""
    r = GitRepoBuilder.init(tmp_path / "src")
    d = f"{BACKENDS}/d_attn.py"
    sha = r.commit({UTILS: base("_cudagraph_support"), d: builder(
        "DMetadataBuilder",
        "def __init__(self):\n    assert self.num_spec_tokens <= 2, 'too many'\n"
        "    if self.max_cudagraph_size > 992:\n        raise ValueError('too large')\n"
        "    self.reorder_batch_threshold = 1 + self.num_spec_tokens")}, "Assert (#30)")
    with GitRepo(r.path) as git:
        (b,) = [x for x in audit_revision(git, sha, load_profile()).builders
                if x.class_name == "DMetadataBuilder"]
    got = b.values["reorder_batch_threshold"]
    assert (got["value"], got["source"]) == ("1 + self.num_spec_tokens", "init")
    assert got["raises"] == ["AssertionError when self.num_spec_tokens > 2"]


def test_a_later_run_searches_the_files_an_earlier_run_read_a_findings_inputs_from(tmp_path):
    """Run 1 mines the finding on the subclass (its threshold comes from the base's file);
    the fix in the base's file lands after it, and run 2 still finds it: the files a
    finding's inputs come from are kept in the knowledge base between runs."""
    r = GitRepoBuilder.init(tmp_path / "src")
    fam, sub = f"{BACKENDS}/fam6_attn.py", f"{BACKENDS}/sub6_attn.py"

    def family(flag: str) -> str:
        return builder("Fam6MetadataBuilder",
                       f"def __init__(self):\n    self._init_reorder_batch_threshold(1{flag})")

    r.commit({UTILS: base("_cudagraph_support"), fam: family("")}, "Family (#95)")
    r.commit({sub: builder("Sub6MetadataBuilder", level("_cudagraph_support", "UNIFORM_BATCH"),
                           "Fam6MetadataBuilder", "vllm.v1.attention.backends.fam6_attn")},
             "Sub6 takes uniform batches (#96)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    assert [f["class"] for f in store.pr_facts("96")["findings"]] == ["Sub6MetadataBuilder"]
    r.commit({fam: family(", supports_spec_as_decode=True")}, "[Bugfix] Family grows (#97)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    (f,) = store.pr_facts("96")["findings"]
    assert f["fixed_by"]["number"] == 97


def test_the_enum_of_levels_changing_is_a_framework_change(tmp_path):
    """The levels are read from the enum's class body at the parent and at the commit: a
    removed name the profile knows as an alias of an added one is a rename, the rest are
    levels gained or lost; introducing the enum is said as such."""
    r = GitRepoBuilder.init(tmp_path / "src")
    x = f"{BACKENDS}/x_attn.py"
    no_enum = base("_cudagraph_support").replace(
        "class AttentionCGSupport(enum.Enum):\n    NEVER = 0\n    PURE_DECODE_ONLY = 1\n"
        "    UNIFORM_SINGLE_TOKEN_DECODE = 1\n    UNIFORM_BATCH = 2\n    ALWAYS = 3\n",
        "AttentionCGSupport = None\n")
    old = base("_cudagraph_support").replace("    UNIFORM_SINGLE_TOKEN_DECODE = 1\n", "").replace(
        "    UNIFORM_BATCH = 2\n", "")
    r.commit({UTILS: no_enum, x: builder("XMetadataBuilder", "pass")}, "Builders (#60)")
    # (each also changes a declaration: a commit that changes only the enum is not collected)
    r.commit({UTILS: old, x: builder("XMetadataBuilder", level("_cudagraph_support", "NEVER"))},
             "The enum (#61)")
    r.commit({UTILS: base("_cudagraph_support").replace("    PURE_DECODE_ONLY = 1\n", ""),
              x: builder("XMetadataBuilder", level("_cudagraph_support", "ALWAYS"))},
             "Rename a level, add one (#62)")
    store = collect(r.path, tmp_path / "kb.sqlite")
    assert store.pr_facts("62")["framework"]["levels"] == {
        "before": ["NEVER", "PURE_DECODE_ONLY", "ALWAYS"],
        "after": ["NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS"]}
    state = report_context(store, "62", "en")["implementation"].state
    kinds = [(f["kind"], f.get("names")) for f in state["framework"]]
    assert kinds == [("levels-renamed", ["PURE_DECODE_ONLY → UNIFORM_SINGLE_TOKEN_DECODE"]),
                     ("levels-added", ["UNIFORM_BATCH"]), ("file", None)]
    text = render_report(store, "62", lang="en", fmt="md")
    assert ("the enum of levels `AttentionCGSupport` renames `PURE_DECODE_ONLY` to "
            "`UNIFORM_SINGLE_TOKEN_DECODE`") in text
    assert "the enum of levels `AttentionCGSupport` gains `UNIFORM_BATCH`" in text
    assert ("the enum of levels `AttentionCGSupport` is introduced, with `NEVER`, "
            "`PURE_DECODE_ONLY`, `ALWAYS`") in render_report(store, "61", lang="en", fmt="md")
    zh = render_report(store, "62", lang="zh", fmt="md")
    assert "级别枚举 `AttentionCGSupport` 新增了 `UNIFORM_BATCH`" in zh


def test_a_base_the_scan_cannot_read_makes_what_it_may_set_unknown(tmp_path):
    """A mixin from outside the scanned code comes before the root base: the level a builder
    would inherit past it is unknown (with the reason), never the root base's; a builder
    that declares its own level is read as declared. Python's own bases (``ABC``,
    ``Generic``) change nothing."""
    r = GitRepoBuilder.init(tmp_path / "src")
    m, n, o = (f"{BACKENDS}/{k}_attn.py" for k in ("m", "n", "o"))
    mixed = ("from typing import ClassVar\nfrom extlib.mixins import SomeMixin\n"
             "from vllm.v1.attention.backends.utils import AttentionMetadataBuilder\n"
             "from vllm.v1.attention.backends.utils import AttentionCGSupport\n\n\n"
             "class {cls}(SomeMixin, AttentionMetadataBuilder):\n    {body}\n")
    sha = r.commit({
        UTILS: base("_cudagraph_support"),
        m: mixed.format(cls="MMetadataBuilder", body="pass"),
        n: mixed.format(cls="NMetadataBuilder", body=level("_cudagraph_support", "ALWAYS")),
        o: ("from abc import ABC\nfrom typing import Generic\n"
            "from vllm.v1.attention.backends.utils import AttentionMetadataBuilder\n\n\n"
            "class OMetadataBuilder(ABC, Generic[int], AttentionMetadataBuilder):\n    pass\n"),
    }, "Mixins (#70)")
    with GitRepo(r.path) as git:
        got = {b.class_name: b.values for b in audit_revision(git, sha, load_profile()).builders}
    assert got["MMetadataBuilder"]["_cudagraph_support"] == {
        "value": None, "source": "unknown",
        "reason": "SomeMixin is a base the scanned code does not define, and it may set the value"}
    assert got["NMetadataBuilder"]["_cudagraph_support"]["source"] == "declared"
    # the matrix says unknown too, with the reason, not the root base's level
    from prkb.publish.matrix import matrix_at, to_markdown

    _, rows = matrix_at(str(r.path), sha, load_profile(), None)
    (row,) = [x for x in to_markdown(rows, load_profile()).splitlines()
              if "`MMetadataBuilder`" in x]
    assert "| unknown | unknown: SomeMixin is a base the scanned code does not define" in row
    assert got["OMetadataBuilder"]["_cudagraph_support"]["source"] == (
        "inherited:AttentionMetadataBuilder")


def test_a_base_re_exported_by_a_package_resolves_to_the_class_under_that_package():
    """Two classes share the root base's name (vLLM's V0 and V1 builder bases); a V0 file
    imports it from the package (``from vllm.attention import ...``), whose ``__init__`` the
    audit does not read: the base is the one defined under that package, not unknown."""
    from prkb.analyze.hierarchy import ClassRef, Hierarchy, ModuleFacts
    from prkb.analyze.symbols import ClassFacts

    def cls(name: str, *bases: str) -> ClassFacts:
        return ClassFacts(name=name, bases=list(bases), lineno=1)

    h = Hierarchy({
        "vllm/attention/backends/abstract.py": ModuleFacts(
            {"AttentionMetadataBuilder": cls("AttentionMetadataBuilder")}),
        "vllm/v1/attention/backends/utils.py": ModuleFacts(
            {"AttentionMetadataBuilder": cls("AttentionMetadataBuilder")}),
        "vllm/attention/backends/x.py": ModuleFacts(
            {"XBuilder": cls("XBuilder", "AttentionMetadataBuilder")},
            {"AttentionMetadataBuilder": ("vllm.attention", "AttentionMetadataBuilder")}),
    })
    mro = h.mro(ClassRef("vllm/attention/backends/x.py", "XBuilder"))
    assert mro[1] == ClassRef("vllm/attention/backends/abstract.py", "AttentionMetadataBuilder")
