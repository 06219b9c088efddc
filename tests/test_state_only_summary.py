"""A PR that changes the value in force without changing a declaration says so in its
executive summary, from the state model's reading: #25196 on the fork (decode-threshold
profile) replaced ``self.reorder_batch_threshold = self.num_spec + 1`` in an ``__init__`` by
``_init_reorder_batch_threshold(1, ...)``, and its summary said "no change was recorded"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbrecords import FILE, record

from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.render.report import render_report, report_facts
from prkb.store import Store

PROFILE = load_profile("vllm-decode-threshold")
ATTR = "reorder_batch_threshold"


def _state_only(number: int, rows: list[tuple[str, str | None, str | None]]) -> dict[str, Any]:
    """A git record with no declaration change; ``rows``: (class, before source, after
    source) of the state changes, the values ``N + 1`` -> ``1`` (a side without a source has
    no class there)."""
    rec = record(number, "Rework the threshold", "2026-03-04T00:00:00Z", lineage=[])
    rec["prkb"]["state_changes"] = [
        {"file": FILE, "class": cls, "value": ATTR,
         "before": "self.num_spec + 1" if before else None,
         "after": "1" if after else None, "before_source": before, "after_source": after}
        for cls, before, after in rows]
    return rec


def _line(text: str, head: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(f"- {head}"))


def test_a_value_changed_in_init_is_in_the_summary(tmp_path: Path) -> None:
    with Store(tmp_path / "kb.sqlite") as st:
        ingest(st, _state_only(1, [("GDNBuilder", "init", "init")]), PROFILE)
        ingest(st, _state_only(2, [("NewBuilder", None, "init"),
                                   ("GoneBuilder", "init", None)]), PROFILE)
        ingest(st, record(3, "Docs only", "2026-03-04T00:00:00Z", lineage=[]), PROFILE)
        assert report_facts(st, "1", PROFILE).summary.action == "state-only"
        en = {n: render_report(st, n, lang="en", fmt="md", profile=PROFILE) for n in (1, 2, 3)}
        zh = render_report(st, 1, lang="zh", fmt="md", profile=PROFILE)
    assert _line(en[1], "In one line") == (
        f"- In one line: no declaration of `{ATTR}` changed, but its value in force did: "
        "`GDNBuilder` from `self.num_spec + 1` to `1`")
    assert _line(en[1], "Recommended action") == (
        "- Recommended action: No declaration changed, but the value in force did (Effective "
        "state, below): review that change.")
    assert _line(en[2], "In one line").endswith(
        "`GoneBuilder` no longer exists, it was `self.num_spec + 1`; `NewBuilder` is new, at "
        "`1`")
    # nothing changed at all: as before
    assert _line(en[3], "In one line") == f"- In one line: no change to `{ATTR}` was recorded"
    assert "的声明没有变化，但其生效的值变了：`GDNBuilder` 从 `self.num_spec + 1` 变为 `1`" in zh
