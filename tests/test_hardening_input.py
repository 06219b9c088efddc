"""Bad input, property-based: snapshot lines, patches, Python sources, git repositories.

Each property says: no exception but the documented one (``InputError`` for records,
``SourceError`` for sources, none at all for patches), one clear line per problem, and the
good part processed. Example counts scale with ``--slow`` (see conftest.examples).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from gitrepo import GitRepoBuilder, git
from hostile import HOSTILE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prkb.analyze.diff import changes_from_patch, iter_patch_lines, trim_patch
from prkb.analyze.symbols import SourceError, diff_declarations, parse_classes
from prkb.collect.snapshot import import_jsonl
from prkb.errors import InputError
from prkb.ingest import ingest
from prkb.models import SymbolChange
from prkb.profile import load_profile
from prkb.records import normalize_record, record_ref
from prkb.store import Store

# heavy: thousands of generated inputs: not in the fast tier
pytestmark = pytest.mark.heavy

PROFILE = load_profile()
HERE = Path(__file__).parent


def cases(n: int) -> settings:
    """``n`` examples (scaled by --slow), without the health checks big inputs trip."""
    return settings(max_examples=examples(n), deadline=None, suppress_health_check=[
        HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])

HUGE = "\u00e9" * 1_500_000  # beyond MAX_TEXT (1,000,000 characters)


def _good(number: int = 7, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "number": number,
        "title": f"[Bugfix] change {number}",
        "body": "Follow-up to #5.",
        "state": "merged",
        "created_at": "2026-03-01T08:00:00Z",
        "updated_at": "2026-03-02T08:30:00Z",
        "merged_at": "2026-03-02T08:30:00Z",
        "merge_commit_sha": f"{number:040x}",
        "html_url": f"https://github.com/vllm-project/vllm/pull/{number}",
        "user": {"login": "someone"},
        "labels": [{"name": "rocm"}],
        "base": {"ref": "main"},
        "files": [{
            "filename": "vllm/v1/attention/backends/mla/triton_mla.py",
            "status": "modified", "additions": 1, "deletions": 1,
            "patch": (
                "@@ -10,2 +10,2 @@ class TritonMLAMetadataBuilder(Base):\n"
                "-    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH\n"
                "+    _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE\n"
            ),
        }],
        "comments": [{"user": {"login": "rev"}, "body": "LGTM", "created_at": "2026-03-01"}],
        "reviews": [{"user": None, "state": "APPROVED", "body": "",
                     "submitted_at": "2026-03-02T01:00:00+08:00"}],
        "review_comments": [{"user": {"login": "r"}, "path": "a.py", "diff_hunk": "@@ -1 +1 @@",
                             "body": "nit", "created_at": "2026-03-01T10:00:00Z"}],
        "source": "curated",
        "prkb": {"repo": "vllm-project/vllm", "notes": ["n"],
                 "relations": [{"type": "follow-up-of", "target": 5}]},
    }
    rec.update(kw)
    return rec


# --- values of every kind a JSON line (or a careless producer) can hold -----------------------

_surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1,
                      max_size=4)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.integers(min_value=-5, max_value=10**6).map(str),  # numbers as strings
    st.sampled_from(["", " ", "#12", "²", "١٢", "1e3", "0x10", "2026-02-30", "2026-01-01T25:00",
                     "merged", "closed", "OPEN", "git", "abc123d", "2026-01-01T00:00:00+14:00"]),
    st.sampled_from(HOSTILE), _surrogates,
)
# two levels of nesting, built without st.recursive (whose validation costs seconds here)
_values = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=3),
    st.dictionaries(st.text(max_size=8), _scalars, max_size=3),
    st.lists(st.dictionaries(st.sampled_from(["file", "class", "login", "name", "x"]),
                             _scalars, max_size=3), max_size=2),
)
DELETE = object()
PATHS = [
    "number", "title", "body", "state", "created_at", "updated_at", "closed_at", "merged_at",
    "merge_commit_sha", "html_url", "user", "labels", "base", "files", "comments", "reviews",
    "review_comments", "source", "prkb",
    "user.login", "labels.0", "labels.0.name", "base.ref", "files.0", "files.0.filename",
    "files.0.status", "files.0.additions", "files.0.deletions", "files.0.patch",
    "files.0.previous_filename", "comments.0", "comments.0.body", "comments.0.user",
    "comments.0.created_at", "reviews.0.state", "reviews.0.user", "reviews.0.submitted_at",
    "review_comments.0.diff_hunk", "review_comments.0.path", "prkb.repo", "prkb.parent",
    "prkb.notes", "prkb.notes.0", "prkb.relations", "prkb.relations.0",
    "prkb.relations.0.target", "prkb.relations.0.type", "prkb.relations.0.confidence",
    "prkb.symbol_changes", "prkb.findings", "prkb.builder_levels", "prkb.lineage",
    "extra_key", "prkb.extra",
]
_mutations = st.lists(
    st.tuples(st.sampled_from(PATHS), st.one_of(st.just(DELETE), _scalars, _values)), max_size=3
)
_ext_items = st.fixed_dictionaries(
    {}, optional={k: _scalars for k in ("file", "class", "attr", "before", "after", "direction",
                                       "rule", "declared", "effective", "commit", "lines")},
)


def _apply(rec: dict[str, Any], path: str, value: Any) -> None:
    keys = path.split(".")
    node: Any = rec
    for k in keys[:-1]:
        nxt = node[int(k)] if isinstance(node, list) and k.isdigit() and int(k) < len(node) \
            else node.get(k) if isinstance(node, dict) else None
        if nxt is None:
            return
        node = nxt
    last = keys[-1]
    if isinstance(node, dict):
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        if value is DELETE:
            node.pop(int(last))
        else:
            node[int(last)] = value


_STORE = Store(":memory:")


@cases(700)
@given(muts=_mutations, ext=st.lists(st.tuples(
    st.sampled_from(["symbol_changes", "findings", "builder_levels", "lineage"]), _ext_items),
    max_size=2), number=st.integers(1, 40))
def test_any_record_is_stored_or_refused_with_one_line(figures, muts, ext, number) -> None:
    figures.add("input", "cases generated")
    rec = _good(number)
    for key, item in ext:
        rec["prkb"].setdefault(key, []).append(item)
    for path, value in muts:
        _apply(rec, path, value)
    try:
        clean = normalize_record(rec)
    except InputError as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) < 400, msg
        with pytest.raises(InputError):  # the one door refuses it the same way
            ingest(_STORE, rec, PROFILE)
        return
    res = ingest(_STORE, rec, PROFILE)  # anything normalize accepts must store and read back
    assert res.ref == record_ref(clean)
    facts = _STORE.pr_facts(res.ref, (clean.get("prkb") or {}).get("repo") or PROFILE.repo)
    assert facts["title"] == clean["title"]
    json.dumps(facts, ensure_ascii=False).encode("utf-8")  # storable text only


# --- snapshot files: bad lines reported once each, good lines imported, nothing lost -----------

_BAD_LINES: list[tuple[str, bytes]] = [
    ("utf8", b'{"number": 3, "title": "caf\xe9 \xff\xfe"}'),
    ("utf8", b"\xc3\x28\xa0\xa1 not even json"),
    ("json", b'{"number": 3, "title": '),
    ("json", b"{'number': 3}"),
    ("json", b"[" * 100_000 + b"]" * 100_000),
    ("json", b"NaN garbage"),
    ("record", b"[1, 2, 3]"),
    ("record", b'"just a string"'),
    ("record", b"42"),
    ("record", b"null"),
    ("record", b'{"title": "no number and no sha"}'),
    ("record", b'{"number": "twelve"}'),
    ("record", b'{"number": 5, "files": [{"filename": ["x.py"]}]}'),
    ("record", b'{"number": 5, "title": ["a list"]}'),
    ("record", b'{"number": 5, "state": "exploded"}'),
    ("record", b'{"number": 99999999999999999999999}'),
    ("record", b'{"number": 5, "prkb": {"symbol_changes": [{"file": "a.py"}]}}'),
]


@st.composite
def _snapshot(draw: st.DrawFn) -> list[tuple[str, bytes, dict[str, Any] | None]]:
    lines: list[tuple[str, bytes, dict[str, Any] | None]] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["good", "good", "good", "bad", "blank"]))
        if kind == "blank":
            lines.append(("blank", draw(st.sampled_from([b"", b"   ", b"\t"])), None))
        elif kind == "bad":
            lines.append((*draw(st.sampled_from(_BAD_LINES)), None))
        else:
            n = draw(st.integers(1, 4))
            rec = _good(
                n,
                updated_at=f"2026-03-0{draw(st.integers(1, 4))}T00:00:00Z",
                title=draw(st.one_of(st.text(max_size=20), st.sampled_from(HOSTILE),
                                     _surrogates)),
            )
            text = json.dumps(rec, ensure_ascii=draw(st.booleans()))
            crlf = draw(st.booleans())
            try:
                raw = text.encode("utf-8") + (b"\r" if crlf else b"")
            except UnicodeEncodeError:  # lone surrogates: only as \\u escapes
                raw = json.dumps(rec).encode("ascii")
            lines.append(("good", raw, rec))
    return lines


@cases(150)
@given(snap=_snapshot())
def test_snapshot_lines_each_bad_line_is_one_error(figures, snap) -> None:
    figures.add("input", "cases generated")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "snap.jsonl"
        path.write_bytes(b"\n".join(raw for _, raw, _ in snap) + b"\n")
        store = Store(":memory:")
        ingest(store, _good(4242), PROFILE)  # a record already stored must survive
        report = import_jsonl(store, path, PROFILE)
    errors: dict[int, list[str]] = {}
    for e in report.errors:
        assert "\n" not in e and e.startswith("snap.jsonl:"), e
        no = int(e.split(":")[1].split(" ")[0])
        errors.setdefault(no, []).append(e)
    winners: dict[str, tuple[str, int]] = {}
    first: dict[str, int] = {}
    for no, (kind, _, rec) in enumerate(snap, start=1):
        got = errors.get(no, [])
        assert len(got) <= 1, got  # said once
        if kind == "blank":
            assert not got
        elif kind != "good":
            assert len(got) == 1, (no, snap[no - 1][1][:80], report.errors)
        else:
            assert rec is not None
            ref = str(rec["number"])
            if ref in first and got:
                assert f"also on line {first[ref]}" in got[0] and f"PR {ref}" in got[0]
            first.setdefault(ref, no)
            if ref not in winners or rec["updated_at"] >= winners[ref][0]:
                winners[ref] = (rec["updated_at"], no)
    stored = {r["ref"]: r for r in store.conn.execute("SELECT ref, updated_at, raw FROM prs")}
    assert set(stored) == set(winners) | {"4242"}  # nothing lost, nothing twice
    for ref, (when, no) in winners.items():
        assert stored[ref]["updated_at"] == when  # the newer updated_at wins
        want = normalize_record(json.loads(snap[no - 1][1].decode("utf-8")))
        assert json.loads(stored[ref]["raw"]) == json.loads(json.dumps(want))
    assert store.integrity_ok()


def test_cli_import_reports_each_bad_line_once(tmp_path: Path, figures) -> None:
    path = tmp_path / "mixed.jsonl"
    good = [json.dumps(_good(n)).encode() for n in (1, 2)]
    newer = json.dumps(_good(1, updated_at="2026-04-01T00:00:00Z", title="newer")).encode()
    older = json.dumps(_good(2, updated_at="2026-01-01T00:00:00Z", title="older")).encode()
    bad = [raw for _, raw in _BAD_LINES]
    path.write_bytes(b"\n".join([good[0], *bad, good[1], newer, older, b""]))
    db = tmp_path / "kb.sqlite"
    r = subprocess.run([sys.executable, "-m", "prkb", "--db", str(db), "-q", "import", str(path)],
                       capture_output=True, text=True, timeout=60)
    figures.add("input", "cases generated", len(bad) + 4)
    assert r.returncode == 1, r.stderr  # some lines failed (exit 0 only when none did)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    # one per bad line, one per duplicated PR line, then the counts
    assert len(lines) == len(bad) + 3, lines
    assert lines[-1] == (f"prkb: {path}: {len(bad)} of {len(bad) + 4} lines failed and were "
                         "left out; the other 4 were imported")
    lines = lines[:-1]
    for i, line in enumerate(lines[: len(bad)]):
        assert line.startswith(f"warning: mixed.jsonl:{i + 2}"), line
    assert "PR 1 also on line 1" in lines[-2] and "PR 2 also on line" in lines[-1]
    assert f"{len(bad) + 4} lines, 2 new, 1 updated, 0 unchanged, 1 older" in r.stdout
    with Store(db) as store:
        assert {r["ref"]: r["title"] for r in store.conn.execute("SELECT ref, title FROM prs")} \
            == {"1": "newer", "2": "[Bugfix] change 2"}
        assert store.integrity_ok()
    again = subprocess.run(
        [sys.executable, "-m", "prkb", "--db", str(db), "-q", "import", str(tmp_path / "nope")],
        capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert again.stderr.startswith("prkb: error: snapshot") and "does not exist" in again.stderr


# --- patches: never raise, whatever the text ------------------------------------------------

_patch_line = st.one_of(
    st.sampled_from([
        "@@ -1,3 +1,3 @@", "@@ -10,2 +10,9 @@ class FooMetadataBuilder(Base):", "@@ -x +y @@",
        "@@ -1 +1 @@ class", "@@", "@@@ -1,2 -1,2 +1,3 @@@", "\\ No newline at end of file",
        "Binary files a/x.py and b/x.py differ", "GIT binary patch", "literal 0",
        "rename from a.py", "rename to b.py", "similarity index 100%", "--- a/x.py",
        "+++ b/x.py", "--- /dev/null", "+++ /dev/null", "diff --git a/x b/x", "index 0..1",
        "-    _cudagraph_support = AttentionCGSupport.UNIFORM_BATCH",
        "+    _cudagraph_support: ClassVar[AttentionCGSupport] = (",
        "+        AttentionCGSupport.ALWAYS", "+    )", "+    cudagraph_support = (((((",
        "-    full_cudagraph_supported = True", "+    attn_cudagraph_support = 1 if x else",
        "+class Evil(", "-class Foo:", " class Bar(Base):", "+    def get_cudagraph_support(cls):",
        "+    _cudagraph_support = " + "(" * 3000, "+    _cudagraph_support = lambda: (yield)",
        "", " ", "+", "-", "\r", "+\x00\x1b[31m",
    ]),
    st.text(max_size=40).map(lambda t: "+    " + t),
    st.text(max_size=40),
)


@cases(900)
@given(lines=st.lists(_patch_line, max_size=15), crlf=st.booleans(), tail=st.booleans(),
       path=st.sampled_from(["a.py", "b/c d.py", "\u202eevil.py", ""]))
def test_patch_readers_never_raise(figures, lines, crlf, tail, path) -> None:
    figures.add("input", "cases generated")
    patch = ("\r\n" if crlf else "\n").join(lines) + ("\n" if tail else "")
    out = changes_from_patch(path, patch, PROFILE)
    assert all(isinstance(c, SymbolChange) and c.file == path for c in out)
    assert all(c.direction for c in out)
    assert isinstance(iter_patch_lines(patch), list)
    trimmed = trim_patch(patch, PROFILE)
    kept = set(patch.replace("\r\n", "\n").split("\n"))
    # only input lines, under hunk headers the trimmer numbers itself
    assert all(line in kept for line in trimmed.split("\n") if line and line[:2] != "@@")
    assert all(re.fullmatch(r"@@ -\d+,\d+ \+\d+,\d+ @@( .*)?", line)
               for line in trimmed.split("\n") if line[:2] == "@@")


@cases(4300)
@given(text=st.text(max_size=300))
def test_patch_readers_on_any_text(figures, text) -> None:
    figures.add("input", "cases generated")
    changes_from_patch("x.py", text, PROFILE)
    iter_patch_lines(text)
    trim_patch(text, PROFILE)


def test_hundred_thousand_line_patch_in_reasonable_time(figures) -> None:
    body = []
    for i in range(50_000):
        body.append(f"-    x_{i} = {i}")
        body.append(f"+    x_{i} = {i + 1}")
    head = "@@ -1,50002 +1,50002 @@ class BigMetadataBuilder(Base):\n"
    decl = ("-    _cudagraph_support = AttentionCGSupport.NEVER\n"
            "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n")
    patch = head + decl + "\n".join(body) + "\n"
    t0 = time.perf_counter()
    out = changes_from_patch("big.py", patch, PROFILE)
    trimmed = trim_patch(patch, PROFILE)
    wrong = "@@ -1,3 +1,3 @@ class BigMetadataBuilder(Base):\n" + decl + "\n".join(body)
    loose = changes_from_patch("big.py", wrong, PROFILE)  # counts do not match: the fallback
    took = time.perf_counter() - t0
    figures.add("input", "cases generated", 2)
    assert [(c.class_name, c.before, c.after, c.direction) for c in out] == [
        ("BigMetadataBuilder", "NEVER", "ALWAYS", "raised")]
    assert [(c.before, c.after) for c in loose] == [("NEVER", "ALWAYS")]
    assert trimmed.count("\n") == 2
    assert took < 30, took


# --- Python sources: SourceError or facts, never anything else -------------------------------

_stmt = st.sampled_from([
    "_cudagraph_support = AttentionCGSupport.ALWAYS",
    "_cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_BATCH",
    "_cudagraph_support: ClassVar[AttentionCGSupport]",
    "_cudagraph_support, other = AttentionCGSupport.NEVER, 1",
    "(_cudagraph_support, other) = pair",
    "[cudagraph_support, *rest] = values",
    "_cudagraph_support += 1",
    "_cudagraph_support |= AttentionCGSupport.ALWAYS",
    "_cudagraph_support = cudagraph_support = AttentionCGSupport.NEVER",
    "if FLAG:\n    _cudagraph_support = AttentionCGSupport.ALWAYS",
    "if FLAG:\n    _cudagraph_support = A.ALWAYS\nelse:\n    _cudagraph_support = A.NEVER",
    "try:\n    _cudagraph_support = A.ALWAYS\nexcept Exception:\n    pass",
    "with ctx:\n    full_cudagraph_supported = True",
    "match x:\n    case 1:\n        _cudagraph_support = A.ALWAYS",
    "for _cudagraph_support in range(3):\n    pass",
    "while False:\n    attn_cudagraph_support = 2",
    "(_cudagraph_support := 3)",
    "del _cudagraph_support",
    "global _cudagraph_support",
    "_cudagraph_support = lambda self: (yield)",
    "_cudagraph_support = " + "(" * 200 + "1" + ")" * 200,
    "_cudagraph_support = " + "-" * 5000 + "1",
    "def get_cudagraph_support(cls, cfg):\n    return AttentionCGSupport.ALWAYS",
    "async def get_cudagraph_support(cls):\n    class Inner:\n        _cudagraph_support = 1",
    "@classmethod\ndef build(cls):\n    class Local(Base):\n        cudagraph_support = 2\n"
    "    return Local",
    "class Nested(Base):\n    _cudagraph_support = AttentionCGSupport.NEVER",
    "print 'python 2'", "exec 'x = 1'", "except Exception, e:", "ur'old'", "0777",
    "def f(x, (a, b)):\n    pass", "\x00", "\ufeffx = 1", "\t\t  mixed = 1", "pass", "",
    "x = '\ud800'", "'''unterminated", "class", "return 5", "yield 1", "await f()",
])


@st.composite
def _source(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        header = draw(st.sampled_from([
            "class FooMetadataBuilder(Base):", "class Bar(Foo[int], metaclass=M):",
            "def factory():\n    class Made(Base):", "if True:\n    class Cond:",
            "class Outer:\n    class Inner(Base):",
        ]))
        depth = header.count("\n") + 1
        body = draw(st.lists(_stmt, min_size=1, max_size=4))
        pad = "    " * depth
        parts.append(header + "\n" + "\n".join(
            "\n".join(pad + ln for ln in s.split("\n")) for s in body))
        if draw(st.booleans()):
            parts.append(draw(_stmt))
    text = "\n\n".join(parts)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(text)))
        text = text[:cut]  # truncated file
    return text + draw(st.sampled_from(["", "\n", "\r\n", "\\"]))


@cases(700)
@given(a=_source(), b=_source())
def test_sources_parse_or_raise_source_error(figures, a, b) -> None:
    figures.add("input", "cases generated")
    readings = []
    for src in (a, b):
        try:
            readings.append(parse_classes(src, PROFILE, filename="x.py"))
        except SourceError as e:
            assert str(e) and "\n" not in str(e)
            readings.append(None)
    out = diff_declarations("x.py", readings[0], readings[1], PROFILE)
    assert all(isinstance(c, SymbolChange) for c in out)
    for facts in (r for r in readings if r):
        assert all(isinstance(v, str) for f in facts.values() for v in f.values.values())


def test_odd_declarations_read_as_text(figures) -> None:
    src = (
        "def factory():\n"
        "    class Local(Base):\n"
        "        _cudagraph_support = AttentionCGSupport.ALWAYS\n"
        "    return Local\n\n"
        "class A(Base):\n"
        "    _cudagraph_support, other = AttentionCGSupport.NEVER, 1\n\n"
        "class B(A):\n"
        "    _cudagraph_support += 1\n\n"
        "class C(A):\n"
        "    if FLAG:\n"
        "        _cudagraph_support = AttentionCGSupport.ALWAYS\n"
    )
    facts = parse_classes(src, PROFILE)
    figures.add("input", "cases generated", 4)
    assert facts["factory.<locals>.Local"].values["_cudagraph_support"] == "ALWAYS"
    assert facts["A"].values["_cudagraph_support"] == "NEVER"
    assert facts["B"].values["_cudagraph_support"] == "<inherited> + 1"
    assert facts["C"].values["_cudagraph_support"] == "ALWAYS if FLAG else <unset>"
    for bad in ("print 'x'\n", "class A:\n  x = (\n", "\x00", "(" * 5000, "x = 1\n" * 50_000):
        try:
            parse_classes(bad, PROFILE)
        except SourceError as e:
            assert "not valid Python" in str(e) or "nested" in str(e)


# --- git repositories: one line per problem, in a real subprocess ------------------------------

UTILS = "vllm/v1/attention/backends/utils.py"
FA = "vllm/v1/attention/backends/flash_attn.py"


def _cli(db: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PRKB_DB"}
    return subprocess.run([sys.executable, "-m", "prkb", "--db", str(db), "-q", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def _one_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prkb: error: "), lines
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture(scope="module")
def small_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepoBuilder:
    r = GitRepoBuilder.init(tmp_path_factory.mktemp("hrepo") / "src")
    r.commit({UTILS: "class AttentionMetadataBuilder:\n    _cudagraph_support = A.NEVER\n"},
             "[Core] base (#1)")
    r.commit({FA: "class FlashAttentionMetadataBuilder:\n    _cudagraph_support = A.ALWAYS\n"},
             "[Perf] FA (#2)")
    r.commit({FA: "print 'python 2'\nclass FlashAttentionMetadataBuilder:\n"
                  "    _cudagraph_support = A.NEVER\n"}, "[Bugfix] py2 file (#3)")
    r.commit({FA: "class FlashAttentionMetadataBuilder:\n"
                  "    _cudagraph_support = A.UNIFORM_BATCH\n"}, "[Perf] FA uniform (#4)")
    return r


def test_git_problem_repositories(tmp_path: Path, small_repo: GitRepoBuilder, figures) -> None:
    db = tmp_path / "kb.sqlite"
    cases = 0
    # not a repository, no such path, a file, an unknown branch, an empty repository
    _one_error(_cli(db, "collect", "git", str(tmp_path)), "not a git repository")
    _one_error(_cli(db, "collect", "git", str(tmp_path / "nope")), "no such directory")
    (tmp_path / "f.txt").write_text("x")
    _one_error(_cli(db, "collect", "git", str(tmp_path / "f.txt")), "not a directory")
    _one_error(_cli(db, "collect", "git", str(small_repo.path), "--branch", "nope"),
               "unknown branch 'nope'")
    _one_error(_cli(db, "collect", "git", str(small_repo.path), "--since", "nope"), "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    _one_error(_cli(db, "collect", "git", str(empty)), "unknown branch 'main'")
    _one_error(_cli(db, "audit", str(empty)), "HEAD")
    cases += 7

    # a Python 2 file in history: one warning naming the commit and the file, the rest mined
    ok = _cli(db, "collect", "git", str(small_repo.path))
    assert ok.returncode == 0 and "Traceback" not in ok.stderr, ok.stderr
    warns = [w for w in ok.stderr.splitlines() if w.strip()]
    assert warns and all(w.startswith("warning: ") for w in warns), warns
    assert sum(FA in w and "not valid Python" in w for w in warns) == 1, warns  # said once
    with Store(db) as store:
        assert {r[0] for r in store.conn.execute("SELECT ref FROM prs")} == {"1", "2", "3", "4"}
    cases += 1

    # a detached HEAD: the named branch is still mined; --branch HEAD works too
    det = tmp_path / "det"
    git(tmp_path, "clone", "-q", str(small_repo.path), str(det))
    git(det, "checkout", "-q", "--detach", "HEAD~1")
    r = _cli(tmp_path / "det.sqlite", "collect", "git", str(det), "--branch", "HEAD", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["hits"] == 3
    cases += 1

    # a shallow clone: one warning that history before the boundary is not mined
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{small_repo.path}", str(shallow))
    r = _cli(tmp_path / "sh.sqlite", "collect", "git", str(shallow))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert sum("shallow clone" in w for w in r.stderr.splitlines()) == 1, r.stderr
    cases += 1

    # missing objects: a blob, then a tree; the commit that needs them is skipped with a warning
    broken = tmp_path / "broken"
    git(tmp_path, "clone", "-q", "--no-local", str(small_repo.path), str(broken))
    git(broken, "repack", "-a", "-d", "-q")
    _loosen(broken)
    blob = git(broken, "rev-parse", f"{small_repo.shas[1]}:{FA}").strip()
    _drop(broken, blob)
    r = _cli(tmp_path / "br.sqlite", "collect", "git", str(broken))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert all(ln.startswith("warning: ") for ln in lines), lines
    assert sum(blob[:12] in ln for ln in lines) >= 1, lines
    with Store(tmp_path / "br.sqlite") as store:  # commits that need the blob are skipped only
        assert {"1", "4"} <= {r[0] for r in store.conn.execute("SELECT ref FROM prs")}
    tree = git(broken, "rev-parse", f"{small_repo.shas[2]}^{{tree}}").strip()
    _drop(broken, tree)
    r = _cli(tmp_path / "br2.sqlite", "collect", "git", str(broken))
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert all(ln.startswith(("warning: ", "prkb: error: ")) for ln in lines), lines
    assert r.returncode == 0 or len(lines) == 1, lines
    cases += 2
    figures.add("input", "cases generated", cases)


def _loosen(repo: Path) -> None:
    """Unpack every object so single objects can be deleted."""
    packs = list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        moved = pack.with_suffix(".bak")
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], stdin=moved.open("rb"),
                       check=True)
        moved.unlink()


def _drop(repo: Path, sha: str) -> None:
    obj = repo / ".git" / "objects" / sha[:2] / sha[2:]
    obj.chmod(0o644)
    obj.unlink()


def test_audit_and_show_errors_are_one_line(tmp_path: Path, small_repo: GitRepoBuilder,
                                            figures) -> None:
    db = tmp_path / "kb.sqlite"
    _one_error(_cli(db, "audit", str(small_repo.path), "--rev", "nope"), "nope")
    # a read command on a path where no knowledge base is: named, and nothing created
    _one_error(_cli(db, "show", "12345"), "no knowledge base at")
    assert not db.exists()
    Store(db).close()
    _one_error(_cli(db, "show", "12345"), "no PR 12345")
    (tmp_path / "dir.sqlite").mkdir()
    _one_error(_cli(tmp_path / "dir.sqlite", "list"), "directory")
    (tmp_path / "junk.sqlite").write_bytes(b"this is not sqlite" * 100)
    _one_error(_cli(tmp_path / "junk.sqlite", "list"), "junk.sqlite")
    _one_error(_cli(db, "show", "\x1b[31m1"))
    figures.add("input", "cases generated", 5)


def test_record_dates_keep_their_precision() -> None:
    """An offset becomes UTC, a time without a zone stays without one, a day stays a day."""
    rec = normalize_record({
        "number": 7, "created_at": "2026-03-01T10:00:00+05:30",
        "updated_at": "2026-03-01 10:00:00", "merged_at": "2026-03-02",
    })
    assert rec["created_at"] == "2026-03-01T04:30:00Z"
    assert rec["updated_at"] == "2026-03-01T10:00:00"
    assert rec["merged_at"] == "2026-03-02"
    with pytest.raises(InputError, match="not a valid date"):
        normalize_record({"number": 7, "created_at": "2026-02-30"})
