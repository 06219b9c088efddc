"""Consistency audit of a source tree at one revision, read from git objects (no checkout).

For each metadata builder (a class below an ``audit.builder_bases`` class, resolved across
modules) it computes the effective level (first declaration along the MRO, else the profile
default), whether the level is dynamic (an overridden ``profile.methods`` method, or a
conditional value), the levels the builder can report with the condition of each (the branches
of a conditional value, or what the nearest overriding method can return: a ``return`` of the
family attribute stands for the declared level, ``return super()...`` for the parent's), and
the spec-decode readiness decided by the profile's rule module; the rule module turns
inconsistent builders into findings.

:class:`AuditCache` keeps parsed facts by blob sha, so auditing many revisions of one repository
costs one ``git ls-tree`` plus parsing the few blobs that changed.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from ..gitrepo import GitRepo, TreeEntry
from ..models import Finding
from ..profile import Profile, per_profile
from . import state
from .hierarchy import ClassRef, Hierarchy, ModuleFacts, module_name, read_imports
from .rules import InputNames, Link, Words, load_rule, rule_inputs
from .skim import skim
from .symbols import (
    ClassFacts,
    SourceError,
    SupportReturn,
    negate,
    parse_classes,
    parse_source,
    support_text,
)

Warn = Callable[[str], None]


def _no_warn(msg: str) -> None:
    del msg


@dataclass
class BuilderInfo:
    class_name: str
    file: str
    lineno: int
    backend_name: str | None
    declared: str | None  # value declared in this class itself
    effective: str  # the value in force (declared or inherited), maybe an expression
    declared_in: str | None  # class that declares the effective value (None: profile default)
    declared_attr: str | None  # the family spelling used there
    dynamic: bool
    dynamic_reason: str | None
    condition: str | None  # the test of a conditional value
    levels: list[str]  # plain levels the builder can report (value branches, method returns)
    # the profile's base groups (``[audit] base_groups``) the class belongs to: a group's
    # base is in its MRO
    groups: list[str]
    meets_rule: bool | None  # the audit rule's reading (None: it does not apply, or no rule)
    rule_reason: str
    rule_reason_zh: str  # the same in Chinese (the English one from a rule that gives none)
    bases: list[str] = field(default_factory=list)
    ancestors: list[str] = field(default_factory=list)
    # each level with the condition under which the builder reports it (None: always)
    alternatives: list[tuple[str, str | None]] = field(default_factory=list)
    decided_by: str | None = None  # class whose overriding method decides the level
    support: str | None = None  # that method's returns as one line, with conditions
    # declarations along the MRO under a spelling the code no longer reads at this revision
    # (``Class.attr``): they decide nothing
    unread: list[str] = field(default_factory=list)
    # the declared value in force as its source spells it (an older level name), when it differs
    declared_spelled: str | None = None
    # each tracked value in force with where it comes from (``state.Tracked.to_json``), by name
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def level_text(self) -> str:
        """The levels with their conditions (``A when c; B when d``), or the effective value
        when no level could be read."""
        if not self.alternatives:
            return self.effective
        return alternatives_text(self.alternatives)

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.class_name,
            "file": self.file,
            "line": self.lineno,
            "backend": self.backend_name,
            "declared": self.declared,
            "declared_attr": self.declared_attr,
            "effective": self.effective,
            "declared_in": self.declared_in,
            "levels": self.levels,
            "dynamic": self.dynamic,
            "dynamic_reason": self.dynamic_reason,
            "condition": self.condition,
            "alternatives": [{"level": lv, "when": when} for lv, when in self.alternatives],
            "decided_by": self.decided_by,
            "support": self.support,
            "unread": self.unread,
            "values": self.values,
            "groups": self.groups,
            "meets_rule": self.meets_rule,
            "rule_reason": self.rule_reason,
            "rule_reason_zh": self.rule_reason_zh,
            "bases": self.bases,
            "ancestors": self.ancestors,
        }


@dataclass
class AuditResult:
    rev: str
    builders: list[BuilderInfo]
    findings: list[Finding]
    warnings: list[str] = field(default_factory=list)
    # the family spellings the code reads at this revision, each with its first reading site
    # (``path:line``); empty when no reading site could be read (the root base decides then)
    reads: dict[str, str] = field(default_factory=dict)
    # the members of the profile's enum of levels (``symbol.enum``) at this revision, in order;
    # None when no scanned file defines it
    levels: list[str] | None = None

    def builder(self, name: str) -> BuilderInfo | None:
        for b in self.builders:
            if b.class_name == name or b.class_name.rsplit(".", 1)[-1] == name:
                return b
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "rev": self.rev,
            "builders": [b.to_json() for b in self.builders],
            "findings": [f.to_json() for f in self.findings],
            "warnings": self.warnings,
        }

    def summary(self, holder: str = "class", holders: str = "classes") -> str:
        """One line of counts, then each finding. ``holder``/``holders``: what the profile
        calls the classes that hold its value (``[wording]``; builders, backends...)."""
        n, k = len(self.builders), len(self.findings)
        lines = [f"audit of {self.rev[:12]}: {n} {holder if n == 1 else holders}, "
                 f"{k} {'finding' if k == 1 else 'findings'}"]
        for f in self.findings:
            lines.append(f"  {f.rule}  {f.file}  {f.class_name}")
            lines.append(f"    {f.message_en}")
        return "\n".join(lines)


def builder_levels_rows(
    result: AuditResult, with_values: set[tuple[str, str]] | frozenset[tuple[str, str]] = (
        frozenset()),
) -> list[dict[str, Any]]:
    """Rows in the shape the git collector stores in ``builder_levels``; the builders of
    ``with_values`` ((class, file) pairs: those a report will talk about) also carry their
    tracked values with where each comes from (``values``, :mod:`prkb.analyze.state`)."""
    return [
        {
            "class": b.class_name,
            "file": b.file,
            "declared": b.declared,
            "effective": b.effective,
            "dynamic": b.dynamic,
            "levels": list(b.levels),
            "level_text": b.level_text() if b.dynamic else None,
            "meets_rule": b.meets_rule,
            **({"values": b.values} if (b.class_name, b.file) in with_values else {}),
        }
        for b in result.builders
    ]


# --- values ---------------------------------------------------------------------------------


def value_levels(text: str, profile: Profile) -> tuple[list[str], str | None]:
    """Plain levels an effective value can take, and the condition when it is conditional.

    ``"UNIFORM_BATCH"`` -> (["UNIFORM_BATCH"], None); ``"E.ALWAYS if v == 3 else E.UNIFORM_BATCH"``
    -> (["ALWAYS", "UNIFORM_BATCH"], "v == 3"). Unknown expressions give no levels.
    """
    if text in profile.levels:
        return [text], None
    src = text.replace("<unset>", "__unset__").replace("<inherited>", "__inherited__")
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return [], None
    conds: list[str] = []
    levels: list[str] = []

    def walk(n: ast.expr) -> None:
        if isinstance(n, ast.IfExp):
            conds.append(" ".join(ast.unparse(n.test).split()))
            walk(n.body)
            walk(n.orelse)
            return
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if name is not None:
            lv = profile.normalize_level(name)
            if lv in profile.levels and lv not in levels:
                levels.append(lv)

    walk(node)
    return levels, ("; ".join(conds) if conds else None)


def value_alternatives(text: str, profile: Profile) -> list[tuple[str, str | None]]:
    """Each plain level a value can take, with the condition that selects it.

    ``"E.ALWAYS if v == 3 else E.UNIFORM_BATCH"`` -> [("ALWAYS", "v == 3"),
    ("UNIFORM_BATCH", "v != 3")]. Unknown expressions give nothing.
    """
    if text in profile.levels:
        return [(text, None)]
    src = text.replace("<unset>", "__unset__").replace("<inherited>", "__inherited__")
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return []
    out: list[tuple[str, str | None]] = []

    def walk(n: ast.expr, conds: list[str]) -> None:
        if isinstance(n, ast.IfExp):
            walk(n.body, [*conds, " ".join(ast.unparse(n.test).split())])
            walk(n.orelse, [*conds, negate(n.test)])
            return
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if name is not None:
            lv = profile.normalize_level(name)
            if lv in profile.levels:
                out.append((lv, " and ".join(conds) or None))

    walk(node, [])
    return out


def _and(a: str | None, b: str | None) -> str | None:
    return a if not b else b if not a else f"{a} and {b}"


def alternatives_text(alts: list[tuple[str, str | None]]) -> str:
    """``A when c; B when d`` (a level without a condition stands alone)."""
    return "; ".join(f"{lv} when {when}" if when else lv for lv, when in alts)


def method_alternatives(
    hier: Hierarchy,
    mro: list[ClassRef],
    start: int,
    method: str,
    effective: str,
    profile: Profile,
) -> tuple[list[tuple[str, str | None]], list[str], str]:
    """What the override of ``method`` in ``mro[start]`` makes the builder report.

    Returns (alternatives, the returns prkb cannot read as levels, the method's returns as
    one line with ``return cls.<attr>`` and ``super()`` replaced by what they stand for).
    ``effective`` is the builder's declared or inherited value: what ``cls.<attr>`` reads is
    the attribute of the builder's own class, not of the class that defines the method.
    """
    declared = value_alternatives(effective, profile)
    declared_text = alternatives_text(declared) if declared else effective
    facts = hier.facts(mro[start])
    returns = facts.support.get(method) if facts is not None else None
    if not returns:
        return [], ["a body prkb did not read"], "unknown"
    alts: list[tuple[str, str | None]] = []
    unknown: list[str] = []
    shown: list[SupportReturn] = []
    for r in returns:
        when = " and ".join(r.when) or None
        text = r.value
        if r.kind == "level":
            got: list[tuple[str, str | None]] = [(r.value, None)]
        elif r.kind == "declared":
            got, text = declared, declared_text
            if not declared:
                unknown.append(effective)
        elif r.kind == "super":
            nxt = next(
                (
                    i
                    for i in range(start + 1, len(mro))
                    if method in getattr(hier.facts(mro[i]), "support", {})
                ),
                None,
            )
            if nxt is None:
                got, text = declared, declared_text
                if not declared:
                    unknown.append(effective)
            else:
                got, bad, text = method_alternatives(hier, mro, nxt, method, effective, profile)
                unknown.extend(bad)
        else:
            got = value_alternatives(r.value, profile)
            if not got:
                unknown.append(r.value)
        alts.extend((lv, _and(when, c)) for lv, c in got)
        if len(returns) > 1 and text != r.value and (";" in text or " when " in text):
            text = f"({text})"
        shown.append(replace(r, value=text))
    return alts, unknown, support_text(shown)


# --- cache ----------------------------------------------------------------------------------


class AuditCache:
    """Parsed module facts by blob sha, shared across the revisions of one repository."""

    def __init__(self) -> None:
        self.facts: dict[str, ModuleFacts | None] = {}  # blob sha@path-kind -> facts (None: skip)
        self.paths: dict[str, str] = {}  # path -> its part of the key ("" when not a source)
        self.warned: set[str] = set()
        self.parsed = 0
        # reading-site blob sha -> {spelling: line} of the family spellings it reads
        self.reads: dict[str, dict[str, int]] = {}
        self._last_key: str | None = None
        self._last: tuple[list[BuilderInfo], list[str]] | None = None


def _rule_module(rules: str) -> ModuleType | None:
    """The audit rule module named ``rules`` (a profile's ``[profile] rules``); None for ``""``."""
    return load_rule(rules)


def rule_column(rules: str) -> str:
    """The title of the matrix column that shows what the rule module ``rules`` reads of each
    class (its ``COLUMN``; "Audit rule" when it names none)."""
    return str(getattr(_rule_module(rules), "COLUMN", "Audit rule"))


def rule_messages(rules: str) -> dict[str, Words]:
    """The rule module ``rules``'s own wording of the report's generic audit messages
    (:class:`~.rules.Words` by msgid; none for ``""`` or a module that words none)."""
    return dict(getattr(_rule_module(rules), "MESSAGES", {}))


def file_markers(profile: Profile) -> list[str]:
    """The texts one of which a file must hold to be read: ``audit.file_markers``; for a
    profile without builder bases and markers, the family and the setter calls (a file that
    names none of them holds no class that sets the value)."""
    markers = [str(m) for m in profile.audit.get("file_markers", [])]
    if not markers and not profile.builder_bases:
        markers = list(dict.fromkeys([*profile.family, *profile.setters]))
    return markers


def _input_names(profile: Profile) -> InputNames:
    """What the audit reads for the profile's rule besides the profile's value (the rule
    module's ``INPUTS.audit_names``; nothing without one), once per profile: it is asked for
    each file parsed."""
    return per_profile(profile, _make_input_names)


def _make_input_names(profile: Profile) -> InputNames:
    inputs = rule_inputs(profile.rules)
    return inputs.audit_names(profile) if inputs is not None else InputNames()


def _extra_attrs(profile: Profile) -> tuple[str, ...]:
    """Class-body attributes the audit reads besides the family: the rule's."""
    return _input_names(profile).class_attrs


def _relevance_regex(profile: Profile) -> re.Pattern[str] | None:
    """A second, cheap text filter: a file is parsed only when a marker appears in a class
    header (``class X(...Marker...)``, possibly over several lines), a class-body assignment
    to a family spelling or the query-length attribute, or a backend's builder method. Large
    files that merely *use* builders (a model runner) are skipped without parsing.

    Known blind spot: a builder subclass whose header names no marker and that declares nothing
    (``class Foo(Bar): pass``) in a file without other markers is not read.
    """
    return per_profile(profile, _make_relevance_regex)


def _make_relevance_regex(profile: Profile) -> re.Pattern[str] | None:
    audit = profile.audit
    markers = [str(m) for m in audit.get("file_markers", [])]
    if not markers:  # (a profile without builder bases: its markers alone choose the files)
        return None
    attrs = [*profile.family, *_extra_attrs(profile)]
    builder_m = str(audit.get("backend_builder_method", "get_builder_cls"))
    alt = "|".join(re.escape(m) for m in markers)
    attr_alt = "|".join(re.escape(a) for a in attrs)
    parts = [rf"^[ \t]*class[ \t]+\w*[^:]*?(?:{alt})"]
    if attr_alt:
        parts.append(rf"^[ \t]+(?:{attr_alt})[ \t]*[:=]")
    parts.append(rf"def[ \t]+{re.escape(builder_m)}\b")
    return re.compile("|".join(f"(?:{p})" for p in parts), re.MULTILINE)


def rule_names(profile: Profile) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The names the audit reads besides the family: class-body attributes
    (:func:`_extra_attrs`), the calls (the rule's, the profile's setters), and the instance
    attributes set in ``__init__`` (the rule's, the family when the profile sets it there)."""
    names = _input_names(profile)
    calls = tuple(dict.fromkeys([*names.calls, *profile.setters]))
    instance = tuple(dict.fromkeys(
        [*names.instance_attrs, *(profile.family if profile.init_sets else ())]))
    return names.class_attrs, calls, instance


def module_facts(text: str, path: str, profile: Profile, tree: ast.Module) -> ModuleFacts:
    """What the audit reads of one module: its classes (with :func:`rule_names`) and its
    imports, from ``tree``, ``text`` parsed (whole or skimmed). Raises :class:`SourceError`."""
    extra, calls, instance = rule_names(profile)
    classes = parse_classes(text, profile, extra_attrs=extra, calls=calls, filename=path,
                            tree=tree, instance_attrs=instance)
    return ModuleFacts(
        classes, read_imports(text, module_name(path), path.endswith("__init__.py"), tree=tree))


def skim_words(profile: Profile) -> tuple[set[str], set[str], dict[str, set[str]]]:
    """What :func:`skim.skim` must keep for the audit (the arguments after the source): a
    method's body is read only for the threshold helper calls, an ``__init__``'s also for
    the threshold attributes and a parent's ``__init__``, and the dynamic-support methods and
    the backend's name and builder methods whole. ``bench/skim_check.py`` checks on a real
    history that the facts read are the same as from the full source."""
    return per_profile(profile, _make_skim_words)


def _make_skim_words(profile: Profile) -> tuple[set[str], set[str], dict[str, set[str]]]:
    audit = profile.audit
    _, calls, attrs = rule_names(profile)
    keep = {*profile.methods,
            str(audit.get("backend_builder_method", "get_builder_cls")),
            str(audit.get("backend_name_method", "get_name"))}
    return set(calls), keep, {"__init__": {*attrs, "__init__"}}


def parse_skimmed(
    text: str, path: str, words: set[str], keep: set[str], guarded: dict[str, set[str]]
) -> ast.Module:
    """The tree of ``text`` with the bodies of functions the audit never reads left empty
    (:mod:`.skim`); the whole text when the skimmed one does not parse."""
    skimmed = skim(text, words, keep, guarded)
    if skimmed is not text:
        try:
            return parse_source(skimmed, path)
        except SourceError:
            pass  # read whole: the error (if any) is the full text's
    return parse_source(text, path)


def scan_entries(repo: GitRepo, sha: str, profile: Profile) -> list[TreeEntry]:
    """The tree entries at ``sha`` that the audit may read (under the profile's scan paths)."""
    scan = [str(p) for p in profile.audit.get("scan_paths", [])] or None
    return repo.ls_tree(sha, scan)


def _load_modules(
    repo: GitRepo,
    profile: Profile,
    cache: AuditCache,
    warn: Warn,
    entries: list[TreeEntry],
) -> dict[str, ModuleFacts]:
    """The facts of each module among ``entries`` (a revision's :func:`scan_entries`) that the
    audit reads, parsed once per blob (``cache``)."""
    markers = file_markers(profile)
    glob = profile.python_glob
    relevant = _relevance_regex(profile)
    byte_markers = [m.encode() for m in markers]
    words, keep, guarded = skim_words(profile)
    out: dict[str, ModuleFacts] = {}
    kinds = cache.paths
    for entry in entries:
        kind = kinds.get(entry.path)
        if kind is None:  # once per path: whether it is a source, and its module's key part
            kind = kinds[entry.path] = (
                f":{entry.path.endswith('__init__.py')}:{module_name(entry.path)}"
                if fnmatch.fnmatch(entry.path.rsplit("/", 1)[-1], glob)
                else ""
            )
        if entry.type != "blob" or not kind or entry.mode not in ("100644", "100755"):
            continue
        key = entry.sha + kind
        if key in cache.facts:
            mf = cache.facts[key]
            if mf is not None:
                out[entry.path] = mf
            continue
        data = repo.read_blob(entry.sha)
        if data is None:
            msg = f"{entry.path}: blob {entry.sha[:12]} is missing from the repository; skipped"
            if msg not in cache.warned:
                cache.warned.add(msg)
                warn(msg)
            continue  # not cached: the object may arrive later
        if byte_markers and not any(m in data for m in byte_markers):
            cache.facts[key] = None  # most files: ruled out without decoding them
            continue
        text = data.decode("utf-8", errors="replace")
        if relevant is not None and not relevant.search(text):
            cache.facts[key] = None
            continue
        try:
            mf = module_facts(text, entry.path, profile,
                              parse_skimmed(text, entry.path, words, keep, guarded))
        except SourceError as e:
            msg = f"{entry.path}: {e}; skipped"
            if msg not in cache.warned:
                cache.warned.add(msg)
                warn(msg)
            cache.facts[key] = None
            continue
        cache.parsed += 1
        cache.facts[key] = mf
        out[entry.path] = mf
    return out


_READ_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _read_pattern(family: tuple[str, ...]) -> re.Pattern[str]:
    """An attribute load of a spelling: ``x.attr``, ``cls.attr``, ``f().attr`` not followed by
    an assignment or an annotation (``self.attr = ...`` sets, it does not read)."""
    if family not in _READ_PATTERNS:
        alts = "|".join(re.escape(a) for a in sorted(family, key=len, reverse=True))
        _READ_PATTERNS[family] = re.compile(
            rf"(?<=[\w)\]])\.({alts})\b(?![ \t]*(?:=(?!=)|:(?!=)))")
    return _READ_PATTERNS[family]


def reads_in(text: str, family: tuple[str, ...]) -> dict[str, int]:
    """The family spellings ``text`` reads as attributes, each with its first line (1-based).
    Code only: comments and triple-quoted strings are left out (a docstring that names
    ``builder.attr`` reads nothing)."""
    pat = _read_pattern(family)
    out: dict[str, int] = {}
    line = 1
    for i, part in enumerate(re.split(r'"""|\'\'\'', text)):
        if i % 2 == 0:  # outside triple quotes
            row = line
            for code in part.split("\n"):
                for m in pat.finditer(code.split("#", 1)[0]):
                    out.setdefault(m.group(1), row)
                row += 1
        line += part.count("\n")
    return out


def read_spellings(
    repo: GitRepo, entries: list[TreeEntry], profile: Profile, cache: AuditCache, warn: Warn
) -> dict[str, str]:
    """The family spellings the code at this revision reads: the attribute loads in the
    profile's reading sites (``audit.reading_sites``: the model runner, the builder base's
    ``get_cudagraph_support``), each with ``path:line`` of its first read. Empty when the
    profile names no reading site or none is in the tree (the root base's declaration then
    tells which spelling is read)."""
    sites = [str(p) for p in profile.audit.get("reading_sites", [])]
    if not sites:
        return {}
    out: dict[str, str] = {}
    for entry in entries:
        if entry.path not in sites or entry.type != "blob":
            continue
        got = cache.reads.get(entry.sha)
        if got is None:
            data = repo.read_blob(entry.sha)
            if data is None:
                msg = (f"{entry.path}: blob {entry.sha[:12]} is missing from the repository; "
                       "which spelling it reads is not known")
                if msg not in cache.warned:
                    cache.warned.add(msg)
                    warn(msg)
                continue
            got = cache.reads[entry.sha] = reads_in(data.decode("utf-8", errors="replace"),
                                                    profile.family)
        for attr, row in got.items():
            out.setdefault(attr, f"{entry.path}:{row}")
    return {a: out[a] for a in profile.family if a in out}


def enum_members(modules: dict[str, ModuleFacts], profile: Profile) -> list[str] | None:
    """The names the profile's enum class assigns (its levels), in order, over every scanned
    module that defines it; None when none does."""
    if not profile.enum:
        return None
    out: list[str] | None = None
    for path in sorted(modules):
        cf = modules[path].classes.get(profile.enum)
        if cf is not None:
            out = (out or []) + [n for n in cf.names if n not in (out or [])]
    return out


def audit_revision(
    repo: GitRepo,
    rev: str,
    profile: Profile,
    *,
    warn: Warn | None = None,
    cache: AuditCache | None = None,
    entries: list[TreeEntry] | None = None,
) -> AuditResult:
    """Builders and findings of the tree at ``rev`` (any revision name git understands).

    ``entries`` replaces the tree listing of ``rev`` (e.g. a commit's tree with its own changes
    undone, to audit its parent without listing the parent's tree again).
    """
    warn = warn or _no_warn
    cache = cache if cache is not None else AuditCache()
    sha = rev if entries is not None else repo.resolve(rev)
    if entries is None:
        entries = scan_entries(repo, sha, profile)
    modules = _load_modules(repo, profile, cache, warn, entries)
    reads = read_spellings(repo, entries, profile, cache, warn)
    key = hashlib.sha256(
        "\n".join([*(f"{p}\0{id(m)}" for p, m in sorted(modules.items())),
                   *(f"{a}\0{w}" for a, w in reads.items())]).encode()
    ).hexdigest()
    if cache._last_key == key and cache._last is not None:
        builders = [replace(b) for b in cache._last[0]]
    else:
        builders = compute_builders(modules, profile, reads)
        cache._last_key, cache._last = key, (builders, [])
        builders = [replace(b) for b in builders]
    rules = _rule_module(profile.rules)
    findings: list[Finding] = []
    if rules is not None:
        for b in builders:
            findings.extend(rules.findings_for(b, profile, sha))
    for b in builders:
        findings.extend(stale_findings(b, profile, sha, reads))
    return AuditResult(sha, builders, findings, sorted(cache.warned), reads,
                       enum_members(modules, profile))


STALE_RULE = "stale-symbol-spelling"


def stale_findings(
    b: BuilderInfo, profile: Profile, commit: str | None, reads: dict[str, str] | None = None
) -> list[Finding]:
    """Rule ``stale-symbol-spelling`` (prkb's own, any profile with several spellings): the
    builder's own class declares a spelling of the symbol that the code at this revision does
    not read (``reads``, from its reading sites; without them, the root builder base declares
    another one: an older spelling left behind, or a newer one the code does not read yet), so
    its declaration decides nothing and the value in force is the one it falls back to."""
    own = [u.rsplit(".", 1)[-1] for u in b.unread
           if u.rsplit(".", 1)[0] == b.class_name]
    if not own:
        return []
    attr = own[-1]
    src = (b.values.get(profile.display) or {}) if b.values else {}
    origin = f"{b.declared_in}" if b.declared_in else "the profile's default"
    if reads:
        live = list(reads)[-1]
        why_en, why_zh = (f"the code reads {live}, at {reads[live]}",
                          f"代码读取的是 {live}，见 {reads[live]}")
    else:
        live = b.declared_attr or "?"
        why_en, why_zh = f"its base declares {live}", f"其基类声明的是 {live}"
    en = (f"{b.class_name} declares {attr}, a spelling the code at this revision does not read "
          f"({why_en}); its declaration decides nothing, and the value in force "
          f"is {src.get('value', b.effective)}, from {origin}. Declare {live} instead.")
    zh = (f"{b.class_name} 声明了 {attr}，而该版本的代码并不读取这一拼写（{why_zh}）；"
          f"该声明不起作用，实际生效的值是来自 {origin} 的 "
          f"{src.get('value', b.effective)}。应改为声明 {live}。")
    return [Finding(STALE_RULE, b.file, b.class_name, en, zh, commit=commit)]


def _live_spelling(
    hier: Hierarchy, mro: list[ClassRef], roots: set[str], family: list[str]
) -> str | None:
    """The family spelling the root builder base declares (the newest if several); None when
    it declares none (then any spelling counts, the newest first)."""
    for c in mro:
        if c.name in roots:
            cf = hier.facts(c)
            spelled = [a for a in family if cf is not None and a in cf.values]
            return spelled[-1] if spelled else None
    return None


def compute_builders(
    modules: dict[str, ModuleFacts], profile: Profile, reads: dict[str, str] | None = None
) -> list[BuilderInfo]:
    """Every metadata builder of the parsed modules, with its declared and effective level, its
    bases resolved across modules, and the audit rule's reading of it. ``reads``: the spellings the
    code reads at this revision (:func:`read_spellings`); without them, the one the root
    builder base declares is taken as read."""
    roots = profile.builder_bases
    groups_of = _base_groups(profile)
    family = list(profile.family)
    methods = set(profile.methods)
    rules = _rule_module(profile.rules)
    hier = Hierarchy(modules)
    backends = _backend_names(hier, profile)
    out: list[BuilderInfo] = []
    for ref in hier.all_classes():
        if "<locals>" in ref.qual:
            continue
        mro = hier.mro(ref)
        if roots:
            if ref.name in roots or not any(c.name in roots for c in mro[1:]):
                continue
        elif not any(_sets_value(hier.facts(c), profile) for c in mro):
            continue  # without builder bases: a class that sets the value or inherits it
        facts = hier.facts(ref)
        assert facts is not None
        # links below the root builder base: the builder and its builder ancestors
        declared_in: str | None = None
        declared_attr: str | None = None
        declared_spelled: str | None = None
        effective = profile.default_level
        # the spellings the code reads at this revision: read at its reading sites, else the
        # one the root base declares (a class on another spelling declares a value nothing
        # reads)
        if reads:
            live: set[str] | None = set(reads)
        else:
            one = _live_spelling(hier, mro, roots, family)
            live = {one} if one is not None else None
        unread: list[str] = []
        for c in mro:
            cf = hier.facts(c)
            if cf is None:
                continue
            spelled = [a for a in family if a in cf.values]
            if live is not None and spelled and not live.intersection(spelled):
                unread.extend(f"{c.qual}.{a}" for a in spelled)
                continue
            if spelled:
                # the newest spelling read (any, the newest, when nothing tells)
                declared_attr = [a for a in spelled if live is None or a in live][-1]
                effective = cf.values[declared_attr]
                declared_in = c.qual
                spelled_as = cf.spelled.get(declared_attr)
                declared_spelled = spelled_as if spelled_as != effective else None
                break
        own = [a for a in family if a in facts.values]
        declared = facts.values[own[-1]] if own else None
        levels, condition = value_levels(effective, profile)
        alternatives = value_alternatives(effective, profile)
        dyn_reasons = []
        decided_by: str | None = None
        support: str | None = None
        for i, c in enumerate(mro):
            if c.name in roots:
                break
            cf = hier.facts(c)
            if cf is not None and cf.methods & methods:
                who = "" if c == ref else f" in {c.qual}"
                meth = sorted(cf.methods & methods)[0]
                alternatives, unknown, support = method_alternatives(
                    hier, mro, i, meth, effective, profile
                )
                decided_by = c.qual
                levels = list(dict.fromkeys(lv for lv, _ in alternatives))
                reason = f"overrides {', '.join(sorted(cf.methods & methods))}{who}: {support}"
                if unknown:
                    reason += f" (not read as levels: {'; '.join(dict.fromkeys(unknown))})"
                dyn_reasons.append(reason)
                break
        if condition:
            dyn_reasons.append(f"conditional value: {condition}")
        groups = sorted({g for c in mro for g in groups_of.get(c.name, ())})
        info = BuilderInfo(
            class_name=ref.qual,
            file=ref.file,
            lineno=facts.lineno,
            backend_name=backends.get(ref),
            declared=declared,
            effective=effective,
            declared_in=declared_in,
            declared_attr=declared_attr,
            dynamic=bool(dyn_reasons),
            dynamic_reason="; ".join(dyn_reasons) or None,
            unread=unread,
            condition=condition,
            levels=levels,
            groups=groups,
            meets_rule=None,
            rule_reason="",
            rule_reason_zh="",
            bases=list(facts.bases),
            ancestors=[c.qual for c in mro[1:]],
            alternatives=alternatives,
            decided_by=decided_by,
            support=support,
            declared_spelled=declared_spelled,
        )
        info.values = _tracked(hier, ref, mro, info, profile, roots)
        got = info.values[profile.display]
        if (got.get("source") == state.INIT or got.get("via")) and got.get("value") is not None:
            # an ``__init__`` (or a setter call) sets what the instance holds: that is in force
            info.effective = str(got["value"])
            info.levels, info.condition = value_levels(info.effective, profile)
            info.alternatives = value_alternatives(info.effective, profile)
        if rules is not None and hasattr(rules, "rule_reading"):
            # last: the rule reads the class's chain and the values in force (the state
            # model's reading above, by name)
            chain = []
            for c in mro:
                own = groups_of.get(c.name, [])
                role = "root" if c.name in roots else "group" if own else "builder"
                chain.append(Link(c.qual, hier.facts(c), role, tuple(own)))
            # (meets, reason) or (meets, reason, reason in Chinese)
            got = rules.rule_reading(chain, profile, info.values)
            info.meets_rule, info.rule_reason = got[0], got[1]
            info.rule_reason_zh = got[2] if len(got) > 2 else got[1]
        out.append(info)
    out.sort(key=lambda b: (b.file, b.lineno))
    return out


def _base_groups(profile: Profile) -> dict[str, list[str]]:
    """Each base class of the profile's ``[audit] base_groups`` with the groups it heads (a
    class whose MRO holds one belongs to that group: what a rule may judge apart)."""
    out: dict[str, list[str]] = {}
    for group, bases in sorted((profile.audit.get("base_groups") or {}).items()):
        for base in bases:
            out.setdefault(str(base), []).append(str(group))
    return out


def _tracked(
    hier: Hierarchy, ref: ClassRef, mro: list[ClassRef], info: BuilderInfo, profile: Profile,
    roots: set[str],
) -> dict[str, dict[str, Any]]:
    """Each tracked value of the builder in force, with where it comes from
    (:mod:`prkb.analyze.state`)."""
    sym = state.symbol_value(ref, mro, info)
    if sym.source == state.DEFAULT and not sym.value:
        sym = state.Tracked(None, state.ABSENT)  # no default value: nothing sets it
    if (profile.init_sets or profile.setters) and sym.source != state.METHOD:
        # set in ``__init__`` or by a setter call, over the class attribute in force
        attrs = profile.family if profile.init_sets else ()
        calls: dict[str, int | str | None] = dict(profile.setters)
        sym = state.init_value(hier, ref, mro, attrs, calls, roots, sym.value) or sym
    # each value unknown where a base the scan cannot read comes before its source
    out = {profile.display: state.unseen(mro, sym).to_json()}
    inputs = rule_inputs(profile.rules)
    if inputs is not None:  # the rule's inputs, as its module tracks them
        for attr, got in inputs.tracked(hier, ref, mro, roots, profile).items():
            out[attr] = state.unseen(mro, got).to_json()
    return out


def _sets_value(facts: ClassFacts | None, profile: Profile) -> bool:
    """Whether a class's own code sets the profile's value: a class-body declaration of a
    spelling, an override of a dynamic-support method, or (when the profile says so) an
    assignment in ``__init__`` or a setter call there."""
    if facts is None:
        return False
    if any(a in facts.values for a in profile.family) or facts.methods & set(profile.methods):
        return True
    return any((t.kind == "call" and t.attr in profile.setters)
               or (profile.init_sets and t.kind in ("assign", "augassign")
                   and t.attr in profile.family)
               for t in facts.sets)


def _backend_names(hier: Hierarchy, profile: Profile) -> dict[ClassRef, str]:
    """Builder -> registered backend name(s), from ``get_name()`` and ``get_builder_cls()``."""
    audit = profile.audit
    name_m = str(audit.get("backend_name_method", "get_name"))
    builder_m = str(audit.get("backend_builder_method", "get_builder_cls"))
    found: dict[ClassRef, list[str]] = {}
    for ref in hier.all_classes():
        cf = hier.facts(ref)
        if cf is None or builder_m not in cf.returns_name:
            continue
        name = None
        for c in hier.mro(ref):
            f = hier.facts(c)
            if f is not None and name_m in f.returns_str:
                name = f.returns_str[name_m]
                break
        if name is None:
            continue
        target = hier.resolve(ref.file, cf.returns_name[builder_m])
        if target is not None and name not in found.setdefault(target, []):
            found[target].append(name)
    return {k: ", ".join(v) for k, v in found.items()}
