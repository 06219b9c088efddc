"""Untrusted text everywhere: the ONE hostile corpus (tests/hostile.py) pushed through PR
titles, bodies, comments, reviews, file names, author names and class names into every
output: terminal, Markdown and HTML reports, the site (and Chromium), the digest email, the
Atom feed and the graph exports."""

from __future__ import annotations

import email
import re
import xml.etree.ElementTree as ET
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from hostile import HOSTILE, SHORT, html_problems, terminal_problems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from prkb.cli import main
from prkb.graph import build_relations
from prkb.ingest import ingest
from prkb.profile import load_profile
from prkb.progress import safe_term
from prkb.publish import digest as dg
from prkb.publish import mail
from prkb.render.markdown import md_escape, md_inline, to_html
from prkb.render.report import render_report
from prkb.site.build import build_site
from prkb.store import Store

# heavy: thousands of hostile strings through every output: not in the fast tier
pytestmark = pytest.mark.heavy

PROFILE = load_profile()
BASE = 91000
WEEK = "2026-W21"
SITE_SCRIPTS = ("timeline.js", "graph.js", "cytoscape.min.js", "search.js")
CLS = "HostileMetadataBuilder"


def _file(i: int) -> str:
    name = SHORT[i % len(SHORT)]
    return f"vllm/v1/attention/backends/{name}.py"


def hostile_records() -> list[dict[str, Any]]:
    recs = []
    for i, h in enumerate(HOSTILE):
        n = BASE + i
        path = _file(i)
        login = SHORT[(i + 3) % len(SHORT)]
        recs.append({
            "number": n,
            "title": h,
            "body": f"{h}\n\nFollow-up to #{BASE + (i + 1) % len(HOSTILE)}.\n\n{h}",
            "state": "merged",
            "created_at": "2026-05-18T09:00:00Z",
            "updated_at": "2026-05-19T09:00:00Z",
            "merged_at": f"2026-05-19T{i % 24:02d}:00:00Z",
            "merge_commit_sha": f"{n:040x}",
            "html_url": h if i % 2 else f"https://github.com/vllm-project/vllm/pull/{n}",
            "user": {"login": login},
            "labels": [{"name": SHORT[i % len(SHORT)][:50]}],
            "files": [{
                "filename": path, "status": "modified", "additions": 1, "deletions": 1,
                "patch": (f"@@ -10,2 +10,2 @@ class {CLS}{i}(Base):\n"
                          f"-    _cudagraph_support = AttentionCGSupport.NEVER  # {h[:60]}\n"
                          f"+    _cudagraph_support = AttentionCGSupport.ALWAYS  # {h[:60]}\n"),
            }],
            "comments": [{"user": {"login": login}, "body": h,
                          "created_at": "2026-05-18T10:00:00Z"}],
            "reviews": [{"user": {"login": login}, "state": "APPROVED", "body": h,
                         "submitted_at": "2026-05-18T11:00:00Z"}],
            "review_comments": [{"user": {"login": login}, "path": path, "body": h,
                                 "diff_hunk": "@@ -1 +1 @@\n-" + h[:40],
                                 "created_at": "2026-05-18T12:00:00Z"}],
            "source": "curated",
            "prkb": {
                "repo": "vllm-project/vllm",
                "symbol_changes": [{"file": path, "class": f"{CLS}{i}" if i % 3 else h,
                                    "attr": "_cudagraph_support", "before": "NEVER",
                                    "after": "ALWAYS" if i % 2 else h, "direction": "raised"}],
                "findings": [{"rule": "cg-uniform-without-spec-decode", "file": path,
                              "class": h, "message_en": h, "message_zh": h}],
                "builder_levels": [{"class": f"{CLS}{i}", "file": path, "declared": "ALWAYS",
                                    "effective": "ALWAYS", "dynamic": False}],
                "notes": [h],
            },
        })
    return recs


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("hostile-kb") / "kb.sqlite"
    with Store(db) as store:
        for rec in hostile_records():
            ingest(store, rec, PROFILE)
        build_relations(store, PROFILE)
    return db


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


# --- terminal ------------------------------------------------------------------------------

def test_terminal_outputs_carry_no_escape_sequences(kb: Path, capsys, figures) -> None:
    db = ["--db", str(kb), "-q"]
    outputs: list[tuple[str, str]] = []
    for argv in (["list"], ["timeline", f"{CLS}1"], ["timeline", f"{CLS}2"],
                 ["digest", "--week", WEEK], ["digest", "--week", WEEK, "--lang", "en"],
                 ["lineage", str(BASE)], ["graph", "--format", "dot"],
                 ["graph", "--format", "mermaid"]):
        rc, out, err = _run(capsys, *db, *argv)
        assert rc == 0, (argv, err)
        outputs.append((" ".join(argv), out + err))
    for i in range(len(HOSTILE)):
        rc, out, err = _run(capsys, *db, "show", str(BASE + i))
        assert rc == 0, err
        outputs.append((f"show {BASE + i}", out + err))
    for h in SHORT:  # errors that echo what the user typed
        rc, out, err = _run(capsys, *db, "show", "--", h)
        assert rc != 0 and err.startswith("prkb: error: "), err
        outputs.append((f"show {h!r}", out + err))
        rc, out, err = _run(capsys, *db, "timeline", "--", h)
        outputs.append((f"timeline {h!r}", out + err))
    bad = [(name, terminal_problems(text)) for name, text in outputs]
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 9 + len(SHORT) * 2)
    assert not [b for b in bad if b[1]], [b for b in bad if b[1]]
    # the text is still there, made visible, not dropped
    rc, out, _ = _run(capsys, *db, "show", str(BASE + HOSTILE.index("\x1b[31mred\x1b[0m "
                                                                     "\x1b[2J\x1b[H cleared")))
    assert "\\x1b[31mred" in out


def test_json_outputs_escape_control_characters(kb: Path, capsys, figures) -> None:
    db = ["--db", str(kb), "-q"]
    for argv in (["list", "--json"], ["show", str(BASE + 30), "--json"],
                 ["graph", "--format", "json"]):
        rc, out, err = _run(capsys, *db, *argv)
        assert rc == 0, err
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, argv
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 3)


# --- reports ---------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reports_are_inert(kb: Path, lang: str, figures) -> None:
    permissive = MarkdownIt("commonmark", {"html": True})
    problems = []
    with Store(kb) as store:
        for i in range(len(HOSTILE)):
            ref = BASE + i
            md = render_report(store, ref, lang=lang, fmt="md")
            html = render_report(store, ref, lang=lang, fmt="html")
            txt = render_report(store, ref, lang=lang, fmt="txt")
            for name, found in (
                ("md", html_problems(permissive.render(md))),
                ("md-controls", terminal_problems(md.replace("\t", " "))),
                ("html", html_problems(html)),
                ("txt", terminal_problems(txt.replace("\t", " "))),
            ):
                if found:
                    problems.append((ref, lang, name, found))
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 3)
    assert not problems, problems[:5]


def test_templates_print_template_syntax_as_text(kb: Path, figures) -> None:
    i = next(k for k, h in enumerate(HOSTILE) if h.startswith("{{ 7*7"))
    with Store(kb) as store:
        md = render_report(store, BASE + i, lang="en", fmt="md")
        txt = render_report(store, BASE + i, lang="en", fmt="txt")
    figures.add("outputs", "hostile strings tried", 2)
    assert "7\\*7" in md or "7*7" in md  # shown, escaped for Markdown
    assert "{{ 7*7 }}" in txt and "__mro__" in txt


# --- site, feed, sitemap ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(kb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-site") / "site"
    with Store(kb) as store:
        build_site(store, out, PROFILE, search=False, base_url="https://prkb.example/")
    return out


def test_site_pages_are_inert_and_feeds_are_xml(site: Path, figures) -> None:
    pages = sorted(p for p in site.rglob("*.html"))
    assert len(pages) > 2 * len(HOSTILE)
    problems = {str(p.relative_to(site)): found for p in pages
                if (found := html_problems(p.read_text(encoding="utf-8"),
                                           allow_scripts=SITE_SCRIPTS))}
    assert not problems, list(problems.items())[:5]
    feeds = list(site.rglob("*.xml"))
    assert feeds
    titles: list[str] = []
    for f in feeds:
        root = ET.fromstring(f.read_bytes())  # well-formed XML, or this raises
        titles += [t.text or "" for t in root.iter("{http://www.w3.org/2005/Atom}title")]
    joined = "\n".join(titles)
    assert "<script>alert('t1')</script>" in joined  # titles are text, kept as text
    assert not terminal_problems(joined.replace("\n", " "))
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 2)


# --- digest email ----------------------------------------------------------------------------

def test_digest_email_is_inert(kb: Path, tmp_path: Path, figures) -> None:
    with Store(kb) as store:
        d = dg.gather(store, dg.period_for(WEEK, None, None), PROFILE)
    assert not d.empty
    text = dg.render(d, "both", "text", "https://prkb.example/")
    html = dg.render(d, "both", "html", "https://prkb.example/")
    msg = mail.build_message(
        subject=dg.digest_title(dg.period_for(WEEK, None, None), "en", PROFILE), text=text,
        html=html, sender="prkb@example.org", recipient="a@example.org",
        msg_id=mail.message_id(WEEK, "a@example.org", "prkb@example.org"),
        list_header=mail.list_id(PROFILE.name), language="en",
    )
    path = tmp_path / "d.eml"
    mail.write_eml(msg, path)
    parsed = email.message_from_bytes(path.read_bytes(), policy=default_policy)
    html_part = parsed.get_body(preferencelist=("html",))
    text_part = parsed.get_body(preferencelist=("plain",))
    assert html_part is not None and text_part is not None
    body_html = html_part.get_content()
    body_text = text_part.get_content()
    assert not html_problems(body_html), html_problems(body_html)[:5]
    assert not terminal_problems(body_text.replace("\t", " ").replace("\r", ""))
    assert "&lt;script&gt;alert(&#39;t1&#39;)" in body_html or \
        "&lt;script&gt;alert('t1')" in body_html  # shown as text
    for key in ("Subject", "From", "To"):
        assert "\n" not in str(parsed[key])
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 2)


# --- graph exports ---------------------------------------------------------------------------

_DOT_LINE = re.compile(
    r'^  "(?:[^"\\\n]|\\.)*"(?: -> "(?:[^"\\\n]|\\.)*")? \[label="(?:[^"\\\n]|\\.)*"'
    r"(?:, (?:shape|style)=\w+)*\];$"
)


_MERMAID_LINE = re.compile(
    r'^  n\d+(?:\["[^"\[\]<>]*"\]|\(\["[^"\[\]<>]*"\]\)| -\.?->\|[^|]*\| n\d+)$'
)


def test_graph_exports_do_not_break_out(kb: Path, capsys, figures) -> None:
    db = ["--db", str(kb), "-q"]
    _, dot, _ = _run(capsys, *db, "graph", "--format", "dot")
    lines = dot.strip().splitlines()
    assert lines[0] == "digraph prkb {" and lines[-1] == "}"
    body = [ln for ln in lines[1:-1] if not ln.startswith(("  rankdir", "  node "))]
    assert body and all(_DOT_LINE.match(ln) for ln in body), \
        [ln for ln in body if not _DOT_LINE.match(ln)][:3]
    _, mer, _ = _run(capsys, *db, "graph", "--format", "mermaid")
    for ln in mer.strip().splitlines()[1:]:
        assert _MERMAID_LINE.match(ln), ln
    _, gml, _ = _run(capsys, *db, "graph", "--format", "graphml")
    root = ET.fromstring(gml.encode("utf-8"))
    texts = " ".join(d.text or "" for d in root.iter() if d.text)
    assert "<script>alert('t1')</script>" in texts  # data stays data
    figures.add("outputs", "hostile strings tried", len(HOSTILE) * 3)


# --- the escapers themselves, property-based -------------------------------------------------

_mixed = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20)), max_size=5).map(
    "".join)


@settings(max_examples=examples(2500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=st.one_of(st.text(max_size=200), _mixed))
def test_safe_term_leaves_no_control_sequence(figures, text: str) -> None:
    figures.add("outputs", "cases generated")
    figures.add("outputs", "hostile strings tried")
    out = safe_term(text)
    assert not terminal_problems(out.replace("\n", " ").replace("\t", " "))


@settings(max_examples=examples(800), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=_mixed)
def test_markdown_escapers_and_to_html_stay_inert(figures, text: str) -> None:
    figures.add("outputs", "cases generated")
    figures.add("outputs", "hostile strings tried")
    permissive = MarkdownIt("commonmark", {"html": True})
    for md in (md_escape(text), md_inline(text)):
        assert not html_problems(permissive.render(md)), (text, md)
    assert not html_problems(to_html(text)), text


# --- the site in Chromium: a dialog handler proves no script from PR text ran -----------------

CHROMIUM = "/usr/bin/chromium"


@pytest.mark.browser
def test_site_in_chromium_runs_no_hostile_script(site: Path, figures) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    import threading

    from prkb.site.serve import make_server

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    dialogs: list[str] = []
    errors: list[str] = []
    paths = ["en/index.html", "zh/index.html", "en/graph.html", "en/matrix.html",
             "en/audit.html", "zh/audit.html",
             *(f"en/pr/{BASE + i}.html" for i in range(0, len(HOSTILE), 8)),
             *sorted(str(p.relative_to(site))
                     for p in (site / "en" / "builder").glob("*.html"))[:2]]
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            ctx = browser.new_context()
            pg = ctx.new_page()

            def on_dialog(d: Any) -> None:
                dialogs.append(f"{pg.url}: {d.message}")
                d.dismiss()

            pg.on("dialog", on_dialog)
            pg.on("pageerror", lambda e: errors.append(f"{pg.url}: {e}"))
            pg.goto(base + paths[0])
            pg.evaluate("() => alert('probe')")  # the handler sees a dialog when one opens
            assert dialogs == [f"{base}{paths[0]}: probe"], dialogs
            dialogs.clear()
            for path in paths:
                pg.goto(base + path, wait_until="load")
            # the timeline filter takes typed text: hostile input there runs nothing either
            pg.goto(base + "en/index.html")
            box = pg.locator("input[type=search], input[type=text]").first
            if box.count():
                for h in HOSTILE[:12]:
                    box.fill(h)
            pg.wait_for_timeout(300)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    figures.add("outputs", "hostile strings tried", len(HOSTILE) + 12)
    assert not dialogs, dialogs
    assert not errors, errors
