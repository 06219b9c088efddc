"""The knowledge base file in a user's hands: fifty first uses at once, damaged pages, a
read-only folder. Every command either works or says what is wrong in one line; nothing is
ever written into a damaged file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prkb.store import Store

# heavy: damaged and read-only knowledge base files, a tmpfs: not in the fast tier
pytestmark = pytest.mark.heavy

DATA = Path(__file__).parent.parent / "data" / "snapshots"
PAGE = 4096


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PRKB_DB"}


def _prkb(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "prkb", "--db", str(db), "-q", *args]


def _run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_prkb(db, *args), capture_output=True, text=True, env=_env(),
                          timeout=180)


def _one_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode not in (0,), r.stdout[-500:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prkb: error: "), lines
    for w in words:
        assert w in lines[0], (w, lines[0])


def _record(n: int) -> str:
    return json.dumps({
        "number": n, "title": f"[Perf] change {n}", "state": "merged",
        "created_at": "2026-03-01T08:00:00Z", "merged_at": "2026-03-02T08:30:00Z",
        "user": {"login": f"dev{n % 7}"}, "source": "curated",
        "files": [{
            "filename": f"vllm/v1/attention/backends/b{n % 13}.py", "status": "modified",
            "additions": 1, "deletions": 1,
            "patch": (f"@@ -10,2 +10,2 @@ class B{n % 13}MetadataBuilder(Base):\n"
                      "-    _cudagraph_support = AttentionCGSupport.NEVER\n"
                      "+    _cudagraph_support = AttentionCGSupport.ALWAYS\n"),
        }],
    })


# --- fifty first uses at once ------------------------------------------------------------------

def test_fifty_processes_start_together_on_a_new_file(tmp_path: Path, figures) -> None:
    """The schema is created once and every process's record is stored: none gives up."""
    db = tmp_path / "fresh.sqlite"
    files = []
    for n in range(1, 51):
        f = tmp_path / f"r{n}.jsonl"
        f.write_text(_record(n) + "\n")
        files.append(f)
    procs = [subprocess.Popen(_prkb(db, "import", str(f)), env=_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in files]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "Traceback" not in err, err
    figures.add("concurrency", "concurrent runs", len(procs))
    with Store(db) as store:
        assert store.integrity_ok()
        names = store.applied_migrations()
        assert len(names) == len(set(names))
        numbers = {r["number"] for r in store.all_prs()}
    assert numbers == set(range(1, 51))
    figures.add("concurrency", "records compared", len(numbers))


# --- damaged pages ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sound_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sound") / "kb.sqlite"
    r = subprocess.run(_prkb(db, "import", str(DATA / "vllm-git-history.jsonl")),
                       capture_output=True, text=True, env=_env())
    assert r.returncode == 0, r.stderr
    with contextlib.closing(sqlite3.connect(db)) as conn:  # everything in the main file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def _damage(src: Path, dst: Path, page: int) -> None:
    """A copy whose page ``page`` is overwritten past its header byte: the file header
    (page 1) is intact, so SQLite opens it and meets the damage only when it reads there."""
    data = bytearray(src.read_bytes())
    at = page * PAGE + 8
    data[at:at + 1200] = b"\xde\xad\xbe\xef" * 300
    dst.write_bytes(bytes(data))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


COMMANDS = (
    ("list",),
    ("show", "42885"),
    ("report", "42885", "--lang", "en"),
    ("export", "{tmp}/out.jsonl"),
    ("site", "build", "--no-search", "--lang", "en", "-o", "{tmp}/site"),
    ("import", str(DATA / "curated-seeds.jsonl")),  # writes: must refuse
)


BTREE_PAGES = (0x02, 0x05, 0x0A, 0x0D)  # the first byte of a b-tree page (interior, leaf)


def _btree_page(db: bytes, page: int) -> int:
    """The first b-tree page at or after ``page`` (0-based). The check before a write sees a
    damaged b-tree page; the bytes of an overflow or free page carry no structure it could
    check (SQLite keeps no page checksums): a reader that meets such text says the file is
    damaged, but a write that does not read it is not refused."""
    last = len(db) // PAGE - 1
    while page < last and db[page * PAGE] not in BTREE_PAGES:
        page += 1
    return page


def test_damaged_pages_give_one_line_and_no_write(sound_kb: Path, tmp_path: Path,
                                                  figures) -> None:
    pages = sound_kb.stat().st_size // PAGE
    assert pages > 20
    image = sound_kb.read_bytes()
    tried = refused = 0
    for page in sorted({_btree_page(image, p) for p in
                        (2, pages // 4, pages // 2, (3 * pages) // 4, pages - 2)}):
        db = tmp_path / f"damaged{page}.sqlite"
        _damage(sound_kb, db, page)
        before = _digest(db)
        for cmd in COMMANDS:
            args = [a.format(tmp=tmp_path / f"o{page}") for a in cmd]
            (tmp_path / f"o{page}").mkdir(exist_ok=True)
            r = _run(db, *args)
            tried += 1
            if cmd[0] == "import":  # a writer checks the file first, whatever page it is
                _one_error(r, "is damaged", str(db), "integrity_check", "prkb export")
                assert r.returncode == 1
                refused += 1
            elif r.returncode != 0:  # a reader that met the damaged page
                _one_error(r, "is damaged", str(db))
                refused += 1
            assert _digest(db) == before, (page, cmd)  # nothing written, ever
            for extra in (".sqlite-wal",):
                wal = db.with_suffix(extra)
                assert not wal.exists() or wal.stat().st_size == 0, (page, cmd)
    figures.add("faults", "damaged-file runs", tried)
    figures.add("faults", "damaged-file refusals", refused)
    assert refused >= 5  # every import at least


def test_a_sound_file_is_written_as_before(sound_kb: Path, tmp_path: Path) -> None:
    """The check before the first write lets a sound file through (and costs one scan)."""
    db = tmp_path / "kb.sqlite"
    db.write_bytes(sound_kb.read_bytes())
    r = _run(db, "import", str(DATA / "curated-seeds.jsonl"))
    assert r.returncode == 0, r.stderr


# --- a read-only folder ---------------------------------------------------------------------

@contextlib.contextmanager
def _tmpfs(path: Path) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs in CI: {r.stderr.strip()}")
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()}): needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_read_only_folder_reads_and_refuses_writes(sound_kb: Path, tmp_path: Path,
                                                     figures) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with _tmpfs(tmp_path / "ro") as ro:
        db = ro / "kb.sqlite"
        db.write_bytes(sound_kb.read_bytes())
        # a KB last closed by a writer in WAL mode: its -wal/-shm are gone
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        before = _digest(db)
        opened = 0
        listing = _run(db, "list", "--json")
        assert listing.returncode == 0, listing.stderr
        git_history = len((DATA / "vllm-git-history.jsonl").read_text().splitlines())
        assert len(json.loads(listing.stdout)) == git_history
        for cmd in (("show", "42885"), ("report", "42885", "--lang", "zh"),
                    ("export", str(out / "all.jsonl")),
                    ("site", "build", "--no-search", "--lang", "en", "-o", str(out / "site"))):
            r = _run(db, *cmd)
            assert r.returncode == 0 and "Traceback" not in r.stderr, (cmd, r.stderr)
            opened += 1
        assert len((out / "all.jsonl").read_text().splitlines()) == git_history
        w = _run(db, "import", str(DATA / "curated-seeds.jsonl"))
        _one_error(w, "read-only", str(db))
        assert w.returncode == 2
        fresh = _run(ro / "new.sqlite", "import", str(DATA / "curated-seeds.jsonl"))
        _one_error(fresh, "read-only", "cannot create")
        _one_error(_run(ro / "new.sqlite", "list"), "no knowledge base at")
        assert _digest(db) == before
    figures.add("faults", "read-only opens", opened + 1)
