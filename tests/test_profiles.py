"""A second profile tracks another symbol with no code change; the one line matcher."""

from __future__ import annotations

import re
from dataclasses import replace

from gitrepo import GitRepoBuilder, git

from prkb.collect.git import collect_git, pickaxe
from prkb.collect.github import _Matcher
from prkb.gitrepo import GitRepo
from prkb.profile import load_profile
from prkb.render.patches import key_hunks
from prkb.store import Store

PROFILE = """
[profile]
name = "toy-fp8"
repo = "example/toy"
rules = ""
branch = "main"

[symbol]
family = ["fp8_supported", "quant_support"]
methods = ["get_quant_support"]
bool_spellings = ["fp8_supported"]
enum = "QuantSupport"

[levels]
order = ["NONE", "WEIGHTS", "FULL"]
default = "NONE"
[levels.aliases]
PARTIAL = "WEIGHTS"

[paths]
tests = ["tests/"]
core = ["toy/core.py"]

[[platforms]]
code = "tpu"
en = "TPU"
zh = "TPU"
path_patterns = ["tpu_"]
title_tags = ["TPU"]
"""


def test_second_profile_collects_per_class_facts(tmp_path):
    prof_path = tmp_path / "toy-fp8.toml"
    prof_path.write_text(PROFILE, encoding="utf-8")
    profile = load_profile(str(prof_path))
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit(
        {"toy/tpu_kernels.py": "class TpuKernel:\n    fp8_supported = False\n"}, "[TPU] k (#1)"
    )
    r.commit(
        {"toy/tpu_kernels.py": "class TpuKernel:\n    quant_support = QuantSupport.PARTIAL\n"},
        "[TPU] switch to levels (#2)",
    )
    r.commit(
        {
            "toy/tpu_kernels.py": "class TpuKernel:\n    quant_support = QuantSupport.FULL\n",
            "tests/test_tpu.py": "def test_x():\n    pass\n",
        },
        "[TPU] full quantisation (#3)",
    )
    r.commit({"toy/other.py": "class Other:\n    _cudagraph_support = 3\n"}, "not ours (#4)")
    store = Store(tmp_path / "kb.sqlite")
    stats = collect_git(store, str(r.path), profile, quiet=True, warn=print)
    assert stats.hits == 3
    assert {x[0] for x in store.conn.execute("SELECT repo FROM prs")} == {"example/toy"}
    two = store.pr_facts(2)["symbol_changes"]
    assert [
        (c["attr"], c["before_attr"], c["before"], c["after"], c["direction"]) for c in two
    ] == [("quant_support", "fp8_supported", "False", "WEIGHTS", "changed")]
    three = store.pr_facts(3)
    assert [(c["before"], c["after"], c["direction"]) for c in three["symbol_changes"]] == [
        ("WEIGHTS", "FULL", "raised")
    ]
    assert three["tests_touched"] == ["tests/test_tpu.py"]
    assert three["platforms"] == ["tpu"]
    codes = [t["code"] for t in three["risk_tags"]]
    assert "level-raised" in codes and "missing-tests" not in codes


# --- the one line matcher and git's pickaxe ------------------------------------------------

# (line, whether a changed line like it matters): whole identifiers of the family and the
# method, value markers (a level on a continuation line), and what merely looks like them
MATCHER_LINES = [
    ("    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.NEVER", True),
    ("    cudagraph_support = AttentionCGSupport.ALWAYS", True),
    ("    attn_cudagraph_support = AttentionCGSupport.PURE_DECODE_ONLY", True),
    ("    full_cudagraph_supported: ClassVar[bool] = True", True),
    ("        AttentionCGSupport.UNIFORM_BATCH", True),
    ("        else AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE", True),
    ("    x = (AttentionCGSupport.ALWAYS)", True),
    ("    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):", True),
    ("        return cls._cudagraph_support", True),
    ("_cudagraph_support = None", True),
    ("\tcudagraph_support=AttentionCGSupport.NEVER", True),
    ("    # the runner reads _cudagraph_support here", True),
    ("    # see get_cudagraph_support() for the rest", True),
    ('    name = "attn_cudagraph_support"', True),
    ("    attn_cudagraph_support_extra = 1", False),
    ("    my_cudagraph_support = 2", False),
    ("    cudagraph_supportive = 3", False),
    ("    self._cudagraph_support_cache = None", False),
    ("    def get_cudagraph_support_v2(cls):", False),
    ("    full_cudagraph_supported_flag = False", False),
    ("    level = MyAttentionCGSupport.NEVER", False),
    ("    level = AttentionCGSupport.UNIFORM_BATCH2", False),
    ("    level = AttentionCGSupport.never_mind", False),
    ("    from vllm.v1.attention.backend import AttentionCGSupport", False),
    ("    # nothing about graphs here", False),
]


def test_matches_line_is_the_pickaxe_regex() -> None:
    profile = load_profile()
    ere = re.compile(profile.git_pickaxe_regex())  # POSIX ERE, also valid for Python's re
    matcher = _Matcher(profile)
    wrong = []
    for line, expected in MATCHER_LINES:
        # the GitHub collector and the report's key code use the same matcher on a patch
        patch = f"@@ -1,2 +1,3 @@ class B(Base):\n     x = 0\n+{line}\n     y = 1\n"
        got = {
            "matches_line": profile.matches_line(line),
            "ERE": ere.search(line) is not None,
            "github": matcher.patch_hits(patch),
            "key_hunks": bool(key_hunks(patch, profile)[0]),
        }
        wrong.extend((line, who) for who, hit in got.items() if hit is not expected)
    assert wrong == []


def test_git_pickaxe_agrees_with_the_line_matcher(tmp_path) -> None:
    """One commit per line on a real repository: ``git log -G`` (raw, and as the git
    collector runs it) hits exactly the commits whose line the GitHub collector keeps."""
    profile = load_profile()
    r = GitRepoBuilder.init(tmp_path / "src")
    r.commit({"pkg/base.py": "import os\n\nvalue = 1\n"}, "base")
    by_sha: dict[str, str] = {}
    for i, (line, _expected) in enumerate(MATCHER_LINES):
        sha = r.commit({f"pkg/m{i}.py": f"import os\n{line}\nvalue = {i}\n"}, f"line {i}")
        by_sha[sha] = line
    # a removed line counts as well as an added one
    gone = r.commit({"pkg/m4.py": "import os\nvalue = 4\n"}, "drop the continuation line")
    by_sha[gone] = MATCHER_LINES[4][0]

    raw = git(r.path, "log", "--format=%H", f"-G{profile.git_pickaxe_regex()}", "main",
              "--", "*.py").split()
    mined = {sha for sha, _files in pickaxe(GitRepo(r.path), ["main"], profile, print)}
    matcher = _Matcher(profile)
    hunks: set[str] = set()
    for sha in by_sha:
        diff = git(r.path, "show", "--format=", sha)
        patch = diff[diff.index("@@"):]  # GitHub's patch: the hunks without file headers
        if matcher.patch_hits(patch):
            hunks.add(sha)
    expected = {sha for sha, line in by_sha.items() if dict(MATCHER_LINES)[line]}
    assert len(expected) == 1 + sum(e for _l, e in MATCHER_LINES)
    assert set(raw) == mined == hunks == expected
    assert {sha for sha, line in by_sha.items() if profile.matches_line(line)} == expected


def test_declaring_the_default_level_is_not_a_raise() -> None:
    """A first declaration raises the level only above the profile's default, whatever the
    default's place in the order (here the middle one)."""
    from prkb.analyze.risk import analyse
    from prkb.models import SymbolChange

    prof = load_profile(None)
    middle = prof.levels[1]
    prof = replace(prof, default_level=middle)
    rec = {"number": 1, "title": "declare", "files": [], "state": "merged"}

    def tags(after: str) -> set[str]:
        change = SymbolChange("f.py", "XBuilder", prof.display, None, after, "added")
        return {t.code for t in analyse(rec, [change], [], prof).risk_tags}

    assert "level-raised" not in tags(middle)
    assert "level-raised" not in tags(prof.levels[0])
    assert "level-raised" in tags(prof.levels[2])


def test_what_is_made_per_profile_is_made_once_per_profile_object() -> None:
    """per_profile: one computation per profile object and maker; a copy of the profile (a
    new object, as dataclasses.replace makes) gets its own, never the other's."""
    from prkb.profile import Profile, per_profile

    made: list[str] = []

    def names(p: Profile) -> str:
        made.append(p.name)
        return f"names of {p.name}"

    def other(p: Profile) -> int:
        made.append("other")
        return len(made)

    profile = load_profile(None)
    assert per_profile(profile, names) == per_profile(profile, names) == f"names of {profile.name}"
    assert made == [profile.name]
    per_profile(profile, other)
    assert made == [profile.name, "other"]
    copy = replace(profile, name="copy")
    assert per_profile(copy, names) == "names of copy"
    assert made == [profile.name, "other", "copy"]
