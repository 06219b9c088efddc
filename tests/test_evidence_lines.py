"""A relation's evidence worded once per build and wording (prkb/render/evidence_lines.py):
what is kept is what the macro makes, environments share a table only when they word every
evidence alike, and a build starts with none."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from markupsafe import Markup

from prkb import evidence
from prkb.profile import load_profile
from prkb.publish import digest
from prkb.render import evidence_lines, report
from prkb.render.i18n import SubjectCatalog, subject_catalog, translations
from tests.evidence_items import ITEMS

STALE = {"kind": "stale-restored", "class": "FooBuilder", "file": "vllm/a.py",
         "attr": "cudagraph_support", "by": "#901", "pr": "#900", "level_before": "ALWAYS",
         "level_stale": "NEVER", "level_after": "ALWAYS"}
ALL = [*ITEMS, STALE]


def _envs(lang: str) -> tuple[Any, Any]:
    """The report's HTML environment (with the profile's audit rule wording) and the
    digest's."""
    rules = load_profile().rules
    return report._report_env(lang, "html", "", rules), digest._env(lang, html=True)


def test_stored_evidence_keeps_its_text_and_is_still_a_list() -> None:
    text = evidence.make(*ITEMS[:3])
    got = evidence.loads(text)
    assert isinstance(got, evidence.Evidence) and got.text == text
    assert got == json.loads(text) and json.dumps(got) == json.dumps(json.loads(text))
    back = pickle.loads(pickle.dumps(got))
    assert back == got and back.text == text
    legacy = evidence.loads("blame on the parent")
    assert legacy == [{"kind": "legacy", "text": "blame on the parent"}]
    assert legacy.text == "blame on the parent"
    assert evidence.loads(None) == [] and evidence.loads("").text == ""
    # parsed once per process: equal text read again gives equal items, in a list of its own
    again = evidence.loads(text)
    assert again == got and again is not got
    again.append({"kind": "older", "older": "#1", "newer": "#2"})
    assert evidence.loads(text) == json.loads(text)
    assert evidence.loads("[not json") == [{"kind": "legacy", "text": "[not json"}]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_and_digest_word_every_kind_alike_and_share_a_table(lang: str) -> None:
    rules = load_profile().rules
    r_env, d_env = _envs(lang)
    # the template modules themselves (not the cached copies): what each wording makes
    r_lines = r_env.get_template(evidence_lines.EVIDENCE).module.lines
    d_lines = d_env.get_template(evidence_lines.EVIDENCE).module.lines
    li, end = Markup("<li>"), Markup("</li>")
    for item in ALL:
        assert r_lines([item], li, end) == d_lines([item], li, end), item["kind"]
    said = str(r_lines(ALL, li, end))
    assert said.count("<li>") >= len(ALL) and "[{" not in said
    assert evidence_lines.wording(r_env, lang, subject_catalog(lang, "", rules).gettext) \
        == evidence_lines.wording(d_env, lang, subject_catalog(lang).gettext)


def test_a_catalog_that_words_an_evidence_message_its_own_way_gets_its_own_table() -> None:
    r_env, _ = _envs("en")
    plain = SubjectCatalog(translations("en"), "")
    msgid = "%(pr)s was closed without merging."
    own = SubjectCatalog(translations("en"), "", {msgid: "%(pr)s was dropped."})
    assert own.gettext(msgid) != plain.gettext(msgid)
    assert evidence_lines.wording(r_env, "en", own.gettext) \
        != evidence_lines.wording(r_env, "en", plain.gettext)
    # a message the evidence template does not say changes nothing
    other = SubjectCatalog(translations("en"), "", {"Key code": "Code"})
    assert evidence_lines.wording(r_env, "en", other.gettext) \
        == evidence_lines.wording(r_env, "en", plain.gettext)
    # another language is another wording
    assert evidence_lines.wording(r_env, "zh", plain.gettext) \
        != evidence_lines.wording(r_env, "en", plain.gettext)


def test_the_kept_text_is_the_macros_and_a_build_starts_without_it() -> None:
    r_env, _ = _envs("en")
    page = r_env.from_string("{{ sentences.evidence.lines(ev, li, end) }}")
    uncached = r_env.get_template(evidence_lines.EVIDENCE).module.lines
    li, end = Markup("<li>"), Markup("</li>")
    stored = evidence.loads(evidence.make(*ALL))
    evidence_lines.clear()
    first = page.render(ev=stored, li=li, end=end)
    assert first == str(uncached(ALL, li, end))
    tables = [t for t in evidence_lines._TABLES.values() if (stored.text, li, end) in t]
    assert len(tables) == 1
    # the second page reads the table: what is there is what it says
    tables[0][stored.text, li, end] = "KEPT"
    assert page.render(ev=stored, li=li, end=end) == "KEPT"
    # equal text read again (another page's copy of the same relation): the same entry
    assert page.render(ev=evidence.loads(stored.text), li=li, end=end) == "KEPT"
    evidence_lines.clear()
    assert page.render(ev=stored, li=li, end=end) == first
    # items without their stored text are worded each time, and not kept
    size = sum(len(t) for t in evidence_lines._TABLES.values())
    assert page.render(ev=list(ALL), li=li, end=end) == first
    assert sum(len(t) for t in evidence_lines._TABLES.values()) == size
    evidence_lines.clear()
