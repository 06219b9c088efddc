"""The implementation breakdown: the code's effective-state change, the mechanism's own
changes, the related calls, the other files and the tests (the declaration changes are the
report's shared ``changes``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..body import test_commands
from ..prfacts import KEY_FILES, PrFacts


@dataclass(frozen=True)
class Implementation:
    state: dict[str, Any]  # state_view.state_facts: known, reason, changes, framework…
    calls: list[dict[str, Any]]  # the related calls in the files listed
    calls_more: int
    files: list[dict[str, Any]]  # the files listed (as the key files)
    files_more: dict[str, int] | None
    tests: dict[str, Any]  # touched (test files, the key files first), touched_more, commands


def build(f: PrFacts) -> Implementation:
    shown = f.shown_paths
    calls = [c for c in f.calls if c["file"] in shown][:KEY_FILES]
    # test commands: those of the description's sections, then those of every text
    commands: list[str] = []
    for s in f.body_sections:
        commands.extend(x for x in s.commands if x not in commands)
    texts = [f.body] + [str(c.get("body") or "") for c in f.record.get("comments") or []]
    commands.extend(x for x in test_commands(texts) if x not in commands)
    # the test files of the key files first (those that name the symbol), then the others
    touched = sorted(f.facts["tests_touched"], key=lambda p: (p not in shown, p))
    return Implementation(
        state=f.state,
        calls=calls, calls_more=len(f.calls) - len(calls),
        files=f.shown, files_more=f.files_more,
        tests={"touched": touched[:KEY_FILES], "touched_more": len(touched[KEY_FILES:]),
               "commands": commands},
    )
