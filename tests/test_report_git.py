"""关键源码片段 / Key code from git objects: when the knowledge base knows the clone a git
record came from, the changed class is read from the file at the merge commit (bounded to the
declaration and the threshold mechanism); a blob the clone lacks is said, and the patch is
read instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from fivecases import UTILS, five_cases_kb

from prkb.render.report import render_report
from prkb.store import Store


def _code(report: str) -> str:
    return report.split("## Key code", 1)[1].split("## Review highlights", 1)[0]


def test_the_class_is_read_from_the_commit_blob(tmp_path: Path) -> None:
    store, _repo, shas = five_cases_kb(tmp_path)
    assert store.get_state("git", "example/attn", "clone") == str((tmp_path / "src").resolve())
    code = _code(render_report(store, 403, lang="en", fmt="md"))
    at = f"in the file at commit `{shas[403][:12]}`"
    assert code.count(at) == 3  # the three changed classes, each from its file
    # the base class's threshold method is far from the changed line: no patch hunk shows it,
    # the blob does (the class's first line, the declaration, the mechanism)
    assert "22           self.reorder_batch_threshold = threshold" in code
    assert "15 +     _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.NEVER" \
        in code
    assert "lacks this file" not in code
    raise_ = render_report(store, 404, lang="zh", fmt="md").split("## 关键源码片段", 1)[1]
    assert f"取自提交 `{shas[404][:12]}` 中的文件" in raise_
    assert "11 +         self._init_reorder_batch_threshold(1, supports_spec_as_decode=True)" \
        in raise_
    store.close()


def test_a_missing_blob_is_said_and_the_patch_read(tmp_path: Path) -> None:
    store, repo, shas = five_cases_kb(tmp_path)
    repo.delete_object(repo.blob_sha(shas[403], UTILS))  # the snapshot lacks this object
    code = _code(render_report(store, 403, lang="en", fmt="md"))
    utils = code.split(f"### `{UTILS}`", 1)[1]
    assert utils.startswith(
        f"\n\nThe clone this knowledge base was collected from lacks this file at commit "
        f"`{shas[403][:12]}` (a snapshot can miss objects), so the code below comes from the "
        "stored patch.\n")
    assert "from the lines the stored patch shows" in utils
    assert "self.reorder_batch_threshold = threshold" not in utils  # not in the patch
    # the other files of the commit are still read from their blobs
    assert code.count(f"in the file at commit `{shas[403][:12]}`") == 2
    zh = render_report(store, 403, lang="zh", fmt="md")
    assert f"采集知识库时所用的克隆缺少提交 `{shas[403][:12]}` 中的这个文件" in zh
    store.close()


@pytest.mark.parametrize("gone", ["moved", "not-git"])
def test_without_the_clone_the_patch_is_read(tmp_path: Path, gone: str) -> None:
    store, repo, _shas = five_cases_kb(tmp_path)
    if gone == "moved":
        repo.path.rename(tmp_path / "elsewhere")
    else:
        store.close()
        store = Store(tmp_path / "kb.sqlite")
        with store.transaction():
            store.set_state("git", "example/attn", "clone", str(tmp_path))
    code = _code(render_report(store, 404, lang="en", fmt="md"))
    assert "from the lines the stored patch shows" in code
    assert "in the file at commit" not in code and "lacks this file" not in code
    store.close()
