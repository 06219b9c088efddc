"""Profiles: the domain knowledge of one tracked symbol, loaded from TOML."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, cast

from .errors import InputError
from .paths import cache_dir, data_dir

DEFAULT_PROFILE = "vllm-cudagraph"
SCHEMA = "profile.schema.json"  # beside the profiles, in data/profiles/

#: The keys of ``[wording]`` (as ``profile.schema.json`` lists them; a test holds them equal).
WORDING_KEYS = ("feed", "digest_feed", "level", "raise_gain", "raise_risk", "lower_gain",
                "lower_cost", "lowered_test", "raised_test", "core_tag", "holder", "holders")
#: What the code takes for an ``[audit]`` key a profile leaves out: :attr:`Profile.audit` holds
#: them filled in, so every reader sees one value (the schema's ``default`` of each key says the
#: same; ``tests/test_profile_schema_docs.py`` holds them equal).
AUDIT_DEFAULTS: dict[str, Any] = {
    "reorder_flag_position": 1,
    "reorder_threshold_default": 1,
    "reorder_flag_default": False,
    "backend_builder_method": "get_builder_cls",
    "backend_name_method": "get_name",
}
#: The placeholders each ``[wording]`` text may hold (README, "Profiles"); a template replaces
#: them with the class and levels of the change it words. Keys not named here take none.
WORDING_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "raise_gain": frozenset({"before", "after"}),
    "raise_risk": frozenset({"cls"}),
    "lower_gain": frozenset({"cls", "before", "after"}),
}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Platform:
    code: str
    en: str
    zh: str
    path_patterns: tuple[str, ...]
    title_tags: tuple[str, ...]


@dataclass
class Profile:
    name: str
    repo: str
    title_en: str
    title_zh: str
    rules: str
    branch: str
    family: tuple[str, ...]
    methods: tuple[str, ...]
    bool_spellings: tuple[str, ...]
    value_markers: tuple[str, ...]
    enum: str
    display: str
    levels: tuple[str, ...]
    default_level: str
    level_aliases: dict[str, str]
    level_meaning: dict[str, dict[str, str]]
    tests_paths: tuple[str, ...]
    docs_paths: tuple[str, ...]
    build_paths: tuple[str, ...]
    core_paths: tuple[str, ...]
    core_rule: dict[str, Any]
    platforms: tuple[Platform, ...]
    title_tags: dict[str, tuple[str, ...]]
    features: dict[str, tuple[str, ...]]
    #: ``[feature_labels]``: feature -> {"en": ..., "zh": ...} (see :meth:`feature_label`)
    feature_labels: dict[str, dict[str, str]]
    #: ``[audit]``, with :data:`AUDIT_DEFAULTS` for the keys it leaves out
    audit: dict[str, Any]
    docs: dict[str, Any]
    #: ``[wording]``: key -> {"en": ..., "zh": ...}, the profile's domain words
    wording: dict[str, dict[str, str]] = field(default_factory=dict)
    #: ``[[framework]]``: path -> {"en": ..., "zh": ...}, the files of the mechanism itself
    framework: dict[str, dict[str, str]] = field(default_factory=dict)
    #: ``symbol.kind``: what the tracked value is (``enum``: ordered levels; ``int``, ``bool``,
    #: ``str``, ``expr``: kept as written): which directions a change of it has
    kind: str = "enum"
    #: ``profile.python_glob``: which files are Python sources (a glob on the file's name)
    python_glob: str = "*.py"
    #: ``symbol.set_in``: whether an assignment (``=``, ``op=``) to ``self.<spelling>`` in a
    #: class's ``__init__`` sets the value too (``"init"``), besides the class body
    init_sets: bool = False
    #: ``[[symbol.setters]]``: helper calls that set the value: call name -> the argument that
    #: carries it (a position, or a keyword's name)
    setters: dict[str, int | str] = field(default_factory=dict)

    @property
    def builder_bases(self) -> set[str]:
        """The root builder bases (``audit.builder_bases``); none: every class that sets the
        value or inherits it from a scanned class is read as a holder of it."""
        return {str(r) for r in self.audit.get("builder_bases", [])}

    def kind_of(self, attr: str | None) -> str:
        """The kind of a value of spelling ``attr`` (a bool spelling of an enum profile is a
        bool)."""
        return "bool" if attr in self.bool_spellings else self.kind
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    #: sha256 of the profile file's text (what the knowledge base records)
    content_hash: str = ""

    # --- matching -------------------------------------------------------------------------

    @cached_property
    def family_regex(self) -> re.Pattern[str]:
        """Whole-identifier match of any family spelling (not inside a longer identifier)."""
        alts = "|".join(re.escape(s) for s in sorted(self.family, key=len, reverse=True))
        return re.compile(rf"(?<![A-Za-z0-9_])(?:{alts})(?![A-Za-z0-9_])")

    @cached_property
    def watch_regex(self) -> re.Pattern[str]:
        """Family spellings plus the dynamic-support methods, as whole identifiers."""
        names = (*self.family, *self.methods)
        alts = "|".join(re.escape(s) for s in sorted(names, key=len, reverse=True))
        return re.compile(rf"(?<![A-Za-z0-9_])(?:{alts})(?![A-Za-z0-9_])")

    def git_pickaxe_regex(self) -> str:
        """The POSIX extended regex given to ``git log -G`` (whole identifiers).

        Family spellings, the dynamic-support methods, and the profile's value markers (so a
        value changed on a continuation line of a declaration is found too), and the setter
        calls (``symbol.setters``).
        """
        names = (*self.family, *self.methods, *self.setters)
        alts = "|".join([*sorted(names, key=len, reverse=True), *self.value_markers])
        return rf"(^|[^A-Za-z0-9_])({alts})([^A-Za-z0-9_]|$)"

    def git_declaring_regex(self) -> str:
        """A line that looks like a family declaration or the definition of a watched method,
        as a regex valid both as a POSIX ERE (``git grep -E``) and for Python's ``re`` (the tab
        is a literal tab). It only chooses which files to watch; nothing is read from it."""
        blank = "[ \t]"
        fam = "|".join(re.escape(s) for s in self.family)
        alts = [f"^{blank}+({fam}){blank}*[:=]"]
        if self.methods:
            meth = "|".join(re.escape(s) for s in self.methods)
            alts.append(f"def{blank}+({meth}){blank}*\\(")
        if self.init_sets:  # self.<spelling> = / += ... (in __init__)
            alts.append(f"self\\.({fam}){blank}*[-+*/|&]?=[^=]")
        if self.setters:
            calls = "|".join(re.escape(s) for s in self.setters)
            alts.append(f"[^A-Za-z0-9_]({calls}){blank}*\\(")
        return "|".join(alts)

    @cached_property
    def pickaxe_regex(self) -> re.Pattern[str]:
        """``git_pickaxe_regex`` for Python's ``re`` (to find the lines the pickaxe matched)."""
        return re.compile(self.git_pickaxe_regex(), re.MULTILINE)

    def matches_line(self, line: str) -> bool:
        """The one line matcher of every collector and renderer: a changed line matters when
        it names a family spelling or a dynamic-support method as a whole identifier, or
        holds one of the profile's value markers (a value on a continuation line)."""
        return self.pickaxe_regex.search(line) is not None

    def mentions_family(self, text: str) -> bool:
        return self.family_regex.search(text) is not None

    def normalize_level(self, name: str) -> str:
        return self.level_aliases.get(name, name)

    def level_rank(self, level: str | None) -> int | None:
        if level is None:
            return None
        level = self.normalize_level(level)
        try:
            return self.levels.index(level)
        except ValueError:
            return None

    def value_text(self, value: str, attr: str | None = None) -> str:
        """A declared or effective value as shown where a level is expected: a level or an
        expression as it is. A bool (``True``/``False``, the value of a ``bool_spellings``
        declaration) is no level, and a profile says of no bool which level it means, so it is
        shown as the spelling and its value (``full_cudagraph_supported = True``): ``attr``,
        else the profile's bool spelling(s); a profile with none says it is a bool."""
        if not self.has_levels or not self.is_bool_value(value):
            return value  # (a bool profile's values are its own: no level to tell it from)
        spelling = attr if attr in self.bool_spellings else " / ".join(self.bool_spellings)
        # ("True (a bool, not a level)" when the profile names no bool spelling)
        return f"{spelling} = {value}" if spelling else f"{value} (a bool, not a level)"

    @property
    def has_levels(self) -> bool:
        """Whether the value is one of ordered levels (``symbol.kind`` ``enum``): only then does
        a raise or a lowering mean something (a speed-up, a fix) and a value read as a level."""
        return self.kind == "enum"

    def is_bool_value(self, value: str | None) -> bool:
        """Whether a stored value is a bool (see :meth:`value_text`), not a level."""
        return value in ("True", "False")

    def is_test_path(self, path: str) -> bool:
        return any(path.startswith(p) or f"/{p}" in path for p in self.tests_paths)

    def is_core_path(self, path: str) -> bool:
        return path in self.core_paths

    @cached_property
    def _memo(self) -> dict[tuple[str, Hashable], Any]:
        """What :meth:`category` and :meth:`platforms_for` found per path and per title (each
        PR's report asks about the same paths several times), and :meth:`words` per language;
        emptied when it grows large."""
        return {}

    def _remember(self, key: tuple[str, Hashable], value: Any) -> Any:
        if len(self._memo) >= 65536:
            self._memo.clear()
        self._memo[key] = value
        return value

    def remembered(self, kind: str, key: Hashable, make: Callable[[], Any]) -> Any:
        """What ``make()`` returns, made once per ``kind`` and ``key`` (a pure function of the
        key and of this profile: another module's reading of the profile, such as the
        platforms of a change's files and title, asked for several times per report). The
        value is shared: whoever gets it must not change it."""
        got = self._memo.get((kind, key))
        if got is None:
            got = self._remember((kind, key), make())
        return got

    def category(self, path: str) -> str:
        """source, test, docs or build."""
        got: str | None = self._memo.get(("category", path))
        if got is not None:
            return got
        return self._remember(("category", path), self._category(path))

    def _category(self, path: str) -> str:
        if self.is_test_path(path):
            return "test"
        for pat in self.docs_paths:
            if pat.startswith("*") and path.endswith(pat[1:]):
                return "docs"
            if path.startswith(pat):
                return "docs"
        for pat in self.build_paths:
            if path == pat or path.startswith(pat):
                return "build"
        return "source"

    def platforms_for(self, paths: list[str], title: str) -> list[Platform]:
        """The platforms (in the profile's order) a path pattern of which is in one of
        ``paths``, or a title tag of which is a ``[tag]`` of ``title`` (case-insensitive)."""
        hits: set[int] = set()
        for path in paths:
            hits.update(self._hits("path", path))
        hits.update(self._hits("title", title or ""))
        return [plat for i, plat in enumerate(self.platforms) if i in hits]

    def _hits(self, kind: str, text: str) -> frozenset[int]:
        """The indexes of the platforms a path (``kind`` "path") or a title matches."""
        got: frozenset[int] | None = self._memo.get((kind, text))
        if got is not None:
            return got
        if kind == "path":
            found = frozenset(i for i, plat in enumerate(self.platforms)
                              if any(pat in text for pat in plat.path_patterns))
        else:
            tags = {t.lower() for t in re.findall(r"\[([^\]]+)\]", text)}
            found = frozenset(i for i, plat in enumerate(self.platforms)
                              if any(t.lower() in tags for t in plat.title_tags))
        return self._remember((kind, text), found)

    def feature_label(self, name: str, lang: str) -> str:
        """What reports of ``lang`` call the feature ``name`` (its key when the profile's
        ``[feature_labels]`` has no label for it)."""
        return self.feature_labels.get(name, {}).get(lang, name)

    def words(self, lang: str) -> dict[str, str]:
        """The ``[wording]`` texts of ``lang`` by key (both languages are required per key);
        a key the profile leaves out is ``""``, and the template says its generic text. Read
        once per language (every report asks): a new dict each call."""
        return dict(self.remembered("words", lang,
                                    lambda: {k: self.word(k, lang) for k in WORDING_KEYS}))

    def word(self, key: str, lang: str) -> str:
        """One ``[wording]`` text of ``lang`` (:meth:`words`), ``""`` when left out."""
        return self.wording.get(key, {}).get(lang, "")

    def holder_en(self, plural: bool = False) -> str:
        """What the profile calls a class that holds its value, in English, for outputs
        without catalogs (the matrix, the audit's count, the site's folder): ``[wording]
        holder`` or ``holders``, else "class" or "classes"."""
        return self.word("holders" if plural else "holder", "en") or (
            "classes" if plural else "class")

    def title_has(self, kind: str, title: str) -> bool:
        tags = {t.strip().lower() for t in re.findall(r"\[([^\]]+)\]", title or "")}
        words = self.title_tags.get(kind, ())
        if any(w.lower() in tags for w in words):
            return True
        return kind == "revert" and (title or "").startswith("Revert ")


def _tuple(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,)
    return tuple(str(x) for x in v)


def profile_path(name_or_path: str) -> Path:
    """The file of a profile given by bundled name or ``.toml`` path; :class:`InputError` listing
    the known profiles otherwise."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.exists():
        return p
    cand = data_dir() / "profiles" / f"{name_or_path}.toml"
    if cand.exists():
        return cand
    known = sorted(x.stem for x in (data_dir() / "profiles").glob("*.toml"))
    raise InputError(f"unknown profile {name_or_path!r}: known profiles are {', '.join(known)}")


_CACHE: dict[str, Profile] = {}


def load_profile(name_or_path: str | None = None) -> Profile:
    """The profile named (``data/profiles/NAME.toml``) or at a path, validated as a whole
    (:func:`validate_profile`) before anything reads it; parsed once per process."""
    key = name_or_path or DEFAULT_PROFILE
    if key in _CACHE:
        return _CACHE[key]
    path = profile_path(key)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"profile {path}: cannot read it: {e.strerror or e}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"profile {path}: invalid TOML: {e}") from None
    stamp = _valid_stamp(text)
    known_valid = stamp is not None and stamp.is_file()
    validate_profile(raw, path, schema=not known_valid)
    if stamp is not None and not known_valid:
        _write_stamp(stamp)
    prof = build_profile(raw)
    prof.content_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _CACHE[key] = prof
    return prof


def _valid_stamp(text: str) -> Path | None:
    """The file that says a profile of exactly ``text`` passed the schema (under
    :func:`prkb.paths.cache_dir`), named by the hash of the schema, the profile's text and
    prkb's version: an edited profile, schema or prkb is checked again. The schema check
    (jsonschema: about 60 ms of every command's start) then runs once per profile text, not
    once per process; the checks beyond the schema run every time. None without a cache
    folder, or when the schema cannot be read (then the check says so)."""
    from . import __version__

    folder = cache_dir()
    try:
        schema = (data_dir() / "profiles" / SCHEMA).read_bytes()
    except OSError:
        return None
    if folder is None:
        return None
    key = hashlib.sha256(b"\0".join([schema, text.encode("utf-8"), __version__.encode()]))
    return folder / "profiles-valid" / key.hexdigest()


def _write_stamp(stamp: Path) -> None:
    """Leave the stamp of a profile that passed the schema; without a writable cache folder,
    nothing (the next process checks it again)."""
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass


def schema_validator() -> Any:
    """A validator of ``data/profiles/profile.schema.json`` (JSON Schema 2020-12)."""
    import jsonschema

    schema = json.loads((data_dir() / "profiles" / SCHEMA).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def key_text(path_parts: Any) -> str:
    """A key path as a profile's text names it: ``platforms[2].code``, ``(top level)``."""
    parts = [f"[{p}]" if isinstance(p, int) else str(p) for p in path_parts]
    return ".".join(parts).replace(".[", "[") or "(top level)"


# keys an earlier prkb read, by path, with what replaced each (the problem says so)
RENAMED_KEYS: dict[tuple[str, ...], str] = {
    ("audit", "mla_bases"): "base_groups = { mla = [...] } (the rule reads the group \"mla\")",
}


@dataclass(frozen=True)
class ProfileProblem:
    """One problem of a parsed profile: the key it is at (``path``, as :func:`key_text` names
    it), the message, the key whose line shows it (``at``: an unknown key itself), and whether
    the schema found it (else a rule beyond the schema)."""

    path: tuple[str | int, ...]
    message: str
    at: tuple[str | int, ...]
    schema: bool = False


def profile_problems(raw: dict[str, Any], *, schema: bool = True) -> list[ProfileProblem]:
    """Every problem of a parsed profile: the schema's (``data/profiles/profile.schema.json``,
    by key), or, when it has none, each rule a schema cannot say that is broken (levels named
    elsewhere are levels of ``levels.order``; a wording's placeholders; the rule module
    exists). ``schema=False``: the schema check is left out (this very text passed it)."""
    out: list[ProfileProblem] = []
    errors = [] if not schema else sorted(schema_validator().iter_errors(raw),
                                          key=lambda e: list(e.absolute_path))
    for e in errors:
        path = tuple(e.absolute_path)
        if e.validator == "additionalProperties":
            extra = sorted(set(e.instance) - set(e.schema.get("properties", {})))
            message = f"unknown key {', '.join(map(repr, extra))}"
            renamed = [RENAMED_KEYS[k] for x in extra
                       if (k := tuple(str(p) for p in (*path, x))) in RENAMED_KEYS]
            if renamed:
                message += f": it was renamed, write {'; '.join(renamed)}"
            out.append(ProfileProblem(path, message, (*path, *extra[:1]), schema=True))
        else:
            out.append(ProfileProblem(path, e.message, path, schema=True))
    if out:
        return out
    lv = raw.get("levels", {})
    levels = list(lv.get("order", []))
    named: list[tuple[tuple[str | int, ...], Any]] = [(("levels", "default"), lv.get("default"))]
    named += [(("levels", "aliases", k), v) for k, v in lv.get("aliases", {}).items()]
    named += [(("audit", "flag_levels", i), v)
              for i, v in enumerate(raw.get("audit", {}).get("flag_levels", []))]
    for lang, meanings in lv.get("meaning", {}).items():
        named += [(("levels", "meaning", lang, k), k) for k in meanings]
    for where, value in named:
        if value is not None and value not in levels:
            out.append(ProfileProblem(where, f"{value!r} is not one of levels.order "
                                             f"({', '.join(levels)})", where))
    for key in raw.get("feature_labels", {}):
        if key not in raw.get("features", {}):
            where = ("feature_labels", key)
            out.append(ProfileProblem(where, f"{key!r} is not a key of [features]", where))
    for key, texts in raw.get("wording", {}).items():
        takes = WORDING_PLACEHOLDERS.get(key, frozenset())
        for lang, text in texts.items():
            for name in _PLACEHOLDER.findall(text):
                if name not in takes:
                    allowed = ", ".join(f"{{{n}}}" for n in sorted(takes)) or "none"
                    where = ("wording", key, lang)
                    out.append(ProfileProblem(where, f"unknown placeholder {{{name}}} (this "
                                                     f"key takes {allowed})", where))
    rules = raw["profile"].get("rules", "")
    if rules and rules not in rule_modules():
        known = rule_modules()
        where = ("profile", "rules")
        out.append(ProfileProblem(where, f"unknown rule module {rules!r} "
                                         f"(known: {', '.join(known) or 'none'})", where))
    return out


def rule_modules() -> list[str]:
    """The audit rule modules a profile can name (``[profile] rules``): the modules and
    packages of ``prkb/analyze/rules/``."""
    here = Path(__file__).parent / "analyze" / "rules"
    return sorted({p.stem for p in here.glob("*.py") if not p.stem.startswith("_")}
                  | {p.parent.name for p in here.glob("*/__init__.py")})


def validate_profile(raw: dict[str, Any], path: Path | str, *, schema: bool = True) -> None:
    """Check a profile (:func:`profile_problems`). Raises :class:`InputError` naming the file
    and the key of the first problem (with how many more the schema found).
    ``schema=False``: the schema check is left out (this very text passed it before)."""
    problems = profile_problems(raw, schema=schema)
    if problems:
        first = problems[0]
        more = (f" (and {len(problems) - 1} more problems)"
                if first.schema and len(problems) > 1 else "")
        raise InputError(f"profile {path}: {key_text(first.path)}: {first.message}{more}")


def build_profile(raw: dict[str, Any]) -> Profile:
    """The :class:`Profile` of a parsed profile that passed :func:`validate_profile`."""
    meta = raw["profile"]
    sym = raw["symbol"]
    lv = raw.get("levels", {})  # none for a symbol that is no enum of levels
    paths = raw.get("paths", {})
    title = meta.get("title", {})
    return Profile(
        name=meta["name"],
        repo=meta["repo"],
        title_en=title.get("en", meta["name"]),
        title_zh=title.get("zh", title.get("en", meta["name"])),
        rules=meta.get("rules", ""),
        branch=meta.get("branch", "main"),
        family=_tuple(sym["family"]),
        methods=_tuple(sym.get("methods")),
        bool_spellings=_tuple(sym.get("bool_spellings")),
        value_markers=_tuple(sym.get("value_markers")),
        enum=sym.get("enum", ""),
        display=sym.get("display", _tuple(sym["family"])[-1]),
        levels=_tuple(lv.get("order")),
        default_level=lv.get("default", (_tuple(lv.get("order")) or ("",))[0]),
        level_aliases=dict(lv.get("aliases", {})),
        level_meaning={k: dict(v) for k, v in lv.get("meaning", {}).items()},
        tests_paths=_tuple(paths.get("tests", ["tests/"])),
        docs_paths=_tuple(paths.get("docs", ["docs/"])),
        build_paths=_tuple(paths.get("build", [])),
        core_paths=_tuple(paths.get("core", [])),
        core_rule=dict(raw.get("core_rule", {})),
        platforms=tuple(
            Platform(
                code=p["code"],
                en=p.get("en", p["code"]),
                zh=p.get("zh", p.get("en", p["code"])),
                path_patterns=_tuple(p.get("path_patterns")),
                title_tags=_tuple(p.get("title_tags")),
            )
            for p in raw.get("platforms", [])
        ),
        title_tags={k: _tuple(v) for k, v in raw.get("title_tags", {}).items()},
        features={k: _tuple(v) for k, v in raw.get("features", {}).items()},
        feature_labels={k: dict(v) for k, v in raw.get("feature_labels", {}).items()},
        audit={**AUDIT_DEFAULTS, **raw.get("audit", {})},
        docs=dict(raw.get("docs", {})),
        wording={k: dict(v) for k, v in raw.get("wording", {}).items()},
        framework={str(f["path"]): {"en": str(f["en"]), "zh": str(f["zh"])}
                   for f in raw.get("framework", [])},
        kind=str(sym.get("kind", "enum")),
        python_glob=str(meta.get("python_glob", "*.py")),
        init_sets="init" in sym.get("set_in", ["class"]),
        setters={str(x["call"]): x.get("arg", 0) for x in sym.get("setters", [])},
        raw=raw,
    )


# what is computed once per profile object: (what, ``id(profile)``) -> (the profile itself, so
# that an id reused by a later profile never hits, and what was computed for it). Bounded: a
# full table is emptied (a process uses a profile or two; tests make many)
_PER_PROFILE: dict[tuple[str, int], tuple[Profile, Any]] = {}
_PER_PROFILE_LIMIT = 64
_T = TypeVar("_T")


def per_profile(profile: Profile, make: Callable[[Profile], _T]) -> _T:
    """``make(profile)``, computed once per profile object (a Profile is never changed once
    loaded) and per ``make``, by its qualified name."""
    key = (make.__qualname__, id(profile))
    hit = _PER_PROFILE.get(key)
    if hit is None or hit[0] is not profile:
        if len(_PER_PROFILE) >= _PER_PROFILE_LIMIT:
            _PER_PROFILE.clear()
        hit = _PER_PROFILE[key] = (profile, make(profile))
    return cast(_T, hit[1])
