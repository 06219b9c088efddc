"""Collectors as plug-ins: another package adds a ``prkb collect`` source through the
entry-point group ``prkb.collectors``, and its records (``source: gitlab``) go through every
output.

The third-party collector is :class:`GitlabCollector` below. It is installed the way pip
installs a package: a ``*.dist-info`` folder (``METADATA``, ``entry_points.txt``) in a folder
put on ``sys.path``, which ``importlib.metadata`` reads; nothing of prkb is replaced.
"""

from __future__ import annotations

import argparse
import email
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gitrepo import GitRepoBuilder, git

from prkb import Collected, Profile, Store, ingest_all
from prkb.cli import main
from prkb.collect.plugin import BUNDLED, GROUP
from prkb.errors import InputError
from prkb.records import normalize_record

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "acme/vllm-fork"
URL = "https://gitlab.example"
FILE = "vllm/v1/attention/backends/rocm_attn.py"
_MR = re.compile(r"^See merge request (?P<project>\S+)!(?P<iid>\d+)\s*$", re.M)


# --- the third-party collector --------------------------------------------------------------


class GitlabCollector:
    """A GitLab project's merge requests, read from its clone: each merge commit GitLab made
    ("See merge request group/name!N") is one record with the merge request's number, title,
    description, author, date, link and per-file patches, of ``source: gitlab``."""

    name = "gitlab"
    help = "read a GitLab project's merge requests from the merge commits of its clone"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", help="the project's clone")
        parser.add_argument("--url", default=URL, help="the GitLab server (default: %(default)s)")

    def run(self, args: argparse.Namespace, store: Store, profile: Profile) -> object:
        return ingest_all(store, self.records(Path(args.path), args.url), profile)

    def records(self, path: Path, url: str) -> Iterator[Collected]:
        log = git(path, "log", "--reverse", "--first-parent", "--format=%H%x00%aI%x00%an%x00%B%x1e")
        for entry in log.split("\x1e"):
            if not entry.strip():
                continue
            sha, date, author, message = entry.strip("\n").split("\x00")
            m = _MR.search(message)
            if m is None:
                continue
            # GitLab's merge commit: "Merge branch ... into ...", the title, the description
            paragraphs = [p.strip() for p in message[: m.start()].split("\n\n") if p.strip()]
            iid = int(m["iid"])
            yield Collected({
                "number": iid,
                "title": paragraphs[1] if len(paragraphs) > 1 else paragraphs[0],
                "body": "\n\n".join(paragraphs[2:]),
                "state": "merged",
                "created_at": date,
                "updated_at": date,
                "merged_at": date,
                "merge_commit_sha": sha,
                "html_url": f"{url}/{m['project']}/-/merge_requests/{iid}",
                "user": {"login": author},
                "files": list(self.files(path, sha)),
                "source": "gitlab",
            })

    @staticmethod
    def files(path: Path, sha: str) -> Iterator[dict[str, object]]:
        status = {"A": "added", "M": "modified", "D": "removed"}
        changed = git(path, "diff-tree", "-r", "--no-commit-id", "--name-status", f"{sha}^1", sha)
        for line in changed.splitlines():
            kind, name = line.split("\t", 1)
            diff = git(path, "diff-tree", "-p", "-r", "--no-commit-id", f"{sha}^1", sha, "--", name)
            patch = diff[diff.index("@@"):] if "@@" in diff else None
            yield {"filename": name, "status": status.get(kind[0], "modified"),
                   "additions": sum(1 for x in (patch or "").splitlines()
                                    if x.startswith("+")),
                   "deletions": sum(1 for x in (patch or "").splitlines()
                                    if x.startswith("-")),
                   "patch": patch}


class NoRun:
    """Not a collector: it has no ``run``."""

    name = "norun"
    help = "a collector without a run"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path")


class OtherGitlab(GitlabCollector):
    """Another package's collector of the same name."""

    help = "another gitlab collector"


class Silent(GitlabCollector):
    """A collector that stores its records but returns no report."""

    name = "silent"

    def run(self, args: argparse.Namespace, store: Store, profile: Profile) -> object:
        super().run(args, store, profile)
        return None


class Clashing(GitlabCollector):
    """A collector whose options clash with prkb's own ``--db``."""

    name = "clashing"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--db")


# --- installing plug-ins --------------------------------------------------------------------


def install(where: Path, dist: str, entries: dict[str, str]) -> Path:
    """A distribution ``dist`` whose ``prkb.collectors`` entry points are ``entries`` (name
    -> ``module:attr``; none: no such group), as pip leaves it in site-packages:
    ``where/DIST-1.0.dist-info``."""
    info = where / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = [f"[{GROUP}]", *(f"{k} = {v}" for k, v in entries.items())] if entries else []
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return where


def here(attr: str) -> str:
    """An entry point's value naming ``attr`` of this module."""
    return f"{__name__}:{attr}"


@pytest.fixture(autouse=True)
def wide_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help lines unwrapped, whatever the terminal (argparse reads COLUMNS)."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The gitlab collector installed (distribution ``prkb-gitlab``)."""
    site = install(tmp_path / "site-packages", "prkb-gitlab", {"gitlab": here("GitlabCollector")})
    monkeypatch.syspath_prepend(str(site))
    return site


@pytest.fixture
def clone(tmp_path: Path) -> GitRepoBuilder:
    """A GitLab project's clone: the builder declared UNIFORM_BATCH, then merge request !12
    raises it to ALWAYS, then a commit GitLab did not merge."""
    r = GitRepoBuilder.init(tmp_path / "clone")
    decl = ("from vllm.v1.attention.backends.utils import AttentionCGSupport\n\n\n"
            "class RocmAttentionMetadataBuilder:\n"
            "    _cudagraph_support = AttentionCGSupport.{}\n")
    r.commit({FILE: decl.format("UNIFORM_BATCH")}, "initial import")
    r.commit({FILE: decl.format("ALWAYS")}, "Merge branch 'rocm-always' into 'main'",
             author="Gitlab Dev <dev@gitlab.example>",
             body=("Raise the ROCm builder to ALWAYS\n\nFull graphs for every batch on ROCm.\n\n"
                   f"See merge request {PROJECT}!12"))
    r.commit({"README.md": "docs\n"}, "docs: a readme")
    return r


def collect(db: Path, clone: GitRepoBuilder) -> None:
    assert main(["--db", str(db), "-q", "collect", "gitlab", str(clone.path)]) == 0


# --- the tests ----------------------------------------------------------------------------------


def test_the_bundled_collectors_are_declared_as_entry_points() -> None:
    """pyproject.toml declares what prkb.collect.plugin falls back to."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[GROUP] == BUNDLED


@pytest.mark.parametrize("source", ["gitlab", "git+github", "bitbucket-server", "sr.ht", "x"])
def test_a_record_may_name_any_source(source: str) -> None:
    assert normalize_record({"number": 1, "source": source})["source"] == source


@pytest.mark.parametrize("source", ["GitLab", "git lab", "9git", "+git", "git-", "g" * 41,
                                    "git\u202e", "gitlab\n"])
def test_a_source_is_a_lowercase_name(source: str) -> None:
    with pytest.raises(InputError, match="'source' must be a lowercase name"):
        normalize_record({"number": 1, "source": source})


def test_a_plugin_is_a_collect_subcommand(plugins: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        main(["collect", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr()
    listed = re.findall(r"^    ([a-z][a-z0-9_-]*) +(.*)$", out.out, re.M)
    assert [name for name, _ in listed] == ["git", "github", "gitlab"]
    assert dict(listed)["gitlab"] == GitlabCollector.help
    assert out.err == ""
    with pytest.raises(SystemExit):
        main(["collect", "gitlab", "--help"])
    text = capsys.readouterr().out
    for option in ("path", "--url", "--json", "--db", "--profile"):
        assert option in text


def test_a_plugin_collects_into_the_knowledge_base(
    plugins: Path, clone: GitRepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    db = tmp_path / "kb.sqlite"
    assert main(["--db", str(db), "-q", "collect", "gitlab", str(clone.path), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert (counts["new"], counts["failed"]) == (1, 0)
    with Store(db) as store:
        [rec] = list(store.raw_record(row) for row in store.prs_for_export())
    assert rec["source"] == "gitlab"
    assert rec["title"] == "Raise the ROCm builder to ALWAYS"
    assert rec["html_url"] == f"{URL}/{PROJECT}/-/merge_requests/12"
    assert main(["--db", str(db), "collect", "gitlab", str(clone.path)]) == 0  # idempotent
    assert "0 new, 0 updated, 1 unchanged" in capsys.readouterr().out
    assert main(["--db", str(db), "show", "12"]) == 0
    shown = capsys.readouterr().out
    assert "RocmAttentionMetadataBuilder" in shown and "ALWAYS" in shown


# The report shows a source it does not know by its name (templates/report/sections/header.j2:
# `L.source.get(pr.source) or pr.source|t`; it raised UndefinedError before).

@pytest.mark.parametrize("fmt", ["md", "txt", "html"])
def test_reports_of_a_plugin_record(
    plugins: Path, clone: GitRepoBuilder, tmp_path: Path, fmt: str
) -> None:
    db = tmp_path / "kb.sqlite"
    collect(db, clone)
    for lang in ("en", "zh"):
        out = tmp_path / f"12.{lang}.{fmt}"
        assert main(["--db", str(db), "report", "12", "--lang", lang, "--format", fmt,
                     "-o", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "Raise the ROCm builder to ALWAYS" in text
        assert f"{PROJECT}/-/merge_requests/12" in text
        assert "ALWAYS" in text and "UNIFORM_BATCH" in text  # the change read from its patch
        assert "gitlab" in text  # where the record comes from, by its source's name
    english = (tmp_path / f"12.en.{fmt}").read_text(encoding="utf-8")
    assert re.search(r"Source of the record\W+gitlab", english)


def test_the_site_shows_a_plugin_record(
    plugins: Path, clone: GitRepoBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "kb.sqlite"
    collect(db, clone)
    site = tmp_path / "site"
    assert main(["--db", str(db), "-q", "site", "build", "-o", str(site), "--no-search"]) == 0
    for lang in ("en", "zh"):
        page = (site / lang / "pr" / "12.html").read_text(encoding="utf-8")
        assert "Raise the ROCm builder to ALWAYS" in page and "gitlab" in page


def test_the_digest_shows_a_plugin_record(
    plugins: Path, clone: GitRepoBuilder, tmp_path: Path
) -> None:
    db = tmp_path / "kb.sqlite"
    collect(db, clone)
    for fmt in ("text", "html"):
        eml = tmp_path / f"digest-{fmt}.eml"
        # the merge request was merged on 2026-01-01 (GitRepoBuilder's clock): ISO week 1
        assert main(["--db", str(db), "-q", "digest", "--week", "2026-W01", "--format", fmt,
                     "-o", str(eml)]) == 0
        msg = email.message_from_bytes(eml.read_bytes())
        body = "".join(part.get_payload(decode=True).decode("utf-8")
                       for part in msg.walk() if not part.is_multipart())
        for lang in ("Merged", "已合并"):  # both languages
            section = body.split(lang, 1)[1]
            assert "#12 Raise the ROCm builder to ALWAYS" in section
            assert f"{URL}/{PROJECT}/-/merge_requests/12" in section
        assert "UNIFORM_BATCH" in body and "ALWAYS" in body  # its declaration change


def test_a_broken_plugin_is_left_out_with_a_warning(
    tmp_path: Path, clone: GitRepoBuilder, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture
) -> None:
    site = install(tmp_path / "site-packages", "prkb-broken", {
        "missing": "prkb_no_such_module:Collector",
        "norun": here("NoRun"),
        "clashing": here("Clashing"),
        "Bad Name": here("GitlabCollector"),
    })
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(SystemExit) as e:
        main(["collect", "git", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr()
    assert "--no-audit" in out.out
    warnings = out.err.splitlines()
    assert len(warnings) == 4, out.err
    assert any("'missing = prkb_no_such_module:Collector' (entry point of prkb-broken)" in w
               and "ModuleNotFoundError" in w and "'prkb collect missing' is not available" in w
               for w in warnings)
    assert any("'norun = " in w and "does not follow the Collector protocol (no run)" in w
               for w in warnings)
    assert any("'clashing = " in w and "--db" in w for w in warnings)
    assert any("'Bad Name = " in w and "lowercase" in w for w in warnings)
    # the other collectors and commands work, with the same warnings
    db = tmp_path / "kb.sqlite"
    assert main(["--db", str(db), "-q", "collect", "git", str(clone.path)]) == 0
    assert main(["--db", str(db), "list"]) == 0
    out = capsys.readouterr()
    assert "2 new and 0 updated records" in out.out  # collect git
    assert f"commit {clone.shas[1][:12]}" in out.out  # list
    assert out.err.count("warning: collector") == 8
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    listed = re.findall(r"^    ([a-z][a-z0-9_-]*) ", capsys.readouterr().out, re.M)
    assert listed == ["git", "github"]


def test_a_plugin_that_returns_no_report_is_one_error_line(
    tmp_path: Path, clone: GitRepoBuilder, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path / "sp", "prkb-silent",
                                            {"silent": here("Silent")})))
    db = tmp_path / "kb.sqlite"
    assert main(["--db", str(db), "-q", "collect", "silent", str(clone.path)]) == 2
    err = capsys.readouterr().err
    assert err.endswith("prkb: error: collector 'silent' ran, but returned NoneType, not a "
                        "report with summary() and to_json()\n")
    with Store(db) as store:  # what it stored is kept
        assert [store.raw_record(r)["number"] for r in store.prs_for_export()] == [12]


def test_two_plugins_of_one_name_are_both_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    site = tmp_path / "site-packages"
    install(site, "acme-gitlab", {"gitlab": here("GitlabCollector")})
    install(site, "zeta-gitlab", {"gitlab": here("OtherGitlab")})
    install(site, "prkb-git-again", {"git": here("GitlabCollector")})
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    out = capsys.readouterr()
    warnings = out.err.splitlines()
    assert len(warnings) == 2, out.err
    [gitlab] = [w for w in warnings if "named 'gitlab'" in w]
    assert f"'gitlab = {here('GitlabCollector')}' (entry point of acme-gitlab)" in gitlab
    assert f"'gitlab = {here('OtherGitlab')}' (entry point of zeta-gitlab)" in gitlab
    assert gitlab.index("acme-gitlab") < gitlab.index("zeta-gitlab")
    assert "'prkb collect gitlab' uses the first" in gitlab
    [git_twice] = [w for w in warnings if "named 'git'" in w]
    assert f"'git = {BUNDLED['git']}' (entry point of prkb)" in git_twice
    assert "(entry point of prkb-git-again)" in git_twice
    listed = dict(re.findall(r"^    ([a-z][a-z0-9_-]*) +(.*)$", out.out, re.M))
    assert listed["git"].startswith("mine a local git clone")  # the bundled one is kept
    assert listed["gitlab"] == GitlabCollector.help


def test_the_bundled_collectors_without_their_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """prkb's metadata without the entry points (a source tree, an install older than them):
    the bundled collectors are there all the same, and the plug-ins too."""
    site = install(tmp_path / "site-packages", "prkb", {})
    install(site, "prkb-gitlab", {"gitlab": here("GitlabCollector")})
    monkeypatch.syspath_prepend(str(site))
    from importlib.metadata import entry_points

    assert {ep.name for ep in entry_points(group=GROUP)} == {"gitlab"}  # prkb's own are hidden
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    out = capsys.readouterr()
    assert re.findall(r"^    ([a-z][a-z0-9_-]*) ", out.out, re.M) == ["git", "github", "gitlab"]
    assert out.err == ""


def test_a_new_process_finds_the_plugin(plugins: Path, tmp_path: Path) -> None:
    """What an installed plug-in gets: ``python -m prkb`` in a new process, the entry point
    read from the distribution's metadata, the collector imported from its module."""
    broken = install(tmp_path / "more", "prkb-broken", {"missing": "prkb_no_such_module:X"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(plugins), str(broken), str(Path(__file__).parent), str(ROOT)])}
    env.pop("PRKB_DB", None)
    r = subprocess.run([sys.executable, "-m", "prkb", "collect", "--help"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.findall(r"^    ([a-z][a-z0-9_-]*) ", r.stdout, re.M) == ["git", "github", "gitlab"]
    assert "'missing = prkb_no_such_module:X' (entry point of prkb-broken)" in r.stderr
    assert "Traceback" not in r.stderr
