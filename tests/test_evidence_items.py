"""A relation's evidence worded in Python (prkb/render/evidence_items.py) says what the
template's macro (templates/report/_evidence.j2 ``lines``) says, byte for byte, in every
environment that uses it: the report's three formats and the digest's two, both languages,
a report about a commit, with the item markup each caller passes."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

from prkb import evidence
from prkb.publish import digest
from prkb.render import report
from prkb.render.evidence_items import EvidenceItems, evidence_writer, writes_evidence
from prkb.render.i18n import jinja_env

HOSTILE = '<script>alert("x")</script> & `code` **b** [a](javascript:x) %(pr)s 100%'


def _crafted() -> list[list[dict[str, Any]]]:
    """Every kind and every branch the macro tells apart, with texts written to break out."""
    level_sides = [
        {"before": "FULL", "after": "NEVER"}, {"before": None, "after": "ALWAYS"},
        {"before": "UNIFORM_BATCH", "after": None}, {"before": "", "after": ""},
    ]
    by_sides = [{"by_before": None, "by_after": "FULL"}, {"by_before": "NEVER", "by_after": "X"},
                {"by_before": "A", "by_after": None}]
    items: list[dict[str, Any]] = []
    for where in ("title", "body", "comment", "review", "review-comment", None):
        items.append({"kind": "quote", "where": where, "pr": "#1<b>", "text": HOSTILE})
        items.append({"kind": "quote", "where": where, "pr": "#2", "text": "t `x`",
                      "path": "vllm/a<b>.py"})
    items += [{"kind": "record", "text": HOSTILE}, {"kind": "legacy", "text": "old & new"},
              {"kind": "older", "older": "#3", "newer": "#4<i>"}]
    for n, (sides, by) in enumerate((s, b) for s in level_sides for b in by_sides):
        for direction in ("renamed", "moved", "added", "changed", "raised", "weird<x>"):
            items.append({"kind": "last-set", "class": f"C{n}<", "attr": "_attr",
                          "direction": direction, "by": "#5", **sides, **by,
                          **({"before_attr": "old_attr"} if n % 2 else {})})
        for by_direction in ("added", "raised"):
            for days in (0, 3, None):
                it = {"kind": "undoes-level", "pr": "#6", "class": "B&", "by": "#7",
                      "by_direction": by_direction, **sides, **by}
                if days is not None:
                    it["days"] = days
                if n % 2:
                    it["back"] = True
                if n % 3 == 0:
                    it["title"] = HOSTILE
                items.append(it)
    items += [
        {"kind": "blame", "lines": 4, "files": ["a.py", "b<c>.py"], "commits": ["abc", "d"],
         "by": "#8"},
        {"kind": "blame", "lines": 9, "files": ["a.py"], "commits": ["abc"], "by": "#8",
         "more": 3},
        {"kind": "blame", "lines": 1, "files": [], "commits": [], "by": "#8", "more": 0},
        {"kind": "revert-title", "pr": "#9"},
        {"kind": "blamed-declaration", "classes": ["X", "Y&"], "by": "#10", "pr": "#11"},
        {"kind": "culprit-named", "pr": "#12", "culprits": ["#13", "<b>#14</b>"]},
        {"kind": "closed-unmerged", "pr": "#15", "fix": "#16", "of": "#17"},
        {"kind": "closed-unmerged", "pr": "#15"},
        {"kind": "superseded", "old": "#18", "new": "#19", "state": "merged"},
        {"kind": "superseded", "old": "#18", "new": "#19", "state": "open"},
        {"kind": "same-change", "class": "S", "attr": "a", "days": 4},
        {"kind": "same-change", "class": "S", "attr": "a", "days": 0, "similarity": 0.575,
         "test": "tests/t<x>.py"},
        {"kind": "same-change", "class": "S", "attr": "a", "days": 1, "similarity": 1},
        {"kind": "stale-restored", "class": "K", "file": "f.py", "attr": "old", "by": "#20",
         "pr": "#21", "level_before": None, "level_stale": None, "level_after": "FULL"},
        {"kind": "stale-restored", "class": "K", "file": "f.py", "attr": "old", "by": "#20",
         "pr": "#21", "level_before": "FULL", "level_stale": "NEVER", "level_after": None},
        {"kind": "unknown-kind<script>"},
    ]
    # one item at a time, then all of them in one evidence, then none
    return [[it] for it in items] + [items, []]


def _stored(store: Any) -> list[list[dict[str, Any]]]:
    """The evidence of every relation the bundled data builds, as the store reads it."""
    rows = store.conn.execute("SELECT evidence FROM relations").fetchall()
    assert len(rows) > 20
    return [evidence.loads(r[0]) for r in rows]


def _envs() -> list[tuple[str, jinja2.Environment]]:
    out = []
    for lang in ("en", "zh"):
        for fmt in ("html", "md", "txt"):
            for subject in ("", "commit"):
                out.append((f"report-{lang}-{fmt}-{subject}",
                            report._report_env(lang, fmt, subject, "")))
        out.append((f"digest-{lang}-html", digest._env(lang, html=True)))
        out.append((f"digest-{lang}-text", digest._env(lang)))
    return out


@pytest.mark.parametrize(("name", "env"), _envs(), ids=lambda x: x if isinstance(x, str) else "")
def test_evidence_is_what_the_macro_wrote(bundled: Any, name: str,
                                          env: jinja2.Environment) -> None:
    assert writes_evidence(env)
    macro = env.get_template("report/_evidence.j2").module.lines.direct  # type: ignore[attr-defined]
    assert macro is not None
    mine = EvidenceItems(env)
    markup = env.globals["markup"]
    # the item markup of each caller: the report's related PRs (li2, end) and the digest's
    # (li2, end_li), a plain string, none
    pairs = [(getattr(markup, "li2", ""), getattr(markup, "end", "")),
             (getattr(markup, "li2", ""), getattr(markup, "end_li", "")), ("* <", ">"),
             ("", "")]
    cases = _stored(bundled) + _crafted()
    said = 0
    for items in cases:
        for li, end in pairs:
            want = macro(items, li, end)
            got = mine(items, li, end)
            assert got == want, (name, items, li, end)
            said += bool(want)
    assert said > 300


def test_used_by_the_environments_that_can(bundled: Any) -> None:
    """The report's and the digest's evidence is the Python writer's (through the build's
    cache); an environment whose gettext needs a template context (the i18n extension's)
    keeps the macro."""
    for _, env in _envs():
        lines = env.globals["sentences"]["evidence"].lines  # type: ignore[index]
        items = evidence.loads(evidence.make({"kind": "revert-title", "pr": "#1"}))
        assert lines.direct(items, "", "") == EvidenceItems(env)(items, "", "")
        # the cached call words through the writer, not the macro's function
        made = [c.cell_contents for c in lines.direct.__closure__ or ()]
        assert any(isinstance(x, EvidenceItems) for x in made), made
    plain = jinja_env("en")  # the i18n extension's gettext
    assert not writes_evidence(plain)
    assert evidence_writer(plain) is None


def test_a_missing_field_is_an_error_as_in_the_macro() -> None:
    env = report._report_env("en", "md", "", "")
    macro = env.get_template("report/_evidence.j2").module.lines.direct  # type: ignore[attr-defined]
    item = [{"kind": "revert-title"}]  # no "pr"
    with pytest.raises(jinja2.UndefinedError):
        macro(item, "", "")
    with pytest.raises(KeyError):
        EvidenceItems(env)(item, "", "")
