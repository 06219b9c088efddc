"""Reading a git repository through git's plumbing: no checkout, bare repositories welcome.

One long-lived ``git cat-file --batch`` process serves blob reads; objects missing from the
repository (shallow or partial clones, snapshots without large blobs) come back as ``None``.
"""

from __future__ import annotations

import os
import re
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


NULL_SHA = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REGULAR_MODES = ("100644", "100755")
SEP = "\x1e"
_PORCELAIN = re.compile(r"^([0-9a-f]{40}) (\d+) (\d+)")

# one blamed line: (its line in the blamed file, commit, its line there, file name there)
BlameLine = tuple[int, str, int, str]


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


class GitError(PrkbError):
    pass


@dataclass
class CommitMeta:
    sha: str
    parents: list[str]
    author: str
    author_date: str
    commit_date: str
    subject: str
    body: str


@dataclass
class RawChange:
    """One file of a commit's ``diff-tree --raw`` listing. A side that is not a regular file
    (a symlink, a submodule) has its blob id nulled: its bytes are not source code."""

    status: str
    old_sha: str
    new_sha: str
    path: str
    old_path: str | None

    @classmethod
    def from_raw(
        cls, fields: list[str], path: str, old_path: str | None = None
    ) -> RawChange:
        """From the fields of a ``:old_mode new_mode old_sha new_sha status`` line."""
        old_mode, new_mode, old_sha, new_sha, status = fields[:5]
        return cls(
            status[0],
            old_sha if old_mode in REGULAR_MODES else NULL_SHA,
            new_sha if new_mode in REGULAR_MODES else NULL_SHA,
            path,
            old_path,
        )


def parse_raw(
    items: list[str], counts: dict[str, tuple[int, int]] | None = None
) -> list[RawChange]:
    """The one reader of git's ``--raw -z`` listing (``diff-tree``, ``log``): ``items`` is the
    output split at NUL. With ``counts``, ``--numstat`` entries among them are read into it
    (path -> (added, deleted) lines); anything else is skipped."""
    changes: list[RawChange] = []
    i = 0
    while i < len(items):
        meta = items[i]
        if meta.strip("\n").startswith(":"):
            fields = meta.strip("\n")[1:].split()
            status = fields[4][0]
            if status in "RC":  # a rename or copy: the old path, then the new one
                old_path, path = items[i + 1], items[i + 2]
                i += 3
            else:
                old_path, path = None, items[i + 1]
                i += 2
            changes.append(RawChange.from_raw(fields, path, old_path))
            continue
        parts = meta.split("\t")
        if counts is not None and len(parts) == 3:
            if parts[2] == "":  # a rename: old and new path follow
                path = items[i + 2] if i + 2 < len(items) else ""
                i += 3
            else:
                path = parts[2]
                i += 1
            add = int(parts[0]) if parts[0].isdigit() else 0
            dele = int(parts[1]) if parts[1].isdigit() else 0
            counts[path] = (add, dele)
            continue
        i += 1
    return changes


def parse_log_raw(block: str) -> list[tuple[str, list[RawChange]]]:
    """One ``%x01%H`` block of ``git log --raw -z`` output: [(commit, its raw changes)] or
    []."""
    head, _, rest = block.partition("\n")
    if not head.strip("\0\n "):
        return []
    return [(head.strip("\0\n "), parse_raw(rest.split("\0")))]


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

    # --- commits -------------------------------------------------------------------------

    def commit_meta(self, sha: str) -> CommitMeta:
        """Parents, author, dates, subject and body of one commit."""
        out = self.git(
            "show", "-s", f"--format=%H{SEP}%P{SEP}%an{SEP}%aI{SEP}%cI{SEP}%s{SEP}%b", sha
        )
        parts = out.split(SEP)
        return CommitMeta(
            sha=parts[0].strip(),
            parents=parts[1].split(),
            author=parts[2],
            author_date=parts[3],
            commit_date=parts[4],
            subject=parts[5],
            body=parts[6].strip() if len(parts) > 6 else "",
        )

    def changed_files(
        self, parent: str | None, sha: str, *, counts_wanted: bool = True
    ) -> tuple[list[RawChange], dict[str, tuple[int, int]] | None]:
        """The commit's changed files (raw: blob ids, status) and line counts when readable.

        One ``diff-tree`` gives both; when an object is missing the counts are None and the
        listing comes from ``--raw`` alone (which needs no blob contents). Without
        ``counts_wanted`` only the listing is asked for (no blob is read: cheap on big
        commits).
        """
        base = parent or EMPTY_TREE
        r = self.run(
            [
                "diff-tree",
                "-r",
                "-z",
                "--raw",
                *(["--numstat"] if counts_wanted else []),
                "-M",
                "--no-commit-id",
                "--no-abbrev",
                base,
                sha,
            ],
            check=False,
        )
        counts: dict[str, tuple[int, int]] | None = {} if counts_wanted else None
        if r.returncode != 0:
            counts = None
            r = self.run(
                ["diff-tree", "-r", "-z", "--raw", "-M", "--no-commit-id", "--no-abbrev", base,
                 sha]
            )
        return parse_raw(r.stdout.split("\0"), counts), counts

    def file_patch(self, parent: str | None, sha: str, paths: list[str]) -> dict[str, str]:
        """Unified patches (GitHub's ``patch`` shape: hunks only) of the given paths."""
        if not paths:
            return {}
        base = parent or EMPTY_TREE
        r = self.run(
            ["diff-tree", "-p", "-M", "--no-commit-id", "--no-color", base, sha, "--", *paths],
            check=False,
        )
        if r.returncode != 0:
            return {}
        patches: dict[str, str] = {}
        current: str | None = None
        buf: list[str] = []
        for line in r.stdout.split("\n"):
            if line.startswith("diff --git "):
                if current is not None:
                    patches[current] = "\n".join(buf).rstrip("\n")
                current, buf = None, []
                continue
            if line.startswith("+++ "):
                name = line[4:]
                current = name[2:] if name.startswith("b/") else name
                continue
            if line.startswith("--- ") and not buf:
                if current is None and line[4:] != "/dev/null":
                    current = line[6:] if line[4:].startswith("a/") else line[4:]
                continue
            if line.startswith("@@") or buf:
                if line.startswith(
                    ("index ", "similarity ", "rename ", "new file", "deleted file")
                ):
                    continue
                buf.append(line)
        if current is not None:
            patches[current] = "\n".join(buf).rstrip("\n")
        return patches

    def blame(
        self,
        rev: str,
        path: str,
        lines: list[int],
        *,
        ignore_revs_file: str | None = None,
        ignore: list[str] | tuple[str, ...] = (),
    ) -> tuple[list[BlameLine], dict[str, int]]:
        """``git blame --porcelain`` of ``lines`` of ``path`` at ``rev``, passing over the
        commits in ``ignore_revs_file`` and ``ignore``: the blamed lines, and each commit's
        committer time. Nothing when git cannot blame."""
        args = ["blame", "--porcelain"]
        if ignore_revs_file:
            args += ["--ignore-revs-file", ignore_revs_file]
        for sha in ignore:
            args += ["--ignore-rev", sha]
        for ln in lines:
            args += ["-L", f"{ln},{ln}"]
        r = self.run([*args, rev, "--", path], check=False)
        if r.returncode != 0:
            return [], {}
        out: list[BlameLine] = []
        times: dict[str, int] = {}
        cur: tuple[str, int, int] | None = None
        for line in r.stdout.split("\n"):
            m = _PORCELAIN.match(line)
            if m:
                cur = (m.group(1), int(m.group(2)), int(m.group(3)))
            elif line.startswith("committer-time ") and cur is not None:
                times[cur[0]] = int(line.split()[1])
            elif line.startswith("filename ") and cur is not None:
                out.append((cur[2], cur[0], cur[1], line[len("filename "):]))
                cur = None
        return out, times

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
