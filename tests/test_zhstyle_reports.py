"""The zh style over every bundled report: each Chinese report of the bundled data (curated
seeds and the git-collected history), in Markdown and in text, has no Latin word outside
code, quotes, URLs and proper names, no half-width punctuation in Chinese sentences, no
half-width list separator, no raw HTML entity and no relation joined from fragments
(tests/zhstyle.py says what each category measures)."""

from __future__ import annotations

import pytest

from prkb.collect.snapshot import import_jsonl
from prkb.paths import data_dir
from prkb.profile import load_profile
from prkb.render.report import render_report
from prkb.store import Store
from tests.zhstyle import CATEGORIES, measure, proper_names

BUNDLED = ("curated-seeds.jsonl", "vllm-git-history.jsonl")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory):
    profile = load_profile()
    store = Store(tmp_path_factory.mktemp("zhstyle") / "kb.sqlite")
    for name in BUNDLED:
        rep = import_jsonl(store, data_dir() / "snapshots" / name, profile)
        assert not rep.errors
    yield store, proper_names(profile)
    store.close()


def _refs(store: Store) -> list[str]:
    return [str(p.number) if p.number is not None else p.ref for p in store.graph_prs()]


@pytest.mark.parametrize("fmt", ["md", "txt"])
def test_every_bundled_zh_report_keeps_the_zh_style(bundled, fmt: str) -> None:
    store, names = bundled
    refs = _refs(store)
    assert len(refs) >= 50  # the bundled data: both snapshots were read
    offences: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for ref in refs:
        found = measure(render_report(store, ref, lang="zh", fmt=fmt), names)
        for cat in CATEGORIES:
            offences[cat] += [f"#{ref} line {s.line}: {s.text!r}" for s in found[cat]]
    assert {c: v[:5] for c, v in offences.items() if v} == {}


def test_the_check_sees_a_breach(bundled) -> None:
    """The check is not blind: an English sentence and a half-width colon in a real report
    are found."""
    store, names = bundled
    ref = _refs(store)[0]
    text = render_report(store, ref, lang="zh", fmt="md") + "\n- 说明: the level was raised\n"
    found = measure(text, names)
    assert found["punct"] and {s.text for s in found["latin"]} >= {"level", "raised"}
