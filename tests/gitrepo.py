"""Small real git repositories for tests: init, write files, commit, get shas back.

Usage::

    repo = GitRepoBuilder.init(tmp_path / "src")
    sha1 = repo.commit({"a/b.py": "x = 1\\n"}, "first (#1)")
    sha2 = repo.commit({"a/b.py": None}, "remove it", author="Ann <ann@example.org>",
                       date="2026-01-02T03:04:05+00:00")
    bare = repo.bare_clone(tmp_path / "bare.git")

``files`` maps a path to its new text (``None`` deletes it). Dates default to a fixed clock that
advances one hour per commit, so commits are ordered and reproducible.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

DEFAULT_AUTHOR = "Test Author <author@example.org>"
_START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run git in ``cwd`` with a clean, predictable environment; return stdout."""
    full_env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        **(env or {}),
    }
    res = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=full_env, check=False
    )
    if res.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {res.stderr.strip()}")
    return res.stdout


class GitRepoBuilder:
    """A work-tree repository in a temporary directory, built commit by commit."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        self.branch = branch
        self._tick = 0
        self.shas: list[str] = []

    @classmethod
    def init(cls, path: Path, branch: str = "main") -> GitRepoBuilder:
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", branch)
        git(path, "config", "user.name", "Test Author")
        git(path, "config", "user.email", "author@example.org")
        git(path, "config", "commit.gpgsign", "false")
        return cls(path, branch)

    def write(self, files: Mapping[str, str | None]) -> None:
        """Write (or with ``None`` delete) files in the work tree and stage them."""
        for rel, text in files.items():
            target = self.path / rel
            if text is None:
                if target.exists():
                    git(self.path, "rm", "-q", "--", rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            git(self.path, "add", "--", rel)

    def commit(
        self,
        files: Mapping[str, str | None] | None = None,
        subject: str = "change",
        *,
        author: str = DEFAULT_AUTHOR,
        date: str | None = None,
        body: str = "",
    ) -> str:
        """Write ``files``, commit them with ``subject`` and return the new commit's sha."""
        if files:
            self.write(files)
        if date is None:
            date = (_START + timedelta(hours=self._tick)).isoformat()
        self._tick += 1
        name, _, email = author.partition("<")
        env = {
            "GIT_AUTHOR_NAME": name.strip(),
            "GIT_AUTHOR_EMAIL": email.rstrip(">").strip(),
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name.strip(),
            "GIT_COMMITTER_EMAIL": email.rstrip(">").strip(),
            "GIT_COMMITTER_DATE": date,
        }
        message = subject if not body else f"{subject}\n\n{body}"
        git(self.path, "commit", "-q", "--allow-empty", "-m", message, env=env)
        sha = self.head()
        self.shas.append(sha)
        return sha

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD").strip()

    def blob_sha(self, rev: str, rel: str) -> str:
        return git(self.path, "rev-parse", f"{rev}:{rel}").strip()

    def delete_object(self, sha: str) -> Path:
        """Remove one loose object file (to simulate a repository with a missing blob)."""
        obj = self.path / ".git" / "objects" / sha[:2] / sha[2:]
        obj.chmod(0o644)
        obj.unlink()
        return obj

    def bare_clone(self, dest: Path) -> Path:
        git(self.path.parent, "clone", "-q", "--bare", str(self.path), str(dest))
        return dest


KV_MODULE = "vllm/v1/attention/backends/x_attn.py"


def kv_backend_history(path: Path) -> GitRepoBuilder:
    """A history for the KV-update profile (a bool on backends): one backend class whose
    ``forward_includes_kv_cache_update`` goes False (#1) -> True (#2)."""
    repo = GitRepoBuilder.init(path)
    for i, v in enumerate(["False", "True"], 1):
        repo.commit({KV_MODULE: "class AttentionBackend:\n    pass\n\n\n"
                                "class XAttnBackend(AttentionBackend):\n"
                                f"    forward_includes_kv_cache_update: bool = {v}\n"},
                    f"Set {v} (#{i})")
    return repo
