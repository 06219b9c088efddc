"""One Jinja2 environment per language: Babel catalogs, locale dates, glossary labels.

Messages live in ``templates/locales/<locale>/LC_MESSAGES/prkb.po`` (English msgids). The
``.po`` files are read at run time with Babel and compiled in memory (no ``.mo`` files in
the tree). To add messages, write ``{{ _("English text") }}`` or ``{% trans %}`` in a
template (in Python, ``gettext("English text")``, or :func:`N_` around a constant looked up
later), then add the msgid with its Chinese msgstr to the ``zh_CN`` catalog and with an empty
msgstr to the ``en`` one (the msgid is the English text). ``python3 tests/catalog.py
extract`` writes every message in use to ``templates/locales/prkb.pot`` (the templates and
Python files ``templates/babel.cfg`` names); ``python3 tests/catalog.py check`` (and
``tests/test_catalog_workflow.py``) fails on a message missing from a catalog, an entry no
code says, or a stale ``.pot``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import struct
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import babel
import jinja2
import jinja2.ext
from babel.dates import format_date as _babel_date
from babel.dates import format_datetime as _babel_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from markupsafe import Markup

from ..atomic import write_atomic
from ..dates import parse_when
from ..errors import InputError, PrkbError
from ..glossary import label as glossary_label
from ..paths import data_dir, templates_dir
from . import markdown as mdsafe
from .jinja_calls import (
    DirectCodeGenerator,
    FastTemplate,
    LinkMarkup,
    PlainCallContext,
    plain_call,
    safe_escape,
)
from .template_cache import KeptBytecodeCache, touch

LANGS = ("zh", "en")
LOCALES = {"zh": "zh_CN", "en": "en"}
DOMAIN = "prkb"
_UNKNOWN = {"zh": "未知", "en": "unknown"}
_new_str = str.__new__  # Markup of a plain string without the checks of Markup.__new__
# a text whose every "%" conversion is "%(name)s" or "%%"
_STRING_CONVERSIONS = re.compile(r"(?:[^%]|%%|%\([^()]*\)s)*", re.S)


def locale_of(lang: str) -> str:
    if lang not in LOCALES:
        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return LOCALES[lang]


def catalog_path(lang: str) -> Path:
    return templates_dir() / "locales" / locale_of(lang) / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=8)
def translations(lang: str) -> Translations:
    """The language's catalog, read from its ``.po`` file and compiled in memory (cached in
    the process, and on disk: :func:`compiled_catalog_path`)."""
    path = catalog_path(lang)
    if not path.exists():
        raise InputError(f"message catalog {path} is missing")
    po = path.read_bytes()
    compiled = compiled_catalog_path(lang, po)
    if compiled is not None:
        try:
            with compiled.open("rb") as fh:
                read = Translations(fp=fh, domain=DOMAIN)
            touch(compiled)  # in use: kept by the folder's clean-up (template_cache.prune)
            return read
        except (OSError, ValueError, struct.error):
            pass  # not made yet, unreadable or damaged: compiled below, and replaced
    catalog = read_po(io.BytesIO(po), locale=locale_of(lang), domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    if compiled is not None:
        with contextlib.suppress(OSError, InputError):  # no cache: compiled again next time
            write_atomic(compiled, buf.getvalue())
    buf.seek(0)
    return Translations(fp=buf, domain=DOMAIN)


class SubjectCatalog:
    """A language's catalog as a report about one kind of subject sees it: a message the
    catalog words for that subject (``msgctxt`` ``subject``, e.g. ``commit``: a commit
    without a pull request, where "this PR" would be untrue) comes from there; every other
    message is the catalog's own. Without a subject it is the catalog itself.

    ``own``: the profile's audit rule's wording of generic messages (msgid -> text of this
    language and subject, :func:`~prkb.analyze.audit.rule_messages`), which comes first."""

    def __init__(self, catalog: Translations, subject: str,
                 own: dict[str, str] | None = None) -> None:
        self.catalog = catalog
        self.subject = subject
        self.own = own or {}

    def gettext(self, msgid: str) -> str:
        mine = self.own.get(msgid)
        if mine is not None:
            return mine
        if self.subject:
            # the message itself when the catalog has no wording for the subject
            got = str(self.catalog.pgettext(self.subject, msgid))
            if got != msgid:
                return got
        return str(self.catalog.gettext(msgid))


@lru_cache(maxsize=16)
def subject_catalog(lang: str, subject: str = "", rules: str = "") -> SubjectCatalog:
    """The catalog of ``lang`` for reports about ``subject`` (:class:`SubjectCatalog`), with
    the wording of the audit rule module ``rules`` over its generic messages."""
    if not rules:
        return SubjectCatalog(translations(lang), subject)
    from ..analyze.audit import rule_messages  # (the audit's imports only where a rule is)

    return SubjectCatalog(translations(lang), subject, {
        msgid: words.text(lang, subject) for msgid, words in rule_messages(rules).items()})


@lru_cache(maxsize=8)
def rules_key(rules: str) -> str:
    """A short hash of the rule module's wording (part of the name of the compiled templates
    that hold its messages: :func:`language_cache`); "" without a rule module."""
    if not rules:
        return ""
    from ..analyze.audit import rule_messages

    words = sorted((k, v.en, v.zh, v.commit) for k, v in rule_messages(rules).items())
    return rules + "-" + hashlib.sha256(repr(words).encode()).hexdigest()[:12]


@lru_cache(maxsize=8)
def language_key(lang: str) -> str:
    """A short hash of the texts a compiled template can hold of one language: its ``.po``
    catalog and the glossary (``data/glossary.toml``). Jinja computes a filter of constants
    when it compiles (``'raised' | label('directions')``), and :class:`ConstantMessages`
    writes messages in; :func:`language_cache` names compiled templates by this key, so an
    edited catalog or glossary compiles them afresh."""
    h = hashlib.sha256(lang.encode())
    for path in (catalog_path(lang), data_dir() / "glossary.toml"):
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"missing")  # translations() and glossary() say so when they are read
    return h.hexdigest()[:16]


def compiled_catalog_path(lang: str, po: bytes) -> Path | None:
    """Where the compiled form of a catalog is kept between runs: in Jinja's per-user cache
    folder (the one :func:`bytecode_cache` uses), named by the hash of the ``.po`` text and
    Babel's version, so an edited catalog or another Babel is compiled afresh. Reading the
    ``.po`` with Babel takes about 0.1 s a language, at the start of every process that
    renders. None when there is no such folder."""
    cache = bytecode_cache()
    folder = getattr(cache, "directory", None)
    if not folder:
        return None
    key = hashlib.sha256(po + f"|babel {babel.__version__}".encode()).hexdigest()[:32]
    return Path(folder) / f"__prkb_catalog_{locale_of(lang)}_{key}.mo"


# --- Chinese: a space where a Latin word meets a Chinese character -------------------------

_PLACEHOLDER = re.compile(r"%\(([^()]*)\)s")


def _cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


@lru_cache(maxsize=4096)
def _cjk_sides(text: str) -> tuple[tuple[str, bool, bool], ...]:
    """Each ``%(name)s`` of a catalog text with a Chinese character right before or right
    after it: (name, before, after). Empty for most texts."""
    sides = []
    for m in _PLACEHOLDER.finditer(text):
        before = m.start() > 0 and _cjk(text[m.start() - 1])
        after = m.end() < len(text) and _cjk(text[m.end()])
        if before or after:
            sides.append((m.group(1), before, after))
    return tuple(sides)


def cjk_spaced(text: str, variables: dict[str, Any]) -> dict[str, Any]:
    """``variables`` for ``text % variables`` in a Chinese sentence, with a space added
    where a value's Latin letter or digit would touch the sentence's Chinese character
    ("完整 CUDA Graph 的回归测试", not "CUDA Graph的"). A catalog sentence writes the space
    itself where it knows the value is Latin (around an identifier); this adds it only where
    it depends on the value (a profile's phrase may end in Chinese or in Latin)."""
    sides = _cjk_sides(text)
    if not sides:
        return variables
    return _spaced(sides, variables)


def _spaced(sides: tuple[tuple[str, bool, bool], ...], variables: dict[str, Any]) -> dict[str, Any]:
    """:func:`cjk_spaced` with the text's placeholders read (``_cjk_sides``)."""
    spaced = dict(variables)
    for name, before, after in sides:
        value: Any = spaced.get(name)
        kind = type(value)
        # Markup and other objects are left alone, but for a link: spaced by its text
        seen = value if kind is str else value.text if kind is LinkMarkup else None
        if not seen:
            continue
        if after and _latin(seen[-1]):
            value = value + " "
        if before and _latin(seen[0]):
            value = " " + value
        spaced[name] = value
    return spaced


def gettext(lang: str, msgid: str) -> str:
    """A message from the catalog for use in Python code (prefer templates)."""
    return str(translations(lang).gettext(msgid))


def N_(msgid: str) -> str:
    """``msgid`` unchanged: marks a catalog message that Python code keeps in a constant and
    translates later (``gettext(lang, CONSTANT)``), so that extraction finds it
    (``tests/catalog.py``; ``N_`` is one of Babel's default keywords)."""
    return msgid


# --- dates --------------------------------------------------------------------------------

ZONE_UNKNOWN = N_("%(time)s (time zone unknown)")


def zone_unknown(text: str, lang: str) -> str:
    """A time of day whose zone the record does not give, said so (never printed as UTC)."""
    return gettext(lang, ZONE_UNKNOWN) % {"time": text}


def format_datetime_for(value: Any, lang: str, fmt: str = "medium") -> str:
    """Locale date-time. Aware times are shown in UTC and say so; a naive time is shown as
    stored and says that its time zone is unknown; a date alone is shown as a date."""
    when = parse_when(value)
    if when is None:
        return _UNKNOWN[lang]
    if not isinstance(when, datetime):
        return str(_babel_date(when, "long", locale=locale_of(lang)))
    if when.tzinfo is not None:
        utc = when.astimezone(UTC).replace(tzinfo=None)
        return f"{_babel_datetime(utc, fmt, locale=locale_of(lang))} UTC"
    return zone_unknown(str(_babel_datetime(when, fmt, locale=locale_of(lang))), lang)


def format_date_for(value: Any, lang: str, fmt: str = "long") -> str:
    when = parse_when(value)
    if when is None:
        return _UNKNOWN[lang]
    day = when.date() if isinstance(when, datetime) else when
    return str(_babel_date(day, fmt, locale=locale_of(lang)))


# --- the environment ----------------------------------------------------------------------


def _autoescape_html(name: str | None) -> bool:
    return bool(name) and str(name).endswith((".html", ".html.j2", ".htm"))


@lru_cache(maxsize=8)
def bytecode_cache(kind: str = "") -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (Jinja's per-user folder under the temp dir,
    keyed by each template's source): a new process does not compile them again.

    Jinja's key is the template's name and source; what an environment compiles into a
    template beyond that (escaping, text its extensions write in) is not part of it, so an
    environment that differs so names its ``kind`` and keeps its own files."""
    try:  # the folder's files unused for a month deleted (template_cache.prune)
        return KeptBytecodeCache(pattern=f"__jinja2_prkb_{kind}_%s.cache" if kind
                                 else "__jinja2_prkb_%s.cache")
    except (OSError, RuntimeError):
        return None


# ``{{ _("a message") }}``: a message without variables, alone in an output tag
_CONSTANT_MESSAGE = re.compile(r"""\{\{ _\((?:"([^"\\{}]*)"|'([^'\\{}]*)')\) \}\}""")


class ConstantMessages(jinja2.ext.Extension):
    """Writes the text of each ``{{ _("a message") }}`` without variables into the template's
    source when it is compiled, so a message costs what literal text costs (a PR page says
    about fifty). The text is what the environment's ``_`` returns for the message, which
    ``{{ }}`` would write as it is: catalog text is trusted (Markup under autoescape).

    Only in an environment whose ``_`` is a plain function of the message (marked by
    :func:`~.jinja_calls.plain_call`: :func:`escaping_gettext`, the report's text gettext),
    set before its first template compiles. Its compiled templates hold one language's
    messages: the environment keeps them apart (:func:`language_cache`). A message whose text
    has a brace, or is blank, is left to the template (it would read as template syntax, or
    let ``lstrip_blocks`` strip what it did not strip before)."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        gettext = self.environment.globals.get("_")
        if not callable(gettext) or not getattr(gettext, "_plain_call", False) \
                or "{{ _(" not in source:
            return source

        def constant(m: re.Match[str]) -> str:
            msgid = m.group(1) if m.group(1) is not None else m.group(2)
            text = str(gettext(msgid))
            if "{" in text or "}" in text or not text.strip():
                return m.group(0)
            return text

        return _CONSTANT_MESSAGE.sub(constant, source)


# what the compiled code needs of its template's namespace changes with the code generator
# (jinja_calls.DirectCodeGenerator): a compiled template of another generation is not read
CODE_GENERATION = "g4"


def language_cache(kind: str, lang: str) -> jinja2.BytecodeCache | None:
    """The bytecode cache of an environment of ``lang``: what its templates compile to holds
    that language's text (labels of constants, and messages: :class:`ConstantMessages`), so
    their files are kept apart per language and per :func:`language_key` (Jinja keys a
    compiled template by its name and source only)."""
    return bytecode_cache(f"{kind}-{lang}-{language_key(lang)}-{CODE_GENERATION}")


def constant_messages(env: jinja2.Environment, kind: str, lang: str) -> None:
    """Turn on :class:`ConstantMessages` in ``env`` (its ``_`` set, no template loaded yet),
    its compiled templates kept apart as ``kind`` (:func:`language_cache`)."""
    env.add_extension(ConstantMessages)
    env.bytecode_cache = language_cache(kind, lang)


def jinja_env(lang: str, *, autoescape: bool | None = None) -> jinja2.Environment:
    """A fresh environment for ``lang`` over ``templates/``.

    Autoescape is on for ``.html``/``.html.j2`` templates unless ``autoescape`` forces it.
    Filters: ``format_date``, ``format_datetime`` (Babel, per locale), ``label(section)``
    (glossary), ``unknown`` (the KB lacks it), and for untrusted text ``md``/``code``/
    ``fence``/``mdlink`` (inert Markdown) and ``plain`` (plain text). Globals: ``_``/``gettext``,
    ``lang``, ``locale``.
    """
    locale = locale_of(lang)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        extensions=["jinja2.ext.i18n"],
        autoescape=_autoescape_html if autoescape is None else autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # what a template compiles to holds the language's labels: kept apart per language
        bytecode_cache=language_cache("lang", lang),
    )
    env.template_class = FastTemplate  # escaping without copies of safe values
    env.code_generator_class = DirectCodeGenerator  # x.name and gettext calls, shorter
    env.install_gettext_translations(translations(lang), newstyle=True)  # type: ignore[attr-defined]
    if lang == "zh":
        env.globals["gettext"] = env.globals["_"] = _zh_newstyle_gettext(translations(lang))
    env.filters["format_datetime"] = lambda v, fmt="medium": format_datetime_for(v, lang, fmt)
    env.filters["format_date"] = lambda v, fmt="long": format_date_for(v, lang, fmt)
    env.filters["label"] = lambda code, section: glossary_label(section, str(code), lang)
    env.filters["unknown"] = lambda v: _UNKNOWN[lang] if v in (None, "") else v
    # a profile's word at the start of a sentence or a column title ("builder" -> "Builder";
    # Jinja's capitalize would also lower the rest: "KV backend" -> "Kv backend")
    env.filters["capfirst"] = lambda v: v[:1].upper() + v[1:]
    env.filters["md"] = mdsafe.md_escape
    env.filters["code"] = mdsafe.md_code
    env.filters["fence"] = mdsafe.md_fence
    env.filters["mdlink"] = mdsafe.md_link
    env.filters["plain"] = mdsafe.plain
    env.globals["lang"] = lang
    env.globals["locale"] = locale
    return env


def _zh_newstyle_gettext(catalog: Translations) -> Callable[..., str]:
    """The i18n extension's newstyle ``gettext`` (Markup under autoescape, ``%`` always
    applied), with :func:`cjk_spaced` variables."""

    @jinja2.pass_context
    def gettext(__context: jinja2.runtime.Context, __string: str, **variables: Any) -> str:
        rv: str = catalog.gettext(__string)
        if __context.eval_ctx.autoescape:
            rv = Markup(rv)
        return rv % cjk_spaced(rv, variables)

    return gettext


# --- the sentences several templates say ---------------------------------------------------

# the report, the digest and the site's PR page say these sentences with the same macros
SENTENCES = {"changes": "report/_changes.j2", "evidence": "report/_evidence.j2"}
# a side of a change of the effective state: the report's and the digest's environments only
# (its macro needs their filter c and globals codes and labels)
STATE_SENTENCES = "report/_state.j2"


def sentence_macros(
    env: jinja2.Environment, lang: str | None = None, catalog: SubjectCatalog | None = None,
    *, state: bool = False, evidence: Callable[[Any, Any, Any], str] | None = None,
) -> dict[str, Any]:
    """The global ``sentences`` of ``env``: the module of each template of :data:`SENTENCES`
    (``sentences.changes.change``, ``sentences.evidence.lines``...), made once.

    The very module a ``{% from %}`` import in a template gets (``Template.module``), without
    the import's cost on every render (a template lookup and a comparison of the importing
    template's globals with the module's, ~40 µs each). Call it when the environment's
    globals and filters are all set: a module keeps the ones it was made with. With the
    environment's language and catalog, a relation's evidence is worded once per build for
    every environment that words it alike (:mod:`.evidence_lines`), by ``evidence`` when
    given (``render.evidence_items.EvidenceItems``: the macro's text, in about half its
    time), else by the macro. ``state``: with ``sentences.state.state_side``
    (:data:`STATE_SENTENCES`)."""
    modules = {name: env.get_template(path).module for name, path in SENTENCES.items()}
    if state:
        modules["state"] = env.get_template(STATE_SENTENCES).module
    if lang is not None and catalog is not None:
        from . import evidence_lines

        modules["evidence"] = evidence_lines.cached_module(
            modules["evidence"], evidence_lines.wording(env, lang, catalog.gettext), evidence)
    return modules


# --- HTML under autoescape ----------------------------------------------------------------


def html_env(lang: str, what: str) -> jinja2.Environment:
    """A fresh i18n environment for HTML under autoescape (the site's pages, the report's
    HTML), its gettext cached and returning Markup (catalog text is trusted; ``%`` variables
    are escaped), fast date filters, and calls of :func:`~.jinja_calls.plain_call` functions
    made directly. ``what`` names the template the check is made for, in the error."""
    env = jinja_env(lang)
    if not env.autoescape or not env.autoescape(what):  # type: ignore[operator]
        raise PrkbError(f"the template environment must autoescape HTML ({what})")
    fast_lookups(env)
    env.filters.update(date_filters(lang))
    # ``_`` straight to gettext: the i18n extension's alias resolves and calls it each time
    env.globals["gettext"] = env.globals["_"] = escaping_gettext(lang)
    constant_messages(env, "html", lang)
    return env


def fast_lookups(env: jinja2.Environment) -> None:
    """What an environment that renders many pages in one process saves on every one (the
    same output): no check of the template files' times per render (they do not change
    while it runs), ``x.name`` of a plain dict read without the failed attribute lookup, and
    calls of :func:`~.jinja_calls.plain_call` functions, macros and built-ins made directly
    (:class:`~.jinja_calls.PlainCallContext`)."""
    env.auto_reload = False
    env.getattr = _dict_first(env.getattr)  # type: ignore[method-assign,assignment]
    env.context_class = PlainCallContext


def escaping_gettext(lang: str, subject: str = "", rules: str = "") -> Callable[..., Markup]:
    """The newstyle ``gettext`` of an autoescaping environment (Markup of the catalog text,
    ``%`` variables escaped), with each message looked up once, for
    :class:`~.jinja_calls.PlainCallContext` (a plain call); ``subject``: the messages worded
    for that kind of subject (:class:`SubjectCatalog`); ``rules``: with the wording of that
    audit rule module."""
    catalog = subject_catalog(lang, subject, rules)
    zh = lang == "zh"

    @lru_cache(maxsize=4096)
    def lookup(msgid: str) -> Markup:
        return Markup(catalog.gettext(msgid))

    @lru_cache(maxsize=4096)
    def constant(msgid: str) -> Markup:
        return lookup(msgid) % {}  # as with variables: "%%" becomes "%"

    @lru_cache(maxsize=4096)
    def message(msgid: str) -> tuple[Markup, str | None, tuple[tuple[str, bool, bool], ...]]:
        # the catalog text; the text when its every conversion is "%(name)s" (or "%%"), else
        # None; the placeholders a Chinese character touches (cjk_spaced), for Chinese
        text = lookup(msgid)
        plain = str(text)
        return (text, plain if _STRING_CONVERSIONS.fullmatch(plain) else None,
                _cjk_sides(plain) if zh else ())

    @plain_call
    def gettext(msgid: str, **variables: Any) -> Markup:
        if variables:
            text, strings, sides = message(msgid)
            if sides:
                variables = _spaced(sides, variables)
            if strings is None:
                return text % variables
            # what Markup's "%" makes of "%(name)s": the text of escape(value), without
            # its wrapper object per value; the call's own dict of variables escaped in
            # place (a Markup, most values, as it is), no new one
            for k, v in variables.items():
                if type(v) is not Markup:
                    variables[k] = safe_escape(v)
            return _new_str(Markup, strings % variables)
        return constant(msgid)

    return gettext


def text_gettext(lang: str, subject: str = "", rules: str = "") -> Callable[..., str]:
    """The newstyle ``gettext`` of an environment that does not escape (what the i18n
    extension's does there: the catalog text with ``%`` applied, Chinese spaced by
    :func:`cjk_spaced`), with each message looked up once, for
    :class:`~.jinja_calls.PlainCallContext` (a plain call); ``subject`` and ``rules`` as for
    :func:`escaping_gettext`. An environment that sets it compiles its templates with direct
    calls of it (:class:`~.jinja_calls.DirectCodeGenerator`): keep them in a bytecode cache
    of their own (:func:`language_cache`)."""
    catalog = subject_catalog(lang, subject, rules)
    lookup = lru_cache(maxsize=4096)(catalog.gettext)
    zh = lang == "zh"

    @plain_call
    def gettext(msgid: str, **variables: Any) -> str:
        text = str(lookup(msgid))
        return text % (cjk_spaced(text, variables) if zh else variables)

    return gettext


def date_filters(lang: str) -> dict[str, Callable[..., str]]:
    """``format_date`` and ``format_datetime`` as :func:`jinja_env` makes them, with the
    Babel locale parsed once (not on every call) and each day's date formatted once."""
    from babel import Locale
    from babel.dates import format_date, format_datetime, format_time, get_datetime_format

    loc = Locale.parse(locale_of(lang))
    unknown = format_date_for(None, lang)

    @lru_cache(maxsize=4096)
    def day_text(day: date, fmt: str) -> str:
        return str(format_date(day, fmt, locale=loc))

    def date_filter(value: Any, fmt: str = "long") -> str:
        when = parse_when(value)
        if when is None:
            return unknown
        return day_text(when.date() if isinstance(when, datetime) else when, fmt)

    @lru_cache(maxsize=8)
    def joiner(fmt: str) -> str:
        pattern = get_datetime_format(fmt, locale=loc)  # type: ignore[arg-type]
        return str(pattern).replace("'", "")

    @lru_cache(maxsize=8192)
    def time_text(hms: tuple[int, int, int, int], fmt: str) -> str:
        return str(format_time(datetime(2000, 1, 1, *hms, tzinfo=UTC), fmt, tzinfo=None,
                               locale=loc))

    def naive_utc_text(when: datetime, fmt: str) -> str:
        """``format_datetime(when, fmt)`` for a naive datetime: Babel joins its date and
        time texts with the locale's pattern; both parts are cached here."""
        if fmt not in ("full", "long", "medium", "short"):
            return str(format_datetime(when, fmt, locale=loc))
        hms = (when.hour, when.minute, when.second, when.microsecond)
        return joiner(fmt).replace("{0}", time_text(hms, fmt)).replace(
            "{1}", day_text(when.date(), fmt))

    def datetime_filter(value: Any, fmt: str = "medium") -> str:
        when = parse_when(value)
        if when is None:
            return unknown
        if not isinstance(when, datetime):
            return day_text(when, "long")
        if when.tzinfo is not None:
            utc = when.astimezone(UTC).replace(tzinfo=None)
            return f"{naive_utc_text(utc, fmt)} UTC"
        return zone_unknown(naive_utc_text(when, fmt), lang)

    return {"format_date": date_filter, "format_datetime": datetime_filter}


_DICT_ATTRS = frozenset(dir(dict))


def _dict_first(default: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """Jinja's ``x.name`` for the site's plain dicts without the failed attribute lookup.

    Jinja tries ``getattr(x, name)`` first and ``x[name]`` after; a plain dict has no
    attributes but those of its class, so for any other name the item is what Jinja finds.
    The same result, without raising and catching an AttributeError on every lookup; any
    other object's attribute is read here too (what Jinja tries first), without its call."""

    def getattr_(obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            if attribute not in _DICT_ATTRS:
                try:
                    return obj[attribute]
                except KeyError:
                    pass
            return default(obj, attribute)
        try:  # what Environment.getattr tries first, without its call (formatter, labels...)
            return getattr(obj, attribute)
        except AttributeError:
            return default(obj, attribute)

    return getattr_
