"""A knowledge base records the profile its facts were derived with: commands without
--profile use it, another profile is refused in one line (nothing written), ``prkb rebuild``
re-derives every record with a new one, and an edited profile text is used with a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from prkb.store import Store

DATA = Path(__file__).parent.parent / "data" / "snapshots"
TOY = """
[profile]
name = "toy-quant"
repo = "example/toy"
rules = ""
[symbol]
family = ["quant_support"]
enum = "QuantSupport"
[levels]
order = ["NONE", "WEIGHTS", "FULL"]
"""


def _toy_record(n: int) -> str:
    return json.dumps({
        "number": n, "title": f"Quantize toy {n}", "state": "merged",
        "created_at": "2026-03-01T08:00:00Z", "merged_at": "2026-03-02T08:30:00Z",
        "user": {"login": "dev"}, "source": "curated",
        "files": [{
            "filename": "toy/layers.py", "status": "modified", "additions": 1, "deletions": 1,
            "patch": ("@@ -3,2 +3,2 @@ class ToyLayer(Base):\n"
                      "-    quant_support = QuantSupport.NONE\n"
                      "+    quant_support = QuantSupport.FULL\n"),
        }],
    })


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PRKB_DB"}


def _prkb(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prkb", "--db", str(db), "-q", *args],
                          capture_output=True, text=True, env=_env(), timeout=120)


def _changes(db: Path, n: int) -> list[dict]:
    r = _prkb(db, "show", str(n), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["symbol_changes"]


def test_the_first_write_records_the_profile_and_readers_use_it(tmp_path: Path) -> None:
    toy = tmp_path / "toy.toml"
    toy.write_text(TOY)
    snap = tmp_path / "toy.jsonl"
    snap.write_text(_toy_record(7) + "\n")
    db = tmp_path / "kb.sqlite"
    assert _prkb(db, "--profile", str(toy), "import", str(snap)).returncode == 0
    binding = Store.peek_profile(db)
    assert binding is not None and binding.name == "toy-quant"
    assert binding.source == str(toy.resolve()) and len(binding.hash) == 64
    # no --profile: the recorded one is used (the default profile would see no change here)
    assert _prkb(db, "import", str(snap)).returncode == 0
    changes = _changes(db, 7)
    assert [(c["class"], c["before"], c["after"]) for c in changes] == [
        ("ToyLayer", "NONE", "FULL")]


def test_another_profile_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    db = tmp_path / "kb.sqlite"
    assert _prkb(db, "import", str(DATA / "curated-seeds.jsonl")).returncode == 0
    toy = tmp_path / "toy.toml"
    toy.write_text(TOY)
    before = db.read_bytes()
    for cmd in (("import", str(DATA / "curated-seeds.jsonl")), ("list",), ("report", "47144")):
        r = _prkb(db, "--profile", str(toy), *cmd)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert "'vllm-cudagraph', not 'toy-quant'" in lines[0]
        assert f"rebuild --profile {toy}" in lines[0]
    assert db.read_bytes() == before


def test_rebuild_rederives_with_the_new_profile(tmp_path: Path) -> None:
    toy = tmp_path / "toy.toml"
    toy.write_text(TOY)
    snap = tmp_path / "toy.jsonl"
    snap.write_text(_toy_record(7) + "\n")
    db = tmp_path / "kb.sqlite"
    # built with the default profile: the toy's declaration is not a change there
    assert _prkb(db, "import", str(snap)).returncode == 0
    assert _changes(db, 7) == []
    r = _prkb(db, "rebuild", "--profile", str(toy), "--json")
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)
    assert counts == {"records": 1, "updated": 1, "git_records": 0, "profile": "toy-quant"}
    assert [c["after"] for c in _changes(db, 7)] == ["FULL"]
    binding = Store.peek_profile(db)
    assert binding is not None and binding.name == "toy-quant"
    # and now the default profile is the one refused
    assert _prkb(db, "--profile", "vllm-cudagraph", "list").returncode == 2


def test_rebuild_unmarks_git_commits(tmp_path: Path) -> None:
    db = tmp_path / "kb.sqlite"
    assert _prkb(db, "import", str(DATA / "vllm-git-history.jsonl")).returncode == 0
    with Store(db) as store, store.transaction():
        store.mark_mined("vllm-project/vllm", "a" * 40, "42885")
        store.set_state("git", "vllm-project/vllm:main", "tip", "a" * 40)
        store.set_state("git", "vllm-project/vllm", "clone", str(tmp_path / "clone"))
    r = _prkb(db, "rebuild")
    assert r.returncode == 0, r.stderr
    assert "collect git' again" in r.stdout
    with Store(db) as store:
        assert store.mined_shas("vllm-project/vllm") == set()
        assert store.get_state("git", "vllm-project/vllm:main", "tip") is None
        # where the records' code comes from is no cursor: reports still read its files
        assert store.get_state("git", "vllm-project/vllm", "clone") == str(tmp_path / "clone")


def test_an_edited_profile_is_used_with_a_warning(tmp_path: Path) -> None:
    toy = tmp_path / "toy.toml"
    toy.write_text(TOY)
    snap = tmp_path / "toy.jsonl"
    snap.write_text(_toy_record(7) + "\n")
    db = tmp_path / "kb.sqlite"
    assert _prkb(db, "--profile", str(toy), "import", str(snap)).returncode == 0
    toy.write_text(TOY.replace('"FULL"]', '"FULL", "EXTRA"]'))
    r = _prkb(db, "list")
    assert r.returncode == 0, r.stderr
    assert "profile 'toy-quant' changed since knowledge base" in r.stderr
    assert "prkb rebuild" in r.stderr


def test_a_knowledge_base_from_before_records_nothing_until_written(tmp_path: Path) -> None:
    db = tmp_path / "kb.sqlite"
    Store(db).close()
    assert Store.peek_profile(db) is None
    toy = tmp_path / "toy.toml"
    toy.write_text(TOY)
    assert _prkb(db, "--profile", str(toy), "list").returncode == 0  # reading records nothing
    assert Store.peek_profile(db) is None
    snap = tmp_path / "toy.jsonl"
    snap.write_text(_toy_record(3) + "\n")
    assert _prkb(db, "--profile", str(toy), "import", str(snap)).returncode == 0
    binding = Store.peek_profile(db)
    assert binding is not None and binding.name == "toy-quant"


def test_facts_an_earlier_prkb_derived_are_named_until_rebuilt(tmp_path: Path) -> None:
    """A knowledge base records the version of prkb's derivation of facts; one made by an
    earlier prkb (no version recorded) says so on every use, a fresh one does not, and
    ``prkb rebuild`` records the current version."""
    import sqlite3

    from prkb.ingest import ANALYSIS

    db = tmp_path / "kb.sqlite"
    assert _prkb(db, "import", str(DATA / "vllm-git-history.jsonl")).returncode == 0
    r = _prkb(db, "list")
    assert r.returncode == 0 and "earlier prkb" not in r.stderr
    with sqlite3.connect(db) as conn:  # as a prkb before ANALYSIS left it
        conn.execute("DELETE FROM kb_meta WHERE key = 'profile.analysis'")
    r = _prkb(db, "list")
    assert r.returncode == 0
    assert (f"holds facts an earlier prkb derived (analysis 1, now {ANALYSIS}): stored risk "
            "tags and platforms may differ from what this one derives ('prkb rebuild' "
            "re-derives them)") in r.stderr
    assert _prkb(db, "rebuild").returncode == 0
    r = _prkb(db, "list")
    assert r.returncode == 0 and "earlier prkb" not in r.stderr
    binding = Store.peek_profile(db)
    assert binding is not None and binding.analysis == ANALYSIS
