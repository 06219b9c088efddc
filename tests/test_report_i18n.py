"""Catalogs: every template message has a Chinese translation; the environment's filters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
from babel.messages.pofile import read_po
from jinja2.ext import babel_extract

from prkb.paths import templates_dir
from prkb.render.i18n import (
    catalog_path,
    cjk_spaced,
    format_datetime_for,
    html_env,
    jinja_env,
    translations,
)


def _msgids(folder: Path) -> set[str]:
    ids: set[str] = set()
    for path in sorted(folder.rglob("*.j2")):
        with path.open("rb") as fh:
            for _line, _func, message, _comments in babel_extract(
                fh, ["_", "gettext", "ngettext"], [], {"extensions": "jinja2.ext.i18n"}
            ):
                # an ngettext call's catalog entry is keyed by its singular
                msg = message[0] if isinstance(message, tuple) else message
                if msg:
                    ids.add(msg)
    return ids


def test_every_report_msgid_has_a_chinese_translation():
    ids = _msgids(templates_dir() / "report")
    assert len(ids) > 100
    with catalog_path("zh").open("rb") as fh:
        zh = read_po(fh)
    missing = sorted(i for i in ids if not (zh.get(i) and zh.get(i).string))
    assert not missing, f"add to {catalog_path('zh')}: {missing}"
    with catalog_path("en").open("rb") as fh:
        en = read_po(fh)
    assert not sorted(i for i in ids if en.get(i) is None)


def test_placeholders_survive_translation():
    with catalog_path("zh").open("rb") as fh:
        zh = read_po(fh)
    import re

    for m in zh:
        if m.id and m.string:
            # a plural entry: its singular against each of its forms
            source = m.id[0] if isinstance(m.id, tuple) else m.id
            forms = m.string if isinstance(m.string, tuple) else (m.string,)
            want = sorted(re.findall(r"%\(\w+\)[sd]|\{\w+\}", str(source)))
            for form in forms:
                got = sorted(re.findall(r"%\(\w+\)[sd]|\{\w+\}", str(form)))
                assert want == got, m.id


def test_environment_translates_and_escapes():
    zh = jinja_env("zh")
    assert zh.from_string('{{ _("Executive summary") }}').render() == "执行摘要"
    assert jinja_env("en").from_string('{{ _("Executive summary") }}').render() == (
        "Executive summary"
    )
    assert zh.from_string('{{ "missing-tests"|label("risk_tags") }}').render() == "缺少测试覆盖"
    page = zh.get_template("report/page.html.j2")
    assert page.environment.autoescape is not False
    html_env = jinja_env("en")
    assert callable(html_env.autoescape) and html_env.autoescape("site/x.html")
    assert not html_env.autoescape("report/report.j2")
    out = jinja_env("en", autoescape=True).from_string("{{ x }}").render(x="<b>")
    assert out == "&lt;b&gt;"
    assert translations("zh") is translations("zh")  # compiled once
    with pytest.raises(jinja2.UndefinedError):
        jinja_env("en").from_string("{{ nope }}").render()


def test_dates_per_locale():
    # a time without a zone is shown as written and says its zone is unknown (never UTC)
    assert format_datetime_for("2026-07-09T10:09:00", "zh") == "2026年7月9日 10:09:00（时区未知）"
    assert format_datetime_for("2026-07-09T10:09:00", "en") == (
        "Jul 9, 2026, 10:09:00\u202fAM (time zone unknown)"
    )
    assert format_datetime_for("2026-07-09T10:09:00Z", "en").endswith("UTC")
    assert format_datetime_for(None, "zh") == "未知"
    assert format_datetime_for("garbage", "en") == "unknown"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_impossible_day_is_unknown_not_an_error(lang):
    # the report's own date parser raised ValueError on a well-formed but impossible day;
    # prkb.dates.parse_when (the one parser) reads it as no date
    unknown = format_datetime_for(None, lang)
    assert format_datetime_for("2025-02-30", lang) == unknown
    assert format_datetime_for("2025-02-28", lang) != unknown
    # an offset is kept: the time is shown in UTC
    assert "UTC" in format_datetime_for("2025-03-04T23:30:00-05:00", lang)


SPACED = '{{ _("补充一个%(test)s的回归测试，由%(who)s提出", test=t, who=w) }}'


@pytest.mark.parametrize("autoescape", [False, True])
def test_zh_sentence_spaces_a_latin_value_where_it_meets_chinese(autoescape):
    # a profile's phrase ends in Latin ("... CUDA Graph") or in Chinese: the space between
    # the value and the sentence's next Chinese character depends on the value
    env = jinja_env("zh", autoescape=autoescape)
    got = env.from_string(SPACED).render(t="捕获完整 CUDA Graph", w="Alice")
    assert got == "补充一个捕获完整 CUDA Graph 的回归测试，由 Alice 提出"
    got = env.from_string(SPACED).render(t="执行解码", w="张三")
    assert got == "补充一个执行解码的回归测试，由张三提出"
    # escaping still applies to the spaced value
    got = env.from_string(SPACED).render(t="<b>x", w="y<")
    assert got == ("补充一个&lt;b&gt;x 的回归测试，由 y&lt;提出" if autoescape
                   else "补充一个<b>x 的回归测试，由 y<提出")
    assert cjk_spaced("%(a)s 的", {"a": "X"}) == {"a": "X"}  # the sentence's own space kept
    html = html_env("zh", "x.html").from_string(SPACED).render(t="CUDA Graph", w="@bob")
    assert html == "补充一个 CUDA Graph 的回归测试，由@bob 提出"
    # English sentences are never touched
    en = jinja_env("en").from_string('{{ _("a%(x)sb", x="X") }}').render()
    assert en == "aXb"


def test_compiled_catalogs_are_kept_between_runs_and_survive_damage(tmp_path, monkeypatch):
    from prkb.render import i18n

    kept = tmp_path / "zh.mo"
    monkeypatch.setattr(i18n, "compiled_catalog_path", lambda lang, po: kept)
    try:
        i18n.translations.cache_clear()
        assert i18n.translations("zh").gettext("Executive summary") == "执行摘要"
        assert kept.stat().st_size > 1000
        good = kept.read_bytes()

        def no_po(*_a, **_k):
            raise AssertionError("the .po was read again")

        monkeypatch.setattr(i18n, "read_po", no_po)
        i18n.translations.cache_clear()  # a new process: the compiled file is read
        assert i18n.translations("zh").gettext("Executive summary") == "执行摘要"
        monkeypatch.undo()
        monkeypatch.setattr(i18n, "compiled_catalog_path", lambda lang, po: kept)
        for damage in (b"not a catalog", good[: len(good) // 3], good[:7]):
            kept.write_bytes(damage)
            i18n.translations.cache_clear()
            assert i18n.translations("zh").gettext("Executive summary") == "执行摘要"
            assert kept.read_bytes() == good  # compiled again and replaced
    finally:
        i18n.translations.cache_clear()


def test_compiled_catalog_is_named_by_the_catalog_text():
    from prkb.render.i18n import compiled_catalog_path

    a, b = compiled_catalog_path("zh", b"x"), compiled_catalog_path("zh", b"y")
    assert a is not None and b is not None and a != b
    assert a == compiled_catalog_path("zh", b"x") and a.suffix == ".mo"


@pytest.fixture
def language_caches(tmp_path: Path) -> Iterator[Path]:
    """A new folder for Jinja's bytecode cache files (the per-user temp folder), with the
    cached environments and keys made afresh before and after the test."""
    import tempfile

    from prkb.render import i18n, report

    def clear() -> None:
        for cached in (i18n.bytecode_cache, i18n.language_key, report._report_env):
            cached.cache_clear()

    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    clear()
    try:
        yield tmp_path
    finally:
        tempfile.tempdir = old
        clear()


def test_compiled_templates_keep_each_language_apart(language_caches: Path) -> None:
    """Messages without variables are compiled into the templates as text
    (i18n.ConstantMessages): Chinese and English environments that share a folder of
    bytecode cache files each get their own language, when they compile the templates and
    when they read them back from those files."""
    from prkb.site.render import escaping_env

    want = {"zh": ("时间线", "Timeline"), "en": ("Timeline", "时间线")}
    for round_ in ("compiled", "read from the cache files"):
        for lang, (said, other) in want.items():
            env = escaping_env(lang, "site/x.html")
            text = env.get_template("site/base.html").render(
                lang_code=lang, csp="", assets="", here="", root="", page_lang=lang, active="",
                switch=[])
            assert f">{said}</a>" in text and f">{other}</a>" not in text, (round_, lang)
        assert len(list(language_caches.rglob("*.cache"))) >= 2, round_


def test_a_report_says_the_same_with_messages_compiled_in(bundled: Any) -> None:
    """Every bundled PR's report in each language and format, rendered with messages
    compiled into the template, equals the same template compiled without ConstantMessages
    (each message looked up when it renders)."""
    from prkb.render import report
    from prkb.render.i18n import ConstantMessages

    numbers = [r[0] for r in bundled.conn.execute("SELECT number FROM prs WHERE number "
                                                   "IS NOT NULL ORDER BY number")]
    assert len(numbers) >= 5
    for lang in ("zh", "en"):
        ctxs = [report.report_context(bundled, n, lang) for n in numbers]
        for fmt in ("md", "txt", "html"):
            env = report._report_env(lang, fmt)
            assert any(isinstance(x, ConstantMessages) for x in env.extensions.values())
            plain = env.overlay(cache_size=64)  # a cache of its own, empty
            plain.extensions = {k: x for k, x in env.extensions.items()
                                if not isinstance(x, ConstantMessages)}
            # no compiled template of env's, in memory or on disk: the report and the
            # section templates it includes compile here without ConstantMessages
            plain.bytecode_cache = None
            src = env.loader.get_source(env, "report/sections/summary.j2")[0]  # type: ignore[union-attr]
            assert '{{ _("' in src
            unfolded = plain.get_template(report.REPORT)
            assert unfolded is not env.get_template(report.REPORT)
            for n, ctx in zip(numbers, ctxs, strict=True):
                folded = env.get_template(report.REPORT).render(ctx)
                assert folded == unfolded.render(ctx), (n, lang, fmt)


def test_an_edited_catalog_compiles_the_templates_again(
        language_caches: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytecode cache files are named by the catalog's and glossary's text: another
    text, other files (the messages compiled in are never a stale catalog's)."""
    from prkb.render import i18n

    first = i18n.language_key("en")
    assert first == i18n.language_key("en") and first != i18n.language_key("zh")
    edited = language_caches / "prkb.po"
    edited.write_bytes(i18n.catalog_path("en").read_bytes() + b"\n# edited\n")
    monkeypatch.setattr(i18n, "catalog_path", lambda lang: edited)
    i18n.language_key.cache_clear()
    assert i18n.language_key("en") != first
