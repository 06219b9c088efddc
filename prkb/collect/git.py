"""The git collector: mine a local clone (bare or not) for changes to the symbol family.

Pipeline per run:
1. ``git log -G`` (git's own pickaxe, with a whole-identifier regex) over the new range of the
   branch's first-parent history, restricted to ``*.py``: the hits. Nothing else is walked.
2. For each hit not mined before, oldest first: the changed files (``diff-tree --raw``), the
   blobs before and after (one ``cat-file --batch`` process), per-class declarations via
   ``ast``, the patch of the files that mention the family, blame of the removed lines on
   the parent (line lineage), and the consistency audit at the commit and at its parent.
3. One record per PR (``(#N)`` subject) or per commit, ingested in one transaction together
   with its ``mined_commits`` row; the branch tip is remembered when the run completes.

Objects missing from the repository are skipped with one warning naming them.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analyze.rules import rule_inputs
from ..analyze.state import changes_json, state_changes
from ..analyze.symbols import (
    ClassFacts,
    diff_declarations,
    moved_declarations,
    pair_moves,
)
from ..errors import PrkbError
from ..gitrepo import (
    NULL_SHA,
    CommitMeta,
    GitError,
    GitRepo,
    RawChange,
    TreeEntry,
    parse_log_raw,
)
from ..ingest import Collected, IngestResult, MinedCommit, StateUpdate, ingest_all
from ..models import SymbolChange
from ..profile import Profile
from ..progress import bar
from ..store import Store
from .sources import Source, Sources, same_ast

_SUBJECT_PR = re.compile(r"^(?P<title>.*?)\s*\(#(?P<n>\d+)\)\s*$")
_MERGE_PR = re.compile(r"^Merge pull request #(?P<n>\d+) from (?P<branch>\S+)")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "removed",
    "R": "renamed",
    "C": "copied",
    "T": "changed",
}


@dataclass
class GitCollectStats:
    repo: str
    branch: str
    tip: str
    range: str
    hits: int = 0
    mined: int = 0
    already: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    older: int = 0
    skipped_boundary: int = 0
    scanned: int = 0  # commits that touch a file holding a declaration, compared by the scan
    scan_hits: int = 0  # of those, commits with a declaration change the pickaxe cannot see
    with_changes: int = 0
    findings: int = 0
    # commits that change an input of the audit rule (the threshold...) in a file that holds
    # a builder with a finding, without naming the symbol; and those kept (state or findings
    # changed)
    rule_input_hits: int = 0
    rule_input_kept: int = 0
    findings_fixed: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    up_to_date: bool = False
    audited: bool = True  # whether the consistency audit ran at each commit

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}

    def summary(self) -> str:
        if self.up_to_date:
            return f"{self.repo} {self.branch} at {self.tip[:12]}: nothing new since the last run"
        return (
            f"{self.repo} {self.branch} ({self.range}): {self.hits} commits touch the symbol "
            f"family, {self.scan_hits} more change a declaration on lines that do not name it "
            f"(of {self.scanned} compared), "
            f"{self.mined} mined now ({self.already} already mined), {self.new} new and "
            f"{self.updated} updated records, {self.with_changes} with declaration changes, "
            + (f"{self.findings} new audit findings ({self.findings_fixed} fixed), "
               f"{self.rule_input_kept} of {self.rule_input_hits} commits kept that change an "
               "input of the audit rule in a file with a finding, " if self.audited
               else "no audit (the profile's audit reads no builder), ")
            + f"{len(self.warnings)} warnings, {self.seconds:.1f}s"
        )


def pickaxe(
    git: GitRepo, rng: list[str], profile: Profile, warn: Callable[[str], None]
) -> Iterator[tuple[str, list[str]]]:
    """Hit commits, newest first, each with the files whose diff matched, as git finds them.

    Streaming lets the caller mine a hit on one core while git searches on the other. When git
    cannot read an object it stops; the rest of the range is then scanned commit by commit so
    that only the unreadable commit is skipped.
    """
    regex = profile.git_pickaxe_regex()
    glob = profile.python_glob
    proc = git.popen(
        [
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--name-only",
            "-z",
            "--format=%x01%H",
            f"-G{regex}",
            *rng,
            "--",
            glob,
        ]
    )
    assert proc.stdout is not None and proc.stderr is not None
    seen: set[str] = set()
    buf = b""
    try:
        while True:
            chunk = proc.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            buf += chunk
            *blocks, buf = buf.split(b"\x01")
            for hit in _parse_name_only(b"\x01".join(blocks).decode("utf-8", "replace")):
                seen.add(hit[0])
                yield hit
        for hit in _parse_name_only(buf.decode("utf-8", "replace")):
            seen.add(hit[0])
            yield hit
        err = proc.stderr.read().decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if proc.returncode == 0:
        return
    warn(f"git log -G stopped ({_last(err)}); scanning the rest commit by commit")
    for sha in git.git("rev-list", "--first-parent", *rng).split():
        if sha in seen:
            continue
        r = git.run(
            [
                "diff-tree",
                "--root",
                "--no-commit-id",
                "--name-only",
                "-z",
                "-r",
                "-m",
                "--first-parent",
                f"-G{regex}",
                sha,
                "--",
                glob,
            ],
            check=False,
        )
        if r.returncode != 0:
            files = _match_readable_files(git, sha, profile, warn)
        else:
            files = [f for f in r.stdout.split("\0") if f.strip()]
        if files:
            yield sha, files


def rule_input_names(profile: Profile) -> list[str]:
    """The names of the audit rule's inputs (its module's ``INPUTS.audit_names`` ``watched``:
    for the CUDA-graph rule the threshold attribute, its helper call, the query-length
    attribute, the split attributes); none without a rule module that has inputs."""
    inputs = rule_inputs(profile.rules)
    return list(inputs.audit_names(profile).watched) if inputs is not None else []


def rule_input_regex(profile: Profile) -> str | None:
    """A POSIX ERE for ``git log -G`` naming the audit rule's inputs (:func:`rule_input_names`)
    as whole identifiers; None when the profile's audit names none."""
    names = rule_input_names(profile)
    if not names:
        return None
    alts = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return rf"(^|[^A-Za-z0-9_])({alts})([^A-Za-z0-9_]|$)"


def _load_inputs(text: str | None) -> dict[tuple[str, str, str], set[str]]:
    """The stored ``finding_inputs`` state: [rule, file, class, [files]] rows (anything else
    in it is skipped: the files are then searched again from the finding's own file)."""
    out: dict[tuple[str, str, str], set[str]] = {}
    try:
        rows = json.loads(text) if text else []
    except ValueError:
        return out
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, list) and len(row) == 4 and isinstance(row[3], list) and all(
                isinstance(x, str) for x in [*row[:3], *row[3]]):
            out[(row[0], row[1], row[2])] = set(row[3])
    return out


def _rule_input_candidates(run: _Run, tip: str, base: str | None) -> list[str]:
    """The commits that may fix an open finding without naming the symbol: for each stored
    finding, those between the commit that introduced it and the one that fixed it (or the
    tip), and after ``base`` (the run's start), that change an input of the rule in its
    builder's file or in a file its inputs come from (read when the finding was mined, kept in
    the branch's ``finding_inputs`` state for later runs); in history order, each once."""
    out: list[str] = []
    for key, intro, fixed in run.store.finding_windows(run.repo_name):
        start, end = intro, fixed or tip
        if base is not None and run.git.is_ancestor(intro, base):
            if fixed is not None and run.git.is_ancestor(fixed, base):
                continue  # fixed before this run's range: nothing new can fix it
            start = base
        files = run.finding_inputs.get(key, set()) | {key[1]}
        for sha in rule_input_commits(run.git, [f"{start}..{end}"], files, run.profile):
            if sha not in out:
                out.append(sha)
    return out


def rule_input_commits(
    git: GitRepo, rng: list[str], files: set[str], profile: Profile
) -> list[str]:
    """First-parent commits of ``rng`` (oldest first) whose diff of one of ``files`` adds or
    removes a line naming an input of the audit rule: the commits that may fix (or cause) a
    finding without naming the symbol."""
    regex = rule_input_regex(profile)
    if regex is None or not files:
        return []
    r = git.run(["log", "--first-parent", "--diff-merges=first-parent", "--reverse", "-s",
                 "--format=%H", f"-G{regex}", *rng, "--", *sorted(files)], check=False)
    return r.stdout.split() if r.returncode == 0 else []


class DeclarationScan:
    """Commits that change a declaration where no changed line names the family.

    A declaration spread over lines changes when a line inside it changes (a condition gains
    ``or ...``), and such a commit is invisible to the pickaxe. The scan asks git for the
    commits that touch the files known to hold declarations (those paths only, following
    renames), keys both sides of each file with :func:`declaration_key` (a text scan, no
    parse), and compares the two sides as ASTs only when the keys differ. Blobs are keyed
    once each.
    """

    def __init__(
        self, git: GitRepo, profile: Profile, warn: Callable[[str], None], sources: Sources
    ) -> None:
        self.git = git
        self.profile = profile
        self.warn = warn
        self.sources = sources
        self.commits = 0
        self._said: set[str] = set()

    def _key(self, blob: str, path: str) -> str | None:
        if set(blob) == {"0"}:
            return ""
        key = self.sources.key(blob)
        if key is None and blob not in self._said:
            self._said.add(blob)
            self.warn(f"declaration scan: {path}: object {blob[:12]} is missing from the "
                      "repository; this version of the file is skipped")
        return key

    def _log(self, rng: list[str], paths: list[str]) -> list[tuple[str, list[RawChange]]]:
        """Commits (newest first) touching ``paths``, each with its raw changes to them. When
        git cannot read an object on the way, the range is listed commit by commit and only
        the commits that cannot be read are skipped, with a warning."""
        r = self.git.run(
            ["log", "--first-parent", "--diff-merges=first-parent", "--raw", "-z",
             "--no-abbrev", "--format=%x01%H", *rng, "--", *paths],
            check=False,
        )
        if r.returncode == 0:
            return [c for block in r.stdout.split("\x01") for c in parse_log_raw(block)]
        self.warn(f"declaration scan: git log stopped ({_last(r.stderr)}); "
                  "listing the rest commit by commit")
        commits: list[tuple[str, list[RawChange]]] = []
        for sha in self.git.git("rev-list", "--first-parent", *rng).split():
            one = self.git.run(
                ["diff-tree", "--root", "-r", "-m", "--first-parent", "--raw", "-z",
                 "--no-abbrev", "--format=%x01%H", sha, "--", *paths],
                check=False,
            )
            if one.returncode != 0:
                self.warn(f"declaration scan: commit {sha[:12]} cannot be read "
                          f"({_last(one.stderr)}); skipped")
                continue
            commits.extend(c for block in one.stdout.split("\x01") for c in parse_log_raw(block))
        return commits

    def changed(self, rng: list[str], paths: set[str]) -> Iterator[tuple[str, set[str]]]:
        """(commit, files whose declarations changed), oldest first; ``paths`` grows with the
        names the files are renamed to."""
        found: dict[str, set[str]] = {}
        order: dict[str, int] = {}
        done: set[str] = set()
        todo = set(paths)
        while todo:
            batch = sorted(todo)
            done |= todo
            todo = set()
            for n, (sha, raw) in enumerate(self._log(rng, batch)):
                order.setdefault(sha, n)
                counted = False
                for rc in raw:
                    # a rename shows as one entry when both names are asked for, else as a
                    # deletion whose new name the whole commit tells
                    moved = (
                        [rc] if rc.status == "R"
                        else self._renamed_to(sha, rc.path) if rc.status == "D" else []
                    )
                    todo |= {m.path for m in moved} - done - paths
                    if rc.path not in done and (rc.old_path or "") not in done:
                        continue
                    if not counted:
                        self.commits += 1
                        counted = True
                    # a moved file is compared with its new self, not with nothing
                    pair = moved[0] if len(moved) == 1 else rc
                    kb = self._key(pair.old_sha, rc.path)
                    ka = self._key(pair.new_sha, pair.path)
                    if kb is None or ka is None:
                        continue
                    if pair.status == "R" and kb:  # declarations moved with their file
                        found.setdefault(sha, set()).add(pair.path)
                        continue
                    if kb == ka:
                        continue
                    if self._declarations_differ(pair):
                        found.setdefault(sha, set()).add(pair.path)
            paths |= todo
        # git lists newest first: mine oldest first, as the pickaxe's hits are
        for sha in sorted(found, key=lambda c: -order[c]):
            yield sha, found[sha]

    def _renamed_to(self, sha: str, path: str) -> list[RawChange]:
        """Where a commit that deletes ``path`` moved it (rename detection on the whole
        commit; the path-limited log cannot see the new name)."""
        parents = self.git.git("rev-list", "--parents", "-n", "1", sha).split()[1:]
        try:
            raw, _ = self.git.changed_files(
                parents[0] if parents else None, sha, counts_wanted=False
            )
        except GitError:
            return []
        return [rc for rc in raw if rc.status in "RC" and rc.old_path == path]

    def _declarations_differ(self, rc: RawChange) -> bool:
        before = self.sources.get(rc.old_sha, rc.old_path or rc.path).classes
        after = self.sources.get(rc.new_sha, rc.path).classes
        if before is None or after is None:  # missing or not valid Python: said elsewhere
            return False
        return bool(diff_declarations(rc.path, before, after, self.profile))


def declaring_files(git: GitRepo, rev: str, profile: Profile) -> set[str]:
    """Files at ``rev`` with a line that looks like a declaration of the family or the
    definition of a watched method (``git grep``): where the declaration scan starts. The
    pickaxe's hits add the files that held declarations only in the past; nothing is decided
    from these lines, they only choose where to look."""
    glob = profile.python_glob
    r = git.run(
        ["grep", "-l", "-E", profile.git_declaring_regex(), rev, "--", glob], check=False
    )
    return {ln.split(":", 1)[1] for ln in r.stdout.splitlines() if ":" in ln}


def _scan_job(
    path: str, profile: Profile, rng: list[str], paths: list[str]
) -> tuple[list[tuple[str, list[str]]], list[str], int, list[str]]:
    """The declaration scan in a child process: (found commits, warnings, commits compared,
    every path scanned, renames followed included)."""
    warnings: list[str] = []
    watched = set(paths)
    with GitRepo(path) as git:
        scan = DeclarationScan(git, profile, warnings.append, Sources(git, profile))
        found = [(sha, sorted(files)) for sha, files in scan.changed(rng, watched)]
    return found, warnings, scan.commits, sorted(watched)


def _ignore_interrupt() -> None:
    """In the scan's child process: Ctrl-C is the parent's to handle."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class BackgroundScan:
    """:class:`DeclarationScan` over the files known to declare at the start, run in a child
    process (forked before this process opens any pipe to git), so that it uses the core the
    pickaxe leaves while this one mines. :meth:`results` then scans in this process the paths
    learned since (files that declared only in the past), and yields every commit found, oldest
    first within each part. Where no child process can be had, everything runs here."""

    def __init__(self, git: GitRepo, profile: Profile, rng: list[str], paths: set[str]) -> None:
        self.git, self.profile, self.rng = git, profile, rng
        self.paths = set(paths)
        self.commits = 0
        self._pool: Any = None
        self._future: Any = None
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # the child leaves Ctrl-C to this process (which stops the run and the pool): it
            # used to print a ForkProcess traceback of its own
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_ignore_interrupt)
            self._future = self._pool.submit(
                _scan_job, str(git.path), profile, rng, sorted(self.paths)
            )
        except (OSError, ValueError, ImportError):
            self.close()

    def results(
        self, known: set[str], warn: Callable[[str], None]
    ) -> Iterator[tuple[str, set[str]]]:
        """Commits with changed declarations; ``known`` (the paths the collector has seen
        declare) gains the paths the scan followed renames to."""
        done: set[str] = set()
        found: list[tuple[str, list[str]]] = []
        if self._future is not None:
            try:
                found, said, commits, scanned = self._future.result()
            except Exception as e:  # the child died: scan here instead
                warn(f"declaration scan: the background scan failed ({e}); scanning here")
            else:
                for msg in said:
                    warn(msg)
                self.commits += commits
                done = set(scanned)
        self.close()
        rest = (known | self.paths) - done
        if rest:
            scan = DeclarationScan(self.git, self.profile, warn, Sources(self.git, self.profile))
            found += [(sha, sorted(files)) for sha, files in scan.changed(self.rng, rest)]
            self.commits += scan.commits
            done |= rest
        known |= done
        merged: dict[str, set[str]] = {}
        for sha, files in found:
            merged.setdefault(sha, set()).update(files)
        yield from merged.items()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _match_readable_files(
    git: GitRepo, sha: str, profile: Profile, warn: Callable[[str], None]
) -> list[str]:
    """The pickaxe for one commit git cannot diff: its files are listed without reading any
    blob, each readable pair is compared here, and each unreadable file is skipped by name."""
    parents = git.git("rev-list", "--parents", "-n", "1", sha).split()[1:]
    try:
        raw, _ = git.changed_files(parents[0] if parents else None, sha, counts_wanted=False)
    except GitError as e:
        warn(f"commit {sha[:12]}: cannot list its files ({e}); skipped")
        return []
    glob = profile.python_glob
    matched: list[str] = []
    for rc in raw:
        if not fnmatch.fnmatch(rc.path.rsplit("/", 1)[-1], glob):
            continue
        texts = []
        for blob in (rc.old_sha, rc.new_sha):
            texts.append("" if set(blob) == {"0"} else git.read_text(blob))
        if any(t is None for t in texts):
            warn(f"commit {sha[:12]}: {rc.path}: an object is missing from the repository; "
                 "file skipped")
            continue
        if _lines_matching(texts[0] or "", profile) != _lines_matching(texts[1] or "", profile):
            matched.append(rc.path)
    return matched


def _lines_matching(text: str, profile: Profile) -> Counter[str]:
    return Counter(ln for ln in text.splitlines() if profile.matches_line(ln))


def _parse_name_only(out: str) -> list[tuple[str, list[str]]]:
    hits: list[tuple[str, list[str]]] = []
    for block in out.split("\x01"):
        if not block.strip("\0\n"):
            continue
        head, _, rest = block.partition("\n")
        files = [f.strip("\n") for f in rest.split("\0") if f.strip("\n")]
        hits.append((head.strip("\0").strip(), files))
    return hits


def _last(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "unknown error"


def _added_matching(patch: str, profile: Profile) -> int:
    """How many added lines of a patch the line matcher matches."""
    return sum(
        1 for line in patch.split("\n")
        if line.startswith("+") and profile.matches_line(line[1:])
    )


def removed_lines(
    patch: str, profile: Profile, extra: set[int] | None = None, skip: set[int] | None = None
) -> list[int]:
    """Old-side line numbers of removed lines the pickaxe would match (family, methods, values)
    or that lie in ``extra`` (the parent's declaration lines: a condition or a continuation
    line of a declaration names no family spelling), less those in ``skip``."""
    extra = extra or set()
    skip = skip or set()
    lines: list[int] = []
    old = 0
    for line in patch.split("\n"):
        if line.startswith("@@"):
            m = re.match(r"@@ -(\d+)(?:,\d+)? \+", line)
            old = int(m.group(1)) if m else 0
            continue
        if line.startswith("-"):
            if old in extra or (old not in skip and profile.matches_line(line[1:])):
                lines.append(old)
            old += 1
        elif line.startswith("+") or line.startswith("\\"):
            continue
        else:
            old += 1
    return lines


IGNORE_REVS_FILE = ".git-blame-ignore-revs"
MAX_BLAME_HOPS = 4
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class Blamer:
    """Line lineage: the commit that last changed each given line *semantically*.

    ``git blame`` honours the repository's ``.git-blame-ignore-revs`` (read from the branch
    tip, as git itself would from a work tree). When blame still lands on a commit whose change
    to that line was formatting only (the file is equal as an AST at its parent) or a rename of
    the declaration (the class's declared value is unchanged, only the spelling moved), that
    commit is ignored too and the line blamed again, up to ``MAX_BLAME_HOPS`` times. Each row
    says what the last commit found did to the line (``kind``: semantic, format, rename), the
    commits passed over, and whether the line belongs to a declaration of the family (``decl``).
    """

    def __init__(self, path: str, profile: Profile, tip: str) -> None:
        # its own repository handle and sources: it runs in a thread beside the collector's
        self.git = GitRepo(path)
        git = self.git
        self.profile = profile
        self.sources = Sources(git, profile)
        self._pool: ThreadPoolExecutor | None = None
        self._kinds: dict[tuple[str, str, int], str] = {}
        self._times: dict[str, int] = {}
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.ignore_file: str | None = None
        r = git.run(["cat-file", "blob", f"{tip}:{IGNORE_REVS_FILE}"], check=False)
        revs = [ln.strip() for ln in r.stdout.splitlines() if _HEX40.match(ln.strip())]
        if r.returncode == 0 and revs:
            self._tmp = tempfile.TemporaryDirectory(prefix="prkb-blame-")
            self.ignore_file = os.path.join(self._tmp.name, "ignore-revs")
            with open(self.ignore_file, "w", encoding="ascii") as fh:
                fh.write("\n".join(revs) + "\n")
        self.ignored_revs = set(revs)

    def start(self, jobs: list[tuple[str, str, list[int], set[int]]]) -> _Lineage:
        """Run the first blame of each ``(parent, path, lines, decl_lines)`` job in this
        blamer's thread (git does the work; the thread only waits and reads its output) while
        the caller audits; :meth:`_Lineage.result` then finishes the rows in the caller's
        thread. Only git runs in the thread: CPython 3.11's parser is not safe to run in two
        threads at once, and telling a commit's kind parses sources."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="prkb-blame")
        first = self._pool.submit(
            lambda: [self._blame(parent, path, lines, []) if lines else []
                     for parent, path, lines, _ in jobs]
        )
        return _Lineage(self, jobs, first)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.git.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _blame(
        self, rev: str, path: str, lines: list[int], skip: list[str]
    ) -> list[tuple[int, str, int, str]]:
        """(final line, commit, its line there, its file name) for each blamed line."""
        out, times = self.git.blame(
            rev, path, lines, ignore_revs_file=self.ignore_file, ignore=skip
        )
        self._times.update(times)
        return out

    def kind(self, commit: str, path: str, line: int) -> str:
        """What ``commit`` did to ``line`` of ``path`` (its own numbering): semantic, format or
        rename. Unknown cases count as semantic (blame's answer is kept)."""
        key = (commit, path, line)
        if key in self._kinds:
            return self._kinds[key]
        kind = "semantic"
        parents = self.git.git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        if parents:
            try:
                raw, _ = self.git.changed_files(parents[0], commit, counts_wanted=False)
            except GitError:
                raw = []
            rc = next((r for r in raw if r.path == path), None)
            if rc is not None and rc.status not in "A":
                decl = None
                # a line of a declaration: what the commit did to the class's value (a parse,
                # only for files that declare)
                if self.sources.declares(rc.old_sha) or self.sources.declares(rc.new_sha):
                    before = self.sources.get(rc.old_sha, rc.old_path or path)
                    after = self.sources.get(rc.new_sha, path)
                    if before.classes is not None and after.classes is not None:
                        decl = self._decl_kind(path, before.classes, after.classes, line)
                if decl is not None:
                    kind = decl
                else:  # any other line: was the whole file only reformatted?
                    patch = self.git.file_patch(parents[0], commit, [path]).get(path, "")
                    if _reformatted(self.sources, rc, patch):
                        kind = "format"
        self._kinds[key] = kind
        return kind

    def _decl_kind(
        self, path: str, before: dict[str, ClassFacts], after: dict[str, ClassFacts], line: int
    ) -> str | None:
        """For a line inside a family declaration: format (its value did not change), rename
        (only its spelling did) or semantic; None for any other line."""
        for cls, facts in after.items():
            name = facts.span_of_line(line)
            if name is None or name not in self.profile.family:
                continue
            changes = [
                c for c in diff_declarations(path, {cls: before[cls]} if cls in before else {},
                                             {cls: facts}, self.profile)
                if c.attr in self.profile.family
            ]
            if not changes:
                return "format"
            if all(c.direction == "renamed" for c in changes):
                return "rename"
            return "semantic"
        return None

    def _step_back(self, commit: str, path: str, line: int) -> tuple[str, int, str] | None:
        """(commit, line, file) that last changed the declaration covering ``line`` of
        ``path`` at ``commit``, as it read at ``commit``'s parent: the newest commit among its
        lines there."""
        parents = self.git.git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        if not parents:
            return None
        try:
            raw, _ = self.git.changed_files(parents[0], commit, counts_wanted=False)
        except GitError:
            return None
        rc = next((r for r in raw if r.path == path), None)
        if rc is None or rc.status == "A":
            return None
        old_path = rc.old_path or path
        before = self.sources.get(rc.old_sha, old_path).classes
        after = self.sources.get(rc.new_sha, path).classes
        for cls, facts in (after or {}).items():
            name = facts.span_of_line(line)
            old = (before or {}).get(cls)
            if name is None or old is None:
                continue
            # the same member, or the family spelling the class used before a rename
            cands = [name] if name in old.spans else [
                a for a in self.profile.family if a in old.spans]
            if not cands:
                return None
            first, last = old.spans[cands[-1]]
            hits = self._blame(parents[0], old_path, list(range(first, last + 1)), [])
            if not hits:
                return None
            _, sha, orig, fname = max(hits, key=lambda h: self._times.get(h[1], 0))
            return sha, orig, fname
        return None

    def lineage(
        self,
        parent: str,
        path: str,
        lines: list[int],
        decl_lines: set[int],
        blamed: list[tuple[int, str, int, str]] | None = None,
    ) -> list[dict[str, Any]]:
        """Rows ``{file, commit, lines, decl, kind, passed}`` for ``lines`` of ``path`` at
        ``parent`` (the parent's numbering); ``decl_lines`` are those inside a declaration.
        ``blamed`` is the first blame of those lines when it was run ahead (:meth:`start`)."""
        if not lines:
            return []
        rows: dict[tuple[str, bool, str, tuple[str, ...]], int] = {}
        if blamed is None:
            blamed = self._blame(parent, path, lines, [])
        for final, commit, orig, fname in blamed:
            passed: list[str] = []
            kind = self.kind(commit, fname, orig)
            while kind != "semantic" and len(passed) < MAX_BLAME_HOPS:
                passed.append(commit)
                again = self._blame(parent, path, [final], passed)
                if not again or again[0][1] in passed:
                    # git could not match the line past that commit (a re-wrapped statement):
                    # blame the same declaration as it read just before that commit
                    back = self._step_back(commit, fname, orig)
                    if back is None:
                        break
                    commit, orig, fname = back
                else:
                    _, commit, orig, fname = again[0]
                kind = self.kind(commit, fname, orig)
            key = (commit, final in decl_lines, kind, tuple(passed))
            rows[key] = rows.get(key, 0) + 1
        return [
            {"file": path, "commit": c, "lines": n, "decl": d, "kind": k, "passed": list(p)}
            for (c, d, k, p), n in sorted(rows.items())
        ]


def _key(
    sources: Sources,
    sha: str,
    path: str,
    warn: Callable[[str], None],
    label: str,
    said: set[str] | None,
) -> tuple[str, bool]:
    """(declaration key, readable) of one side of a changed file; a missing object is warned
    once (see :func:`_parse`)."""
    if not sha or set(sha) == {"0"}:
        return "", True
    key = sources.key(sha)
    if key is None:
        _parse(sources, sha, path, warn, label, said)
        return "", False
    return key, True


_NOT_CODE = re.compile(r"[\s(),\\]+")


def _reformatted(sources: Sources, rc: RawChange, patch: str) -> bool:
    """Whether a file's change is formatting only: its removed and added lines hold the same
    text once spaces, line breaks, parentheses, commas and backslashes are dropped (a cheap
    test, so most files are never parsed for it), and the two sides are equal as ASTs."""
    gone = [ln[1:] for ln in patch.split("\n") if ln.startswith("-")]
    came = [ln[1:] for ln in patch.split("\n") if ln.startswith("+")]
    if _NOT_CODE.sub("", "".join(gone)) != _NOT_CODE.sub("", "".join(came)):
        return False
    before = sources.get(rc.old_sha, rc.old_path or rc.path)
    after = sources.get(rc.new_sha, rc.path)
    return same_ast(before.tree, after.tree)


@dataclass
class _Lineage:
    """Lineage rows of one commit, their first blame running ahead in the blamer's thread."""

    blamer: Blamer
    jobs: list[tuple[str, str, list[int], set[int]]]
    first: Future[list[list[tuple[int, str, int, str]]]]

    def result(self) -> list[dict[str, Any]]:
        return [
            row
            for (parent, path, lines, decl), blamed in zip(
                self.jobs, self.first.result(), strict=True
            )
            for row in self.blamer.lineage(parent, path, lines, decl, blamed)
        ]


def _parse(
    sources: Sources,
    sha: str,
    path: str,
    warn: Callable[[str], None],
    label: str,
    said: set[str] | None = None,
) -> tuple[Source | None, bool]:
    """(source, readable). Missing objects and bad sources are warned once and skipped.

    ``said`` is the audit's set of warnings given: the same problem is not warned twice.
    """
    if not sha or set(sha) == {"0"}:
        return None, True
    src = sources.get(sha, path)
    said = said if said is not None else set()
    if src.text is None:
        msg = f"{path}: blob {sha[:12]} is missing from the repository; skipped"
        if msg not in said:
            said.add(msg)
            warn(f"{label}: {path}: object {sha[:12]} is missing from the repository; file skipped")
        return None, False
    if src.error is not None:
        msg = f"{path}: {src.error}; skipped"
        if msg not in said:
            said.add(msg)
            warn(f"{label}: {path}: {src.error}; file skipped")
        return src, False
    return src, True


def collect_git(
    store: Store,
    path: str,
    profile: Profile,
    *,
    branch: str | None = None,
    since: str | None = None,
    repo: str | None = None,
    audit: bool = True,
    quiet: bool = False,
    warn: Callable[[str], None] = print,
    lineage: bool = True,
    fork: str | None = None,
) -> GitCollectStats:
    """Mine ``path`` (a clone) into ``store``; see the module's docstring for the steps.

    ``repo`` names the GitHub repository the PR numbers belong to (default: the profile's);
    ``fork`` names the repository whose commit pages hold this clone's commits, for records
    of commits without a PR number (a fork's own commits exist only there).
    """
    t0 = time.perf_counter()
    branch = branch or profile.branch
    repo_name = repo or profile.repo
    stats = GitCollectStats(repo_name, branch, "", "")

    def stored(_item: Collected, res: IngestResult) -> None:
        setattr(stats, res.outcome, getattr(stats, res.outcome, 0) + 1)

    records = git_records(
        store, path, profile, stats, since=since, audit=audit, quiet=quiet, warn=warn,
        lineage=lineage, fork=fork,
    )
    ingest_all(store, records, profile, progress=stored)
    stats.seconds = time.perf_counter() - t0
    return stats


def git_records(
    store: Store,
    path: str,
    profile: Profile,
    stats: GitCollectStats,
    *,
    since: str | None = None,
    audit: bool = True,
    quiet: bool = False,
    warn: Callable[[str], None] = print,
    lineage: bool = True,
    fork: str | None = None,
) -> Iterator[Collected]:
    """The records of :func:`collect_git`'s run, each with its ``mined_commits`` mark, then
    the branch cursor (written once the relations are rebuilt). ``stats`` names the
    repository and branch and is filled in as the run goes (outcomes are the caller's)."""
    t0 = time.perf_counter()
    branch, repo_name = stats.branch, stats.repo
    fork = fork or (str(profile.raw["profile"].get("fork") or "") or None)
    with GitRepo(path) as git:
        tip = git.resolve_branch(branch)
        scope = f"{repo_name}:{branch}"
        last = store.get_state("git", scope, "tip")
        stats.tip = tip
        said = warn

        def warn(msg: str) -> None:  # every warning printed is counted in the summary
            stats.warnings.append(msg)
            said(msg)
        if git.is_shallow():
            warn(
                f"{path} is a shallow clone: history before its boundary is not mined, and "
                "commits at the boundary (their parent is missing) are skipped"
            )
        if since:
            base: str | None = git.resolve(since, "revision for --since")
        elif last == tip:
            stats.up_to_date = True
            stats.range = f"{tip[:12]}"
            stats.seconds = time.perf_counter() - t0
            return
        elif last and git.is_ancestor(last, tip):
            base = last
        else:
            base = None
        rng = [f"{base}..{tip}"] if base else [tip]
        stats.range = f"{base[:12]}..{tip[:12]}" if base else f"all to {tip[:12]}"
        mined = store.mined_shas(repo_name)
        # (a profile without builder bases audits the classes that set its value: only the
        # files that name a spelling or a setter are read, audit.file_markers)
        auditor = _Auditor(git, profile, warn) if audit else None
        stats.audited = auditor is not None
        boundary = git.shallow_boundary()
        known = store.get_state("git", scope, "decl_paths")
        sources = Sources(git, profile)
        run = _Run(
            store, git, profile, repo_name, stats, warn, auditor,
            Blamer(str(path), profile, tip) if lineage else None,
            set(json.loads(known)) if known else set(), fork, sources,
        )
        # the files each open finding's rule inputs come from, as earlier runs read them
        run.finding_inputs = _load_inputs(store.get_state("git", scope, "finding_inputs"))
        hits: set[str] = set()
        # the declaration scan runs in a child process while git searches and this one mines
        background = BackgroundScan(git, profile, rng, run.decl_paths | declaring_files(
            git, tip, profile))
        try:
            with bar("collect git", total=None, quiet=quiet) as b:
                for sha, files in pickaxe(git, rng, profile, warn):
                    stats.hits += 1
                    hits.add(sha)
                    if sha in mined:
                        stats.already += 1
                        continue
                    if sha in boundary:  # said once above: its changes cannot be told
                        stats.skipped_boundary += 1
                        continue
                    b.note(sha[:10])
                    yield from _mine_commit(run, sha, set(files))
                    b.advance()
                # commits the pickaxe cannot see: a declaration changed on a line that names
                # no family spelling (a condition, a continuation line)
                b.note("declaration scan")
                skip = hits | mined | boundary
                for sha, changed in background.results(run.decl_paths, warn):
                    if sha in skip:
                        continue
                    stats.scan_hits += 1
                    b.note(sha[:10])
                    yield from _mine_commit(run, sha, changed)
                    b.advance()
                stats.scanned = background.commits
                # commits that change an input of the audit rule in a file with a finding (a
                # threshold fix names no symbol): mined, kept when the state or a finding moved
                if auditor is not None:
                    b.note("audit rule inputs")
                    done = skip | set(run.mined_now)
                    for sha in _rule_input_candidates(run, tip, base):
                        if sha in done:
                            continue
                        done.add(sha)
                        stats.rule_input_hits += 1
                        for item in _mine_commit(run, sha, set(), rule_input=True):
                            stats.rule_input_kept += 1
                            yield item
        finally:
            background.close()
            if run.blamer is not None:
                run.blamer.close()
    # the cursor moves only once the relations are built: a run killed in between redoes them
    yield Collected.only_cursor(
        [
            StateUpdate("git", scope, "decl_paths", json.dumps(sorted(run.decl_paths))),
            StateUpdate("git", scope, "finding_inputs", json.dumps(
                sorted([*k, sorted(v)] for k, v in run.finding_inputs.items()))),
            StateUpdate("git", scope, "tip", tip),
            # where the clone is: reports read a changed class from its blobs (render/report.py)
            StateUpdate("git", repo_name, "clone", str(Path(path).resolve())),
        ],
        after_relations=True,
    )


class _Auditor:
    """Runs the consistency audit at a commit and at its parent, sharing parsed files.

    The parent is audited on the commit's own tree listing with the commit's changes undone,
    so it costs no second ``ls-tree`` and parses only the files the commit changed.
    """

    def __init__(self, git: GitRepo, profile: Profile, warn: Callable[[str], None]) -> None:
        self.git = git
        self.profile = profile
        self.warn = warn
        from ..analyze import audit as mod

        self.mod = mod
        self.cache = mod.AuditCache()
        self.scan = tuple(str(p) for p in profile.audit.get("scan_paths", []))

    def run_pair(self, sha: str, parent: str | None, raw: list[RawChange]) -> tuple[Any, Any]:
        entries = self.mod.scan_entries(self.git, sha, self.profile)
        now = self.mod.audit_revision(
            self.git, sha, self.profile, warn=self.warn, cache=self.cache, entries=entries
        )
        if parent is None:
            return now, None
        before = self.mod.audit_revision(
            self.git,
            parent,
            self.profile,
            warn=self.warn,
            cache=self.cache,
            entries=self._undo(entries, raw),
        )
        return now, before

    def _in_scan(self, path: str) -> bool:
        return not self.scan or any(path.startswith(p) for p in self.scan)

    def _undo(self, entries: list[TreeEntry], raw: list[RawChange]) -> list[TreeEntry]:
        by_path = {e.path: e for e in entries}
        for rc in raw:
            if rc.status in "AR":
                by_path.pop(rc.path, None)
            if rc.old_sha == NULL_SHA:  # not a regular file at the parent: nothing to read
                by_path.pop(rc.old_path or rc.path, None)
            elif rc.status in "DMT":
                if self._in_scan(rc.path):
                    by_path[rc.path] = TreeEntry("100644", "blob", rc.old_sha, rc.path)
            elif rc.status in "RC" and rc.old_path and self._in_scan(rc.old_path):
                by_path[rc.old_path] = TreeEntry("100644", "blob", rc.old_sha, rc.old_path)
        return [by_path[p] for p in sorted(by_path)]


def _family_lines(
    classes: dict[str, ClassFacts] | None,
    profile: Profile,
    only: set[tuple[str, str]] | None = None,
) -> set[int]:
    """Lines of a parsed file that belong to a family declaration or a watched method (only
    those of the ``(class, attribute or method)`` pairs in ``only``, when given)."""
    out: set[int] = set()
    watched = set(profile.family) | set(profile.methods)
    for cls, c in (classes or {}).items():
        for name, (first, last) in c.spans.items():
            if name in watched and (only is None or (cls, name) in only):
                out.update(range(first, last + 1))
    return out


def _methods_rewritten(
    before: dict[str, ClassFacts] | None, after: dict[str, ClassFacts] | None
) -> set[tuple[str, str]]:
    """(class, method) pairs whose watched method exists on both sides with another body."""
    out: set[tuple[str, str]] = set()
    for name, a in (after or {}).items():
        b = (before or {}).get(name)
        if b is None:
            continue
        for m, tree in a.method_asts.items():
            if m in b.method_asts and b.method_asts[m] != tree:
                out.add((name, m))
    return out


@dataclass
class _Run:
    """What one collection shares across the commits it mines."""

    store: Store
    git: GitRepo
    profile: Profile
    repo_name: str
    stats: GitCollectStats
    warn: Callable[[str], None]
    auditor: _Auditor | None
    blamer: Blamer | None
    decl_paths: set[str]
    fork: str | None
    sources: Sources
    # (rule, file, class) of each finding seen -> the files its rule inputs come from; the
    # commits this run mined
    finding_inputs: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)
    mined_now: list[str] = field(default_factory=list)


def _mine_commit(
    run: _Run, sha: str, matched: set[str], *, rule_input: bool = False
) -> Iterator[Collected]:
    """The record of one commit. ``rule_input``: a commit found by the audit rule's inputs
    (it names no symbol): yielded only when the code's state or a finding changed."""
    store, git, profile, repo_name = run.store, run.git, run.profile, run.repo_name
    stats, warn, auditor, blamer = run.stats, run.warn, run.auditor, run.blamer
    decl_paths = run.decl_paths
    _warn = warn

    meta = git.commit_meta(sha)
    parent = meta.parents[0] if meta.parents else None
    label = f"commit {sha[:12]}"
    number, title = _pr_number(meta)
    try:
        raw, counts = git.changed_files(parent, sha)
    except GitError as e:
        _warn(f"{label}: cannot list its files ({e}); skipped")
        return
    notes: list[str] = []
    if counts is None:
        notes.append("line counts unavailable: an object of this commit is missing")
    changes: list[SymbolChange] = []
    watched = [  # the files the pickaxe or the declaration scan saw change (regular files)
        rc.path for rc in raw
        if (rc.path in matched or (rc.old_path or "") in matched)
        and not (rc.old_sha == NULL_SHA and rc.new_sha == NULL_SHA)
    ]
    # a renamed file's old name too: git pairs the two only when both are asked for (else the
    # patch is the whole file added, with no removed line to blame)
    olds = [rc.old_path for rc in raw if rc.path in watched and rc.status == "R" and rc.old_path]
    patches = git.file_patch(parent, sha, [*watched, *olds]) if watched else {}
    # per watched file: the parent's declaration lines, and whether it changed beyond format
    spans_before: dict[str, tuple[set[int], set[int]]] = {}
    semantic: set[str] = set()
    said = auditor.cache.warned if auditor is not None else None
    for rc in raw:
        if rc.path not in watched:
            continue
        old_path = rc.old_path or rc.path
        bkey, ok_b = _key(run.sources, rc.old_sha, old_path, _warn, label, said)
        akey, ok_a = _key(run.sources, rc.new_sha, rc.path, _warn, label, said)
        if not (ok_a and ok_b):
            notes.append(f"{rc.path}: not analysed (object missing or unreadable)")
            continue
        if any(run.sources.declares(b) for b in (rc.old_sha, rc.new_sha)):
            decl_paths.update(p for p in (rc.path, rc.old_path) if p)
        before: dict[str, ClassFacts] | None = None
        after: dict[str, ClassFacts] | None = None
        found: list[SymbolChange] = []
        if bkey != akey or rc.status == "R":  # the declarations may differ: read them
            bsrc, ok_b = _parse(run.sources, rc.old_sha, old_path, _warn, label, said)
            asrc, ok_a = _parse(run.sources, rc.new_sha, rc.path, _warn, label, said)
            if not (ok_a and ok_b):
                notes.append(f"{rc.path}: not analysed (object missing or unreadable)")
                continue
            before = bsrc.classes if bsrc is not None else None
            after = asrc.classes if asrc is not None else None
            # a class the commit removed from a renamed file lived at its old path
            found = diff_declarations(
                rc.path, before, after, profile,
                old_path=rc.old_path if rc.status == "R" else None,
            ) if (before or after) else []
            if rc.status == "R" and rc.old_path:
                found += moved_declarations(rc.old_path, rc.path, before, after, profile)
        changes.extend(found)
        if found or not _reformatted(run.sources, rc, patches.get(rc.path, "")):
            semantic.add(rc.path)
        # the members whose value changed (a renamed one did not), on the parent's side
        moved = {
            (c.class_name, c.before_attr or c.attr) for c in found if c.sets_value
        }
        moved |= _methods_rewritten(before, after)
        spans_before[rc.path] = (
            _family_lines(before, profile),
            _family_lines(before, profile, only=moved),
        )
    changes = pair_moves(changes)
    if not changes and watched:  # why a record without a change is kept at all
        named = {p: len(removed_lines(patches.get(p, ""), profile)) + _added_matching(
            patches.get(p, ""), profile) for p in watched}
        notes.append(
            "no declaration changed; kept because changed lines name the symbol in "
            + ", ".join(f"{p} ({n} line{'s' if n != 1 else ''})" for p, n in named.items())
        )
    jobs: list[tuple[str, str, list[int], set[int]]] = []
    # the repository lists its formatting commits for blame to ignore: they have no lineage
    if blamer is not None and parent and sha not in blamer.ignored_revs:
        for p in watched:
            if p not in semantic:
                continue  # equal as ASTs: its lines were re-wrapped, not changed
            every, changed = spans_before.get(p, (set(), set()))
            # declaration lines count only where the class's value changed (not renamed)
            lines = removed_lines(patches.get(p, ""), profile, extra=changed, skip=every)
            src = next((r.old_path or r.path for r in raw if r.path == p), p)
            jobs.append((parent, src, sorted(set(lines)), every))
    # blame (mostly waiting for git) runs in a thread while the audit (Python) runs here
    lineage_rows = blamer.start(jobs) if blamer is not None else None
    findings: list[dict[str, Any]] = []
    fixed: list[dict[str, Any]] = []
    levels: list[dict[str, Any]] = []
    state: list[dict[str, Any]] | None = None  # None: the audit did not run
    reads: dict[str, dict[str, str]] | None = None  # the spellings read, parent and commit
    # the files of the mechanism it changed (profile [[framework]]), and the enum's levels at
    # the parent and at the commit (null where no scanned file defines it) when the audit ran
    framework: dict[str, Any] = {"files": sorted(
        {p for rc in raw for p in (rc.path, rc.old_path) if p and p in profile.framework})}
    if auditor is not None:
        try:
            now, before_res = auditor.run_pair(sha, parent, raw)
        except PrkbError as e:
            _warn(f"{label}: audit failed ({e})")
        else:
            old = {
                (f.rule, f.file, f.class_name) for f in (before_res.findings if before_res else [])
            }
            kept = {(f.rule, f.file, f.class_name) for f in now.findings}
            for f in now.findings:
                if (f.rule, f.file, f.class_name) not in old:
                    findings.append({**f.to_json(), "commit": sha})
            # the findings at the parent that no longer hold here: this commit fixed them
            fixed = [{"rule": r, "file": fl, "class": c} for r, fl, c in sorted(old - kept)]
            # the files a finding's rule inputs come from (a base class's threshold): a fix
            # there names no symbol either (not the root base's: it changes with every
            # mechanism change)
            by_builder = {(b.file, b.class_name): b for b in now.builders}
            reads = {"before": before_res.reads if before_res is not None else {},
                     "after": now.reads}
            if before_res is not None and (before_res.levels or now.levels):
                framework["levels"] = {"before": before_res.levels, "after": now.levels}
            for f in now.findings:
                b = by_builder.get((f.file, f.class_name))
                if b is not None:
                    run.finding_inputs.setdefault((f.rule, f.file, f.class_name), set()).update(
                        str(v["origin_file"]) for v in b.values.values()
                        if v.get("origin_file") and v.get("source") != "default")
            if hasattr(auditor.mod, "builder_levels_rows"):
                levels = auditor.mod.builder_levels_rows(
                    now, {(c.class_name, c.file) for c in changes})
            renamed = {rc.old_path: rc.path for rc in raw
                       if rc.status == "R" and rc.old_path}
            state = changes_json(state_changes(
                before_res.builders if before_res is not None else None, now.builders,
                renamed))
    files = []
    for rc in raw:
        add, dele = (counts or {}).get(rc.path, (0, 0))
        files.append(
            {
                "filename": rc.path,
                "status": _STATUS.get(rc.status, "modified"),
                "additions": add,
                "deletions": dele,
                "patch": patches.get(rc.path),
                "previous_filename": rc.old_path,
            }
        )
    body = None
    m = _REVERTS.search(meta.body)
    if m:
        body = f"This reverts commit {m.group(1)}."
    ref_taken = False
    if number is not None:
        stored_sha = store.merge_sha_of(repo_name, str(number), from_git=True)
        ref_taken = stored_sha not in (None, sha)
        if ref_taken:
            notes.append(
                f"PR #{number} already has commit {str(stored_sha)[:12]}; kept under its sha"
            )
    record: dict[str, Any] = {
        "number": None if ref_taken else number,
        "title": title,
        "body": body,
        "state": "merged",
        "created_at": meta.author_date,
        "updated_at": meta.commit_date,
        "closed_at": meta.commit_date,
        "merged_at": meta.commit_date,
        "merge_commit_sha": sha,
        "html_url": (
            f"https://github.com/{repo_name}/pull/{number}"
            if number is not None and not ref_taken
            else f"https://github.com/{run.fork or repo_name}/commit/{sha}"
        ),
        "user": {"login": meta.author},
        "labels": [],
        "base": None,
        "files": files,
        "reviews": [],
        "comments": [],
        "review_comments": [],
        "source": "git",
        "prkb": {
            "repo": repo_name,
            "parent": parent,
            "symbol_changes": [c.to_json() for c in changes],
            "findings": findings,
            "builder_levels": levels,
            "state_changes": state,
            "reads": reads,
            "framework": framework,
            "findings_fixed": fixed,
            "lineage": lineage_rows.result() if lineage_rows is not None else [],
            "notes": notes,
        },
    }
    pr_ref = str(number) if number is not None and not ref_taken else f"sha:{sha}"
    if rule_input:
        if not (state or findings or fixed):
            return  # the inputs moved, the state did not: nothing to keep
        notes.append("kept because it changes an input of the audit rule ("
                     + ", ".join(rule_input_names(profile))
                     + ") in a file that holds a builder with a finding")
    run.mined_now.append(sha)
    yield Collected(record, [MinedCommit(repo_name, sha, pr_ref)], tag=sha)
    stats.findings_fixed += len(fixed)
    stats.mined += 1
    if changes:
        stats.with_changes += 1
    stats.findings += len(findings)


def _pr_number(meta: CommitMeta) -> tuple[int | None, str]:
    m = _SUBJECT_PR.match(meta.subject)
    if m:
        return int(m.group("n")), m.group("title")
    m = _MERGE_PR.match(meta.subject)
    if m:
        title = meta.body.strip().splitlines()[0] if meta.body.strip() else meta.subject
        return int(m.group("n")), title
    return None, meta.subject
