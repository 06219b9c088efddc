"""A second bundled profile (``vllm-query-len``: ``query_len_support`` of MLA metadata
builders, no rule module) works end to end with no CUDA-graph wording anywhere: collected
from a real git repository, then the whole site, every report in every format and the weekly
digest (text and HTML) in both languages. Every domain word comes from the profile's
``[wording]``; the test also finds the profile's own words, so it cannot pass on empty output.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from gitrepo import GitRepoBuilder
from zhstyle import counts, measure, proper_names

from prkb.cli import main
from prkb.collect.git import collect_git
from prkb.paths import data_dir, templates_dir
from prkb.profile import WORDING_KEYS, WORDING_PLACEHOLDERS, load_profile
from prkb.publish.digest import render_digest
from prkb.render.report import render_report
from prkb.site.build import build_site
from prkb.site.feed import feed_title
from prkb.site.render import escaping_env
from prkb.store import Store

# CUDA-graph wording in any language: the words, the capture vocabulary, the enum and method
# of the CUDA-graph profile, and its performance story (launch overhead)
CUDA_GRAPH = re.compile(
    r"CUDA|cudagraph|CGSupport|captur|full[- ]graph|launch overhead|捕获|完整图|启动开销",
    re.IGNORECASE,
)
# the CUDA-graph rule's own vocabulary: speculative decoding and its decode threshold (the
# second profile names speculative decoding as a feature of its own: its outputs are checked
# for the rule's words, its profile's words are its own)
# (and the names it gave its reading of a class: spec_ready, spec_reason, is_mla)
RULE = re.compile(r"speculative|推测解码|threshold|阈值|\bMTP\b|EAGLE|reorder"
                  r"|spec_ready|spec_reason|is_mla|spec-decode", re.IGNORECASE)
FIRST = re.compile(f"{CUDA_GRAPH.pattern}|{RULE.pattern}", re.IGNORECASE)

MLA = "vllm/model_executor/layers/attention/mla_attention.py"  # a core path of the profile
FLASHMLA = "vllm/v1/attention/backends/mla/flashmla.py"
AITER = "vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
WEEK = "2026-W20"  # Monday 2026-05-11 .. Sunday 2026-05-17: every commit below


def _common(level: str) -> str:
    return f"""
import enum
from typing import ClassVar


class QueryLenSupport(enum.Enum):
    SINGLE_ONLY = "single_only"
    UNIFORM = "uniform"
    VARLEN = "varlen"


class MLACommonMetadataBuilder:
    query_len_support: ClassVar[QueryLenSupport] = QueryLenSupport.{level}
"""


def _backend(cls: str, level: str) -> str:
    return f"""
from typing import ClassVar

from vllm.model_executor.layers.attention.mla_attention import (
    MLACommonMetadataBuilder, QueryLenSupport)


class {cls}(MLACommonMetadataBuilder):
    query_len_support: ClassVar[QueryLenSupport] = (
        QueryLenSupport.{level}
    )
"""


def _history(root: Path) -> GitRepoBuilder:
    """A first declaration at the default level, a new one above it (no test), one with a
    test, a lowering (no test) and a raise of the common builder on a core path."""
    r = GitRepoBuilder.init(root)
    r.commit({MLA: _common("SINGLE_ONLY")}, "[Core] MLA common builder (#301)",
             date="2026-05-11T09:00:00+00:00")
    r.commit({FLASHMLA: _backend("FlashMLAMetadataBuilder", "UNIFORM")},
             "[Perf] FlashMLA takes uniform multi-token decodes (#302)",
             date="2026-05-12T09:00:00+00:00")
    r.commit({AITER: _backend("AiterMLAMetadataBuilder", "VARLEN"),
              "tests/v1/attention/test_mla_backends.py": "def test_varlen():\n    pass\n"},
             "[ROCm] AITER MLA takes mixed query lengths (#303)",
             date="2026-05-13T09:00:00+00:00")
    r.commit({FLASHMLA: _backend("FlashMLAMetadataBuilder", "SINGLE_ONLY")},
             "[Bugfix] FlashMLA back to single-token decodes (#304)",
             date="2026-05-14T09:00:00+00:00")
    r.commit({MLA: _common("UNIFORM")}, "[Core] MLA common builder takes uniform batches (#305)",
             date="2026-05-15T09:00:00+00:00")
    return r


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every text a reader gets from a knowledge base of the second profile: the site's files,
    each report in md, txt and html, the digest as text and HTML (name -> text)."""
    tmp = tmp_path_factory.mktemp("qlen")
    profile = load_profile("vllm-query-len")
    repo = _history(tmp / "src")
    out: dict[str, str] = {}
    with Store(tmp / "kb.sqlite") as store:
        stats = collect_git(store, str(repo.path), profile, quiet=True, warn=print)
        assert stats.hits == 5
        build_site(store, tmp / "site", profile, search=False)
        for n in range(301, 306):
            for lang in ("en", "zh"):
                for fmt in ("md", "txt", "html"):
                    out[f"report {n} {lang} {fmt}"] = render_report(
                        store, n, lang=lang, fmt=fmt, profile=profile)
        for fmt in ("text", "html"):
            out[f"digest {fmt}"] = render_digest(store, WEEK, "both", fmt, profile=profile)
    out.update(_commands(tmp / "kb.sqlite", repo))
    for path in sorted((tmp / "site").rglob("*")):
        if path.is_file() and path.suffix in (".html", ".xml", ".json", ".txt"):
            out["site " + str(path.relative_to(tmp / "site"))] = path.read_text("utf-8")
    return out


def _commands(db: Path, repo: GitRepoBuilder) -> dict[str, str]:
    """What the CLI prints for the second profile: the matrix (Markdown, JSON, history), the
    audit, ``check`` in its four formats over the whole history, list, show, timeline,
    lineage, the graph and each command's ``--help`` (name -> stdout and stderr)."""
    src = str(repo.path)
    runs = {
        "matrix md": ["matrix", src], "matrix json": ["matrix", src, "--format", "json"],
        "matrix history": ["matrix", "--history"], "audit": ["audit", src],
        "audit json": ["audit", src, "--json"],
        **{f"check {fmt}": ["check", src, "--base", repo.shas[0], "--format", fmt]
           for fmt in ("text", "json", "sarif", "github")},
        "list": ["list"], "show": ["show", "302"], "show json": ["show", "302", "--json"],
        "timeline": ["timeline", "FlashMLAMetadataBuilder"], "lineage": ["lineage", "304"],
        "graph": ["graph", "--format", "mermaid"],
    }
    out: dict[str, str] = {}
    for name, args in runs.items():
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            rc = main(["--db", str(db), "--profile", "vllm-query-len", "-q", *args])
        assert rc in (0, 1), (name, rc, stderr.getvalue())
        out[f"cli {name}"] = stdout.getvalue() + stderr.getvalue()
    for cmd in ("matrix", "audit", "check", "timeline", "list", "show", "site", "digest"):
        stdout = io.StringIO()
        with redirect_stdout(stdout), pytest.raises(SystemExit):
            main(["--profile", "vllm-query-len", cmd, "--help"])
        out[f"cli {cmd} --help"] = stdout.getvalue()
    return out


def _words(key: str, lang: str) -> str:
    return load_profile("vllm-query-len").words(lang)[key]


def test_no_cuda_graph_wording_anywhere(outputs: dict[str, str]) -> None:
    """Not a word of the CUDA-graph profile or of its rule in any output of the second
    profile: site, reports, digest, and what the CLI prints (matrix, audit, check in its four
    formats, ...)."""
    assert len([k for k in outputs if k.startswith("site ")]) > 20
    assert len([k for k in outputs if k.startswith("cli ")]) == 23
    assert '"version": "2.1.0"' in outputs["cli check sarif"]
    assert "FlashMLAMetadataBuilder" in outputs["cli matrix md"]
    # (a help text may name the default profile: a name)
    said = {name: text.replace("vllm-cudagraph", "") if name.endswith("--help") else text
            for name, text in outputs.items()}
    found = {name: sorted({m.group(0) for m in FIRST.finditer(text)})
             for name, text in said.items() if FIRST.search(text)}
    assert found == {}


def test_the_profile_words_are_said(outputs: dict[str, str]) -> None:
    """Not vacuous: each place that said CUDA graphs now says the profile's words."""
    for lang in ("en", "zh"):
        feed, digests = outputs[f"site {lang}/feed.xml"], outputs[f"site digest-{lang}.xml"]
        matrix = outputs[f"site {lang}/matrix.html"]
        assert f"<title>{_words('feed', lang)}</title>" in feed
        assert f"<title>{_words('digest_feed', lang)}</title>" in digests
        assert _words("level", lang) in matrix
        assert "dynmark-sw" not in matrix  # no methods: no legend line
        prof = load_profile("vllm-query-len")
        root = outputs["site index.html"]
        assert prof.title_en in root and prof.title_zh in root
        # the PR reports, in every format (the site's PR page is the HTML one)
        for fmt in ("md", "txt", "html"):
            raised = outputs[f"report 302 {lang} {fmt}"]
            lowered = outputs[f"report 304 {lang} {fmt}"]
            core = outputs[f"report 305 {lang} {fmt}"]
            gain = _words("raise_gain", lang).split("{before}")[0]
            # (#302 adds a new builder: nobody gains or pays, the state model says so)
            assert gain in core and gain not in raised, (lang, fmt)
            assert _words("raise_risk", lang).split("{cls}")[-1] in raised, (lang, fmt)
            assert _words("raised_test", lang) in raised, (lang, fmt)
            assert _words("lower_gain", lang).split("(")[0].split("（")[0].split("}")[-1] \
                in lowered, (lang, fmt)
            assert _words("lower_cost", lang) in lowered, (lang, fmt)
            assert _words("lowered_test", lang) in lowered, (lang, fmt)
            assert _words("core_tag", lang) in core, (lang, fmt)
        page = outputs[f"site {lang}/pr/305.html"]
        assert _words("raise_gain", lang).split("{before}")[0] in page
    digest = outputs["digest text"] + outputs["digest html"]
    assert "FlashMLAMetadataBuilder" in digest and "#304" in digest


def test_a_first_declaration_of_the_default_level_is_no_raise(outputs: dict[str, str]) -> None:
    """Not a raise in the tags, nor in the recommended action (it was "a performance change
    without a test")."""
    md = outputs["report 301 en md"]
    assert "level raised" not in md and "SINGLE_ONLY" in md
    assert "Recommended action: Review the changed declaration." in md
    assert "performance change" not in md
    raised = outputs["report 302 en md"]
    assert "level raised" in raised and "Recommended action: A performance change" in raised


def test_no_rule_text_without_a_rule(outputs: dict[str, str]) -> None:
    """The profile has no rule module and its [audit] names no threshold mechanism: no report
    says a word of decode thresholds (the key code's notes said "Threshold mechanism: ...")."""
    said = {name for name, text in outputs.items()
            if re.search(r"threshold|阈值", text, re.IGNORECASE)}
    assert said == set()
    assert "now declares" in outputs["report 302 en md"]  # the key code's notes are there
    # and no audit is claimed: the report and the audit page say none is run
    for n in range(301, 306):
        assert "Consistency audit: none (the profile names no audit rule)" in \
            outputs[f"report {n} en md"]
        assert "一致性审计：无（该配置未指定审计规则）" in outputs[f"report {n} zh md"]
    for lang in ("en", "zh"):
        assert "The audit has no findings" not in outputs[f"site {lang}/audit.html"]
    assert "Nothing is audited: the profile names no audit rule." in outputs["site en/audit.html"]


def test_the_chinese_reports_keep_the_zh_style(outputs: dict[str, str]) -> None:
    """The profile's zh words are Chinese: its reports hold no Latin word outside code,
    quotes and its proper names (tests/zhstyle.py), as the bundled reports."""
    names = proper_names(load_profile("vllm-query-len"))
    zh = {k: v for k, v in outputs.items() if k.startswith("report") and " zh " in k
          and not k.endswith(" html")}
    assert len(zh) == 10
    found = {k: c for k, v in zh.items() if any((c := counts(measure(v, names))).values())}
    assert found == {}


def test_the_bundled_profiles_say_their_own_feed_titles() -> None:
    """The CUDA-graph profile keeps its feed titles (from its [wording]); a profile without
    the keys gets the generic title that names its symbol."""
    cg = load_profile("vllm-cudagraph")
    assert feed_title(cg, "en") == "prkb: pull requests that changed CUDA graph support " \
        "declarations"
    assert feed_title(cg, "zh", digests=True) == "prkb：CUDA Graph 支持声明变更周报"
    bare = load_profile("vllm-query-len")
    bare = replace(bare, wording={})
    assert feed_title(bare, "en") == "prkb: pull requests that changed query_len_support"
    assert feed_title(bare, "zh", digests=True) == "prkb：query_len_support 变更周报"


def _matrix(profile: Any, lang: str) -> str:
    env = escaping_env(lang, "site/x.html")
    return env.get_template("site/matrix.html").render(
        profile=profile, levels=list(profile.levels), meanings={}, rows=[], log=[], ticks=[],
        here="", root="", assets="", lang_code=lang, page_lang=lang, switch=[], csp="",
        page_path=f"{lang}/matrix.html", langs=[lang])


def test_the_matrix_legend_names_the_profile_methods_or_none() -> None:
    cg = load_profile("vllm-cudagraph")
    qlen = load_profile("vllm-query-len")
    two = replace(cg, methods=("pick_level", "other_level"))
    assert "dynamic: get_cudagraph_support() decides at run time" in _matrix(cg, "en")
    assert "动态：由 get_cudagraph_support() 在运行时决定" in _matrix(cg, "zh")
    assert "dynamic: pick_level() / other_level() decides at run time" in _matrix(two, "en")
    for lang in ("en", "zh"):
        page = _matrix(qlen, lang)
        assert "dynmark-sw" not in page and "get_cudagraph_support" not in page
        assert _words("level", lang) in page
    generic = replace(qlen, wording={})
    assert "the bar shows its effective level over time" in _matrix(generic, "en")


def test_the_wording_keys_are_the_schema_keys() -> None:
    schema = json.loads((data_dir() / "profiles" / "profile.schema.json").read_text("utf-8"))
    assert tuple(schema["properties"]["wording"]["properties"]) == WORDING_KEYS
    assert set(WORDING_PLACEHOLDERS) <= set(WORDING_KEYS)
    assert tuple(load_profile("vllm-cudagraph").wording) == WORDING_KEYS  # it says them all


def _template_text(path: Path) -> str:
    """A template's text outside its tags, comments and expressions (its messages are the
    catalogs': checked there)."""
    return re.sub(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", " ",
                  path.read_text(encoding="utf-8"), flags=re.S)


def _python_sentences() -> dict[str, list[str]]:
    """The string constants of prkb's code that hold a space (a sentence, a help text, a
    column title), outside docstrings, the audit rule modules and the store's ``MIGRATIONS``
    (the history of the schema names what older knowledge bases hold), by file."""
    import prkb

    root = Path(prkb.__file__).parent
    out: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if "rules" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr)}
        docs |= {id(c) for n in ast.walk(tree) if isinstance(n, ast.AnnAssign | ast.Assign)
                 and "MIGRATIONS" in {getattr(x, "id", "") for x in
                                      (n.targets if isinstance(n, ast.Assign) else [n.target])}
                 for c in ast.walk(n)}
        found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str) and " " in n.value and id(n) not in docs]
        if found:
            out[str(path.relative_to(root))] = found
    return out


def test_no_domain_word_outside_the_profiles() -> None:
    """The glossary, every catalog message (msgid and msgstr, both languages), the templates'
    own text and prkb's Python sentences name no CUDA graph and no word of its rule: those
    are the CUDA-graph profile's ([wording], meanings, [feature_labels], [check.rules]) and
    its rule module's (``prkb/analyze/rules/cudagraph/words.py``). The default profile's
    name, a name, may be said."""
    glossary = (data_dir() / "glossary.toml").read_text(encoding="utf-8")
    assert not FIRST.search(glossary)
    templates = {str(p.relative_to(templates_dir())): _template_text(p)
                 for sub in ("site", "report", "digest") for p in (templates_dir() / sub).glob("*")
                 if p.is_file()}
    assert len(templates) > 20
    assert {n: FIRST.findall(t) for n, t in templates.items() if FIRST.search(t)} == {}
    messages = {}
    for loc in ("en", "zh_CN"):
        po = templates_dir() / "locales" / loc / "LC_MESSAGES" / "prkb.po"
        catalog = read_po(po.open("rb"))
        messages.update({f"{loc}: {m.id}": f"{m.id} {m.string}" for m in catalog if m.id})
    assert len(messages) > 800
    assert sorted(k for k, text in messages.items() if FIRST.search(text)) == []
    sentences = {f: [s for s in found if FIRST.search(s.replace("vllm-cudagraph", ""))]
                 for f, found in _python_sentences().items()}
    assert {f: s for f, s in sentences.items() if s} == {}
    raw = tomllib.loads((data_dir() / "profiles" / "vllm-query-len.toml").read_text("utf-8"))
    assert raw["profile"]["rules"] == "" and not CUDA_GRAPH.search(str(raw))
