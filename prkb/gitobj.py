"""Reading a git repository through git's plumbing: no checkout, bare repositories welcome.

One long-lived ``git cat-file --batch`` process serves blob reads; objects missing from the
repository (shallow or partial clones, snapshots without large blobs) come back as ``None``.
"""

from __future__ import annotations

import os
import subprocess
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import InputError, PrkbError

GIT_ENV = {
    **os.environ,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone must not reach for its promisor remote
}


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


class GitError(PrkbError):
    pass


class GitRepo:
    """A git repository at ``path`` (a work tree or a bare repository)."""

    def __init__(self, path: str | Path, *, cache_blobs: int = 4096) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise InputError(f"{self.path}: no such directory")
        if not self.path.is_dir():
            raise InputError(f"{self.path}: not a directory, so not a git repository")
        res = self.run(["rev-parse", "--git-dir"], check=False)
        if res.returncode != 0:
            raise InputError(f"{self.path}: not a git repository")
        gd = Path(res.stdout.strip())
        self.git_dir = gd if gd.is_absolute() else (self.path / gd).resolve()
        self._batch: subprocess.Popen[bytes] | None = None
        self._cache: OrderedDict[str, bytes | None] = OrderedDict()
        self._cache_max = cache_blobs
        self.missing: set[str] = set()

    # --- processes ------------------------------------------------------------------------

    def run(
        self, args: list[str], *, check: bool = True, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            res = subprocess.run(
                ["git", "-C", str(self.path), *args],
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=GIT_ENV,
                input=input,
            )
        except FileNotFoundError:
            raise PrkbError("git is not installed (needed to read repositories)") from None
        if check and res.returncode != 0:
            err = res.stderr.strip().splitlines()
            raise GitError(
                f"git {args[0]} failed in {self.path}: {err[-1] if err else res.returncode}"
            )
        return res

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        return self.run(list(args), check=check, input=input).stdout

    def popen(self, args: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["git", "-C", str(self.path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=GIT_ENV,
        )

    # --- refs -----------------------------------------------------------------------------

    def resolve(self, rev: str, what: str = "revision") -> str:
        if rev.startswith("-"):
            raise InputError(f"{what} {rev!r} is not a revision name")
        res = self.run(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], check=False)
        if res.returncode != 0 or not res.stdout.strip():
            raise InputError(f"{self.path}: unknown {what} {rev!r}")
        return res.stdout.strip()

    def resolve_branch(self, branch: str) -> str:
        cands = [f"refs/heads/{branch}", f"refs/remotes/origin/{branch}", branch]
        if branch == "HEAD":  # the checked-out commit, not origin/HEAD (the remote's default)
            cands = ["HEAD"]
        for cand in cands:
            res = self.run(["rev-parse", "--verify", "--quiet", f"{cand}^{{commit}}"], check=False)
            if res.returncode == 0 and res.stdout.strip():
                return res.stdout.strip()
        raise InputError(f"{self.path}: unknown branch {branch!r}")

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run(["merge-base", "--is-ancestor", a, b], check=False).returncode == 0

    def is_shallow(self) -> bool:
        return (self.git_dir / "shallow").exists()

    def shallow_boundary(self) -> set[str]:
        """Commits whose parents a shallow clone does not have."""
        path = self.git_dir / "shallow"
        if not path.exists():
            return set()
        return set(path.read_text(encoding="ascii", errors="replace").split())

    # --- objects --------------------------------------------------------------------------

    def _batch_proc(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=GIT_ENV,
            )
        return self._batch

    def read_blob(self, sha: str) -> bytes | None:
        """The blob's bytes, or None when the object is missing from the repository."""
        if not sha or set(sha) == {"0"}:
            return None
        if sha in self._cache:
            self._cache.move_to_end(sha)
            return self._cache[sha]
        proc = self._batch_proc()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline()
        if not header:
            self._batch = None
            raise GitError(f"git cat-file stopped while reading {sha} in {self.path}")
        parts = header.split()
        data: bytes | None
        if len(parts) >= 2 and parts[1] == b"missing":
            data = None
            self.missing.add(sha)
        else:
            size = int(parts[2])
            data = _read_exact(proc.stdout, size)
            proc.stdout.read(1)  # trailing newline
        self._cache[sha] = data
        if len(self._cache) > self._cache_max:
            self._cache.popitem(last=False)
        return data

    def read_text(self, sha: str) -> str | None:
        data = self.read_blob(sha)
        if data is None:
            return None
        return data.decode("utf-8", errors="replace")

    def ls_tree(self, rev: str, paths: list[str] | None = None) -> list[TreeEntry]:
        args = ["ls-tree", "-r", "-z", "--full-tree", rev]
        if paths:
            args += ["--", *paths]
        out = self.git(*args)
        entries = []
        for rec in out.split("\0"):
            if not rec:
                continue
            meta, _, path = rec.partition("\t")
            mode, typ, sha = meta.split()
            entries.append(TreeEntry(mode, typ, sha, path))
        return entries

    def close(self) -> None:
        if self._batch is not None:
            try:
                if self._batch.stdin:
                    self._batch.stdin.close()
                self._batch.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._batch.kill()
            self._batch = None

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_exact(fh: IO[bytes], size: int) -> bytes:
    chunks = []
    left = size
    while left > 0:
        chunk = fh.read(left)
        if not chunk:
            raise GitError("git cat-file output ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
