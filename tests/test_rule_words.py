"""An audit rule words the report's generic audit messages its own way (issue #33, "Vocabulary
from the profile"): the templates and catalogs say what any rule says, and the CUDA-graph rule's
``MESSAGES`` (``prkb/analyze/rules/cudagraph/words.py``) say it in its own words, first in the
report's catalog (:class:`prkb.render.i18n.SubjectCatalog`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from prkb.analyze.audit import rule_column, rule_messages
from prkb.analyze.rules import Words
from prkb.errors import InputError
from prkb.paths import data_dir, templates_dir
from prkb.profile import load_profile, rule_modules
from prkb.render.i18n import rules_key, subject_catalog

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
MESSAGES = rule_messages("cudagraph")


def _catalog(loc: str) -> dict[tuple[str | None, str], str]:
    po = templates_dir() / "locales" / loc / "LC_MESSAGES" / "prkb.po"
    with po.open("rb") as fh:
        return {(m.context, m.id): m.string for m in read_po(fh) if m.id}


def _template_messages() -> set[str]:
    """The messages the report says: its templates' and its Python's (the related PRs' and
    the risks' items, ``N_``), as the committed catalog template records where each is said
    (tests/test_catalog.py keeps it current)."""
    with (templates_dir() / "locales" / "prkb.pot").open("rb") as fh:
        pot = read_po(fh)
    return {str(m.id) for m in pot if m.id and any(
        path.startswith(("templates/report/", "prkb/render/"))
        for path, _line in m.locations)}


def test_the_rule_words_real_generic_messages() -> None:
    """Each message the rule words is a message the report's templates say and both catalogs
    translate (a renamed generic message would leave the rule's text unused)."""
    assert len(MESSAGES) >= 35
    used = _template_messages()
    en, zh = _catalog("en"), _catalog("zh_CN")
    assert sorted(m for m in MESSAGES if m not in used) == []
    assert sorted(m for m in MESSAGES if (None, m) not in en or not zh.get((None, m))) == []


@pytest.mark.parametrize("msgid", sorted(MESSAGES))
def test_the_rule_text_takes_the_generic_placeholders(msgid: str) -> None:
    """The rule's text fills only what the template gives the generic message; it words a
    commit without a PR exactly where the catalog does (else a commit's report would say
    "this PR's commit")."""
    words: Words = MESSAGES[msgid]
    takes = set(_PLACEHOLDER.findall(msgid))
    texts = [words.en, words.zh, *(words.commit or ())]
    assert all(t.strip() for t in texts)
    assert [t for t in texts if not set(_PLACEHOLDER.findall(t)) <= takes] == []
    assert (words.commit is not None) == (("commit", msgid) in _catalog("en"))
    # the Chinese text is Chinese, the English one is not
    assert re.search(r"[\u4e00-\u9fff]", words.zh) and not re.search(r"[\u4e00-\u9fff]", words.en)


def test_the_catalog_puts_the_rule_words_first() -> None:
    """With the rule, a generic message reads as the rule words it, per language and for a
    commit; without one, it is the catalog's generic text."""
    msgid = next(m for m, w in MESSAGES.items() if w.commit is not None)
    words = MESSAGES[msgid]
    zh_generic = _catalog("zh_CN")[(None, msgid)]
    assert subject_catalog("en", "", "cudagraph").gettext(msgid) == words.en
    assert subject_catalog("zh", "", "cudagraph").gettext(msgid) == words.zh
    assert subject_catalog("en", "commit", "cudagraph").gettext(msgid) == words.commit[0]
    assert subject_catalog("zh", "commit", "cudagraph").gettext(msgid) == words.commit[1]
    assert subject_catalog("en").gettext(msgid) == msgid
    assert subject_catalog("zh").gettext(msgid) == zh_generic != words.zh
    assert subject_catalog("en", "commit").gettext(msgid) == _catalog("en")[("commit", msgid)]
    # another message is the catalog's, with or without the rule
    other = "Who pays: %(party)s; what the higher level made possible is no longer used."
    assert other not in MESSAGES
    assert subject_catalog("zh", "", "cudagraph").gettext(other) == \
        subject_catalog("zh").gettext(other) != other


def test_the_compiled_templates_are_kept_apart_per_rule_wording() -> None:
    """Messages without variables are compiled into the report's templates: the rule's
    wording names their cache, so another wording never reads them."""
    assert rules_key("") == ""
    assert rules_key("cudagraph").startswith("cudagraph-")


def test_the_matrix_column_is_the_rules() -> None:
    assert rule_column("cudagraph") == "Spec decode"
    assert rule_column("") == "Audit rule"


def test_rule_modules_are_modules_or_packages_and_unknown_ones_are_named() -> None:
    assert "cudagraph" in rule_modules() and "words" not in rule_modules()
    with pytest.raises(InputError, match="unknown rule module 'nosuch'"):
        rule_messages("nosuch")


def test_a_feature_label_comes_from_the_profile(tmp_path: Path) -> None:
    cg = load_profile("vllm-cudagraph")
    assert cg.feature_label("speculative decoding", "zh") == "推测解码"
    assert cg.feature_label("MTP", "zh") == "MTP"
    text = (data_dir() / "profiles" / "vllm-query-len.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('[feature_labels]\n', '[feature_labels]\nNoSuch = { en = "x", '
                                'zh = "某" }\n'), encoding="utf-8")
    with pytest.raises(InputError, match=r"feature_labels\.NoSuch: 'NoSuch' is not a key of "
                                         r"\[features\]"):
        load_profile(str(bad))
