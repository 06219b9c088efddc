"""The check's outputs: text, JSON, SARIF 2.1.0 (GitHub code scanning), GitHub workflow commands.

SARIF: one ``error`` result per new finding and one ``warning`` result per documentation drift
the change introduces. Rule metadata comes from the profile's ``[check.rules.<id>]`` table
(the drift rule is prkb's own). ``help.text`` is English; ``help.markdown`` holds the English
and the Chinese help (GitHub shows the markdown); the Chinese texts are also in the rule's
property bag under ``zh``. ``partialFingerprints["prkb/v1"]`` is a hash of (rule, file, class),
so GitHub follows a finding across commits that move its line.

GitHub workflow commands: ``::error file=F,line=L,title=T::MESSAGE``; the message and the
properties are escaped as GitHub's runner un-escapes them (``%`` ``\\r`` ``\\n``, and in
properties also ``:`` ``,``), so a file or class name cannot end the command or add one.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..analyze.audit import STALE_RULE
from ..profile import Profile
from ..progress import safe_term
from .compare import DRIFT_RULE, CheckFinding, CheckReport, DriftItem

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "prkb/v1"
FORMATS = ("text", "json", "sarif", "github")

# prkb's own rule (documentation drift); audit rules are described by the profile
DRIFT_META: dict[str, Any] = {
    "name": "DocumentationLevelDrift",
    "anchor": "rule-docs-level-drift",
    "short": {
        "en": "The change makes the documentation's backend table disagree with the code",
        "zh": "该变更使文档中的后端表格与代码不一致",
    },
    "full": {
        "en": "After the change, a row of the documentation's backend table states a level the "
              "builder no longer has (stale), a builder whose level is not the default is not "
              "listed while the document says unlisted backends have the default (missing), "
              "or a row matches no builder (orphan). The base revision did not have this drift.",
        "zh": "变更之后，文档后端表格中的某行写的级别与构建器不再一致（过时），或某个非默认级别的"
              "构建器未被列出而文档说明未列出的后端为默认级别（缺失），或某行不再对应任何构建器"
              "（孤立）。基准修订中没有这一不一致。",
    },
    "help": {
        "en": "Update the table of the design document in the same pull request.",
        "zh": "请在同一个拉取请求中更新设计文档中的表格。",
    },
}


# prkb's own rule on the state model (analyze/audit.py stale_findings)
STALE_META: dict[str, Any] = {
    "name": "StaleSymbolSpelling",
    "anchor": "rule-stale-symbol-spelling",
    "short": {
        "en": "A builder declares a spelling of the symbol that the code does not read",
        "zh": "构建器声明的符号拼写不被代码读取",
    },
    "full": {
        "en": "The builder's own class assigns a spelling of the tracked symbol that the code at "
              "this revision does not read (its root base declares another spelling, the one "
              "the code reads). The assignment decides nothing: the builder falls back to the "
              "value it inherits, usually the base default.",
        "zh": "构建器类自身赋值的是被跟踪符号的一个旧拼写，而该版本的代码并不读取它（其根基类声明的"
              "是代码实际读取的另一种拼写）。这一赋值不起作用：构建器退回到它继承的值，通常是基类"
              "默认值。",
    },
    "help": {
        "en": "Rename the declaration to the spelling the root base declares.",
        "zh": "请把该声明改为根基类所声明的拼写。",
    },
}


def readme_url() -> str | None:
    """The README's address from prkb's package metadata (``Project-URL: Documentation``,
    else ``Homepage``); None when the installed metadata names none."""
    try:
        urls = metadata.metadata("prkb").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    found = {}
    for entry in urls:
        label, _, url = str(entry).partition(",")
        found[label.strip().lower()] = url.strip()
    return found.get("documentation") or found.get("homepage")


def rule_meta(rule: str, profile: Profile) -> dict[str, Any]:
    if rule == DRIFT_RULE:
        return DRIFT_META
    if rule == STALE_RULE:
        return STALE_META
    rules = profile.raw.get("check", {}).get("rules", {})
    meta = rules.get(rule)
    if meta is None:  # a rule the profile does not describe: its id stands for itself
        return {"name": rule, "anchor": None, "short": {"en": rule, "zh": rule},
                "full": {"en": rule, "zh": rule}, "help": {"en": rule, "zh": rule}}
    return dict(meta)


def fingerprint(rule: str, file: str, name: str) -> str:
    return hashlib.sha256(f"{rule}\0{file}\0{name}".encode()).hexdigest()[:32]


# --- text and JSON ------------------------------------------------------------------------------


def _arrow(before: str | None, after: str | None) -> str:
    def shown(v: str | None) -> str:
        return v if v is not None else "(none)"

    return f"{shown(before)} -> {shown(after)}"


def to_text(report: CheckReport, fail_on: str = "new", *, levels: bool = True) -> str:
    r = report
    lines = [
        f"prkb check {r.base}..{r.head} ({r.base_sha[:12]}..{r.head_sha[:12]}): "
        f"{r.changed_files} files changed, builders {r.builders_base} -> {r.builders_head}",
        f"new findings: {len(r.new)}, fixed: {len(r.fixed)}, still present: {len(r.kept)}",
    ]

    def finding(tag: str, f: CheckFinding) -> None:
        moved = f" (moved from {f.moved_from})" if f.moved_from else ""
        lines.append(f"  {tag:<6}{f.rule}  {f.file}:{f.line}  {f.class_name}{moved}")
        lines.append(f"        {f.message_en}")

    for f in r.new:
        finding("NEW", f)
    for f in r.fixed:
        finding("FIXED", f)
    if fail_on == "any":
        for f in r.kept:
            finding("KEPT", f)
    if r.changes:
        lines.append(f"declaration changes: {len(r.changes)}")
        for c in r.changes:
            moved = f" (from {c.before_file})" if c.before_file else ""
            lines.append(f"  {c.direction:<8} {c.file}  {c.class_name}.{c.attr}: "
                         f"{_arrow(c.before, c.after)}{moved}")
            if c.direction in ("raised", "lowered", "added", "removed"):
                if c.meaning_before:
                    lines.append(f"           was: {c.meaning_before.get('en', '')}")
                if c.meaning_after:
                    lines.append(f"           now: {c.meaning_after.get('en', '')}")
    if r.effective:
        lines.append(f"effective {'level' if levels else 'value'} changes: {len(r.effective)}")
        for e in r.effective:
            stale = " (left on a spelling the code no longer reads)" \
                if e.after_source == "stale" and e.before_source != "stale" else ""
            lines.append(f"  {e.direction:<8} {e.file}:{e.line}  {e.class_name}: "
                         f"{_arrow(e.before, e.after)}{stale}")
    if r.doc_note:
        lines.append(f"documentation not checked: {r.doc_note}")
    elif r.drift:
        lines.append(f"documentation drift introduced ({r.doc}): {len(r.drift)}")
        for d in r.drift:
            lines.append(f"  {d.kind:<8} {d.file}:{d.line}  {d.name}")
            lines.append(f"           {d.message_en}")
    else:
        lines.append(f"documentation drift introduced ({r.doc}): none")
    return safe_term("\n".join(lines))


def to_json(report: CheckReport, fail_on: str) -> str:
    data = report.to_json()
    data["fail_on"] = fail_on
    data["failing"] = report.failing(fail_on)
    return json.dumps(data, ensure_ascii=False, indent=1)


# --- SARIF --------------------------------------------------------------------------------------


def _rule_object(rule: str, profile: Profile, base_url: str | None, level: str) -> dict[str, Any]:
    meta = rule_meta(rule, profile)
    short, full, help_ = meta["short"], meta["full"], meta["help"]
    markdown = (
        f"{help_['en']}\n\n{full['en']}\n\n**中文**\n\n{help_['zh']}\n\n{full['zh']}"
    )
    out: dict[str, Any] = {
        "id": rule,
        "name": str(meta.get("name") or rule),
        "shortDescription": {"text": short["en"]},
        "fullDescription": {"text": full["en"]},
        "help": {"text": help_["en"], "markdown": markdown},
        "defaultConfiguration": {"level": level},
        "properties": {
            "tags": ["prkb", "documentation" if rule == DRIFT_RULE else "correctness"],
            "zh": {"shortDescription": short["zh"], "fullDescription": full["zh"],
                   "help": help_["zh"]},
        },
    }
    anchor = meta.get("anchor")
    if base_url and anchor:
        out["helpUri"] = f"{base_url.split('#', 1)[0]}#{anchor}"
    return out


def _location(file: str, line: int, logical: str | None) -> dict[str, Any]:
    loc: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": quote(file, safe="/"), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(1, int(line))},
        }
    }
    if logical:
        loc["logicalLocations"] = [{"fullyQualifiedName": logical, "kind": "type"}]
    return loc


def to_sarif(report: CheckReport, profile: Profile, base_url: str | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log (a dict ready for ``json.dumps``)."""
    if base_url is None:
        base_url = readme_url()
    audit_rule = str(profile.audit.get("rule", "")) or None
    rule_ids = list(dict.fromkeys(
        [*([audit_rule] if audit_rule else []), *(f.rule for f in report.new), DRIFT_RULE]
    ))
    rules = [
        _rule_object(r, profile, base_url, "warning" if r == DRIFT_RULE else "error")
        for r in rule_ids
    ]
    index = {r: i for i, r in enumerate(rule_ids)}
    results: list[dict[str, Any]] = []
    for f in report.new:
        props: dict[str, Any] = {"message_zh": f.message_zh, "class": f.class_name,
                                 "status": f.status}
        results.append({
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": "error",
            "message": {"text": f.message_en},
            "locations": [_location(f.file, f.line, f.class_name)],
            "partialFingerprints": {FINGERPRINT: fingerprint(f.rule, f.file, f.class_name)},
            "properties": props,
        })
    for d in report.drift:
        results.append({
            "ruleId": d.rule,
            "ruleIndex": index[d.rule],
            "level": "warning",
            "message": {"text": d.message_en},
            "locations": [_location(d.file, d.line, d.name if d.kind == "missing" else None)],
            "partialFingerprints": {FINGERPRINT: fingerprint(d.rule, d.file, d.name)},
            "properties": {"message_zh": d.message_zh, "kind": d.kind},
        })
    driver: dict[str, Any] = {
        "name": "prkb",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": rules,
    }
    if base_url:
        driver["informationUri"] = base_url.split("#", 1)[0]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {
                "base": report.base_sha,
                "head": report.head_sha,
                "fixed": [f.to_json() for f in report.fixed],
                "stillPresent": len(report.kept),
            },
        }],
    }


# --- GitHub workflow commands -------------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: str | int) -> str:
    """One workflow command. The message and the title also have their terminal control
    characters made visible (the log shows them); ``file`` is kept exact, to find the file."""
    message = safe_term(message)
    shown = ",".join(
        f"{k}={escape_property(safe_term(str(v)) if k == 'title' else str(v))}"
        for k, v in props.items()
    )
    head = f"::{kind} {shown}" if shown else f"::{kind}"
    return f"{head}::{escape_data(message)}"


def to_github(report: CheckReport, fail_on: str = "new") -> str:
    """One workflow command per line: errors for new findings (and, with ``--fail-on any``,
    for findings still present), warnings for introduced drift, notices for fixed findings."""
    lines: list[str] = []

    def finding(kind: str, f: CheckFinding, what: str) -> None:
        lines.append(command(
            kind, f"{f.message_en}\n{f.message_zh}",
            file=f.file, line=f.line, title=f"prkb {f.rule}: {what} {f.class_name}",
        ))

    for f in report.new:
        finding("error", f, "new finding in")
    if fail_on == "any":
        for f in report.kept:
            finding("error", f, "finding still in")
    for d in report.drift:
        lines.append(drift_command(d))
    for f in report.fixed:
        lines.append(command(
            "notice", f"fixed: {f.class_name} ({f.file}) no longer breaks {f.rule}",
            title=f"prkb {f.rule}: fixed",
        ))
    return "\n".join(lines)


def drift_command(d: DriftItem) -> str:
    return command("warning", f"{d.message_en}\n{d.message_zh}", file=d.file, line=d.line,
                   title=f"prkb {d.rule}: {d.kind} {d.name}")


def render(report: CheckReport, fmt: str, profile: Profile, fail_on: str = "new",
           base_url: str | None = None) -> str:
    if fmt == "text":
        return to_text(report, fail_on, levels=profile.has_levels)
    if fmt == "json":
        return to_json(report, fail_on)
    if fmt == "sarif":
        return json.dumps(to_sarif(report, profile, base_url), ensure_ascii=False, indent=1)
    if fmt == "github":
        return to_github(report, fail_on)
    raise ValueError(f"unknown format {fmt!r}")
