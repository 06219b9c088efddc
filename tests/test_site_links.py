"""The link scan of site pages (``prkb.site.links``) and what it relies on: the site's markup
is written in lower case, so a case-sensitive scan sees every link."""

from __future__ import annotations

import re
from pathlib import Path

from prkb.site import links as site_links

ROOT = Path(__file__).resolve().parents[1]

def test_links_of_both_quote_styles_inside_linking_tags_only() -> None:
    html = ("<p>href=\"../no.html\" src='../no2.html'</p>"
            "<a title=\"x\" href='../single.html'>s</a><img alt=\"\"\n  src = \"../img.png\">"
            '<a href="&#46;&#46;/ent.html">e</a><a href="../q.html?x=1#y">q</a>'
            '<a href="../../../../up.html">u</a><a href="sub/">d</a>'
            '<div href="../div.html"></div><abbr title="a" src="../abbr.html"></abbr>'
            '<link rel="stylesheet" href="../s.css"><script src="../s.js"></script>'
            '<svg><use href="../i.svg#x"></use></svg><a\thref="../tab.html">t</a>')
    assert site_links.internal_links("en/pr/1.html", html) == [
        "../../up.html", "en/ent.html", "en/i.svg", "en/img.png", "en/pr/sub/index.html",
        "en/q.html", "en/s.css", "en/s.js", "en/single.html", "en/tab.html",
    ]


def test_every_linking_tag_and_no_other_name_is_scanned() -> None:
    # the scan's tag names are a prefix tree made from the list: each name whole, and not a
    # name that only begins or ends like one
    near = {"ab", "abbr", "areas", "aud", "b", "bases", "i", "im", "imag", "images", "ima",
            "inputs", "li", "links", "scrip", "sources", "span", "us", "user", "videos", "v"}
    for tag in [*site_links._LINKING, *near]:
        found = site_links.internal_links("en/pr/1.html", f'<{tag} href="x.html"></{tag}>')
        assert found == (["en/pr/x.html"] if tag in site_links._LINKING else []), tag
    assert not near & set(site_links._LINKING)


def test_text_that_looks_like_an_attribute_is_no_link() -> None:
    # nh3 does not escape quotes in text: a PR body's words can read like an attribute
    html = '<p>see <code>a href="../x.html"</code> and <a href="../y.html">y</a> src="../z"</p>'
    assert site_links.internal_links("en/pr/1.html", html) == ["en/y.html"]


def test_the_finder_keeps_what_it_resolved_per_folder() -> None:
    finder = site_links.LinkFinder()
    page = b'<a href="../a.html">a</a><a href="b.html">b</a><a href="https://x.org/">x</a>'
    assert finder.links("en/pr/1.html", page) == ["en/a.html", "en/pr/b.html"]
    assert finder.links("en/builder/2.html", page) == ["en/a.html", "en/builder/b.html"]
    assert finder.links("en/pr/3.html", page) == ["en/a.html", "en/pr/b.html"]


def _markup_sources() -> list[Path]:
    templates = sorted(p for p in (ROOT / "templates").rglob("*") if p.is_file())
    return templates + sorted((ROOT / "prkb").rglob("*.py"))


# a tag name, or an href/src attribute, with an upper-case letter
UPPER_TAG = re.compile(r"</?([A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*)[\s>/]")
UPPER_ATTR = re.compile(r"\s((?i:href|src))\s*=\s*[\"'{]")


def test_markup_is_written_in_lower_case() -> None:
    found = []
    for path in _markup_sources():
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                  for m in UPPER_TAG.finditer(text) if m.group(1).lower() in site_links._LINKING]
        found += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                  for m in UPPER_ATTR.finditer(text) if m.group(1) != m.group(1).lower()]
    assert len(_markup_sources()) > 100
    assert not found, f"markup the link scan cannot see (write it in lower case): {found}"


def test_the_lint_sees_upper_case_markup() -> None:
    text = '<IMG src="a.png"> <a HREF="b.html"> <Script Src="c.js">'
    assert [m.group(1) for m in UPPER_TAG.finditer(text)] == ["IMG", "Script"]
    assert [m.group(1) for m in UPPER_ATTR.finditer(text)] == ["src", "HREF", "Src"]


def test_the_links_file_is_what_json_writes_and_reads_back(tmp_path: Path) -> None:
    """The links file, written from whole dicts or from members made as pages came
    (``state.links_entry``), is the JSON object ``json.dumps`` writes of every page's links
    text, and reads back as it was."""
    import hashlib
    import json

    from prkb.site import state as site_state

    links = {
        "en/pr/1.html": ["en/index.html", "en/pr/2.html"],
        "zh/pr/中文.html": ["zh/图.html"],
        'en/"q"\\b.html': ['a"b', "c\\d", "tab\there", "\u2028line"],
        "empty.html": [],
    }
    site_state.save_links(tmp_path, links)
    whole = (tmp_path / site_state.LINKS).read_text(encoding="utf-8")
    assert whole == json.dumps({p: "\n".join(v) for p, v in links.items()},
                               separators=(",", ":"), ensure_ascii=False)
    assert site_state.load_links(tmp_path) == links
    site_state.save_link_entries(tmp_path, [
        site_state.links_entry(p, site_state.links_text(v)) for p, v in links.items()])
    assert (tmp_path / site_state.LINKS).read_text(encoding="utf-8") == whole
    site_state.save_link_entries(tmp_path, [])
    assert site_state.load_links(tmp_path) == {}
    assert site_state.links_text_hash(site_state.links_text(links["en/pr/1.html"])) == \
        hashlib.blake2b(b"en/index.html\nen/pr/2.html", digest_size=8).hexdigest()
