"""examples/github-workflow.yml: valid YAML, the steps CI needs, and prkb commands whose options
prkb's own parser accepts (with the values the workflow means)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from prkb.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "examples" / "github-workflow.yml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps() -> list[dict]:
    jobs = _workflow()["jobs"]
    assert len(jobs) == 1
    return next(iter(jobs.values()))["steps"]


def _prkb_commands() -> list[tuple[list[str], str | None]]:
    """Each ``prkb ...`` command of a run step, as argv with ``${{ }}`` expressions replaced by
    placeholders, and the file its stdout is redirected to."""
    out = []
    for step in _steps():
        run = step.get("run", "")
        for line in run.splitlines() or [run]:
            line = line.strip()
            if not line.startswith("prkb "):
                continue
            line = re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: "EXPR:" + m.group(1), line)
            argv = shlex.split(line)
            target = None
            if ">" in argv:
                i = argv.index(">")
                target = argv[i + 1]
                argv = argv[:i]
            out.append((argv[1:], target))
    return out


def test_workflow_triggers_and_permissions():
    wf = _workflow()
    # PyYAML reads the bare key `on` as True (YAML 1.1)
    on = wf.get("on", wf.get(True))
    assert "pull_request" in on
    perms = wf["permissions"]
    assert perms["security-events"] == "write" and perms["contents"] == "read"


def test_workflow_steps():
    steps = _steps()
    uses = [s.get("uses", "") for s in steps]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # the whole history: base must be there
    assert any(u.startswith("actions/setup-python@") for u in uses)
    assert any(re.fullmatch(r"pip install prkb\b.*", s.get("run", "").strip()) for s in steps)
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@"))
    # the SARIF it uploads is the one a prkb step writes, and that step comes first
    sarif_file = upload["with"]["sarif_file"]
    writers = [i for i, s in enumerate(steps) if f"> {sarif_file}" in s.get("run", "")]
    assert writers and writers[0] < steps.index(upload)


def test_workflow_commands_match_the_cli():
    cmds = _prkb_commands()
    assert len(cmds) == 2
    parser = build_parser()
    formats = {}
    for argv, target in cmds:
        args = parser.parse_args(argv)  # argparse exits on an unknown option or a bad choice
        assert args.command == "check" and args.path == "."
        assert args.base == "EXPR:github.event.pull_request.base.sha"
        assert args.head == "EXPR:github.sha"
        formats[args.format] = (args.fail_on, target)
    assert formats["sarif"] == ("none", "prkb.sarif")
    assert formats["github"] == ("new", None)


def test_readme_shows_the_same_workflow():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in readme
    section = readme.split("## Use it in CI", 1)[1].split("\n## ", 1)[0]
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in section
