"""Relation evidence items of every kind, as the graph builder makes them (prkb/evidence.py),
for the tests that word them."""

from __future__ import annotations

from typing import Any

# one item of every kind, as the graph builder makes them
ITEMS: list[dict[str, Any]] = [
    {"kind": "quote", "pr": "#900", "where": "title", "text": "Revert \"x\" (#901)"},
    {"kind": "quote", "pr": "#900", "where": "body", "text": "The crash came with #901."},
    {"kind": "quote", "pr": "#900", "where": "comment", "text": "needs #901 first"},
    {"kind": "quote", "pr": "#900", "where": "review", "text": "same as #901"},
    {"kind": "quote", "pr": "#900", "where": "review-comment", "path": "vllm/a.py",
     "text": "see #901"},
    {"kind": "quote", "pr": "#900", "where": "review-comment", "text": "see #901 too"},
    {"kind": "record", "text": "stated by the maintainer"},
    {"kind": "legacy", "text": "blame on the parent: 1 changed line(s)"},
    {"kind": "older", "older": "#900", "newer": "#901"},
    {"kind": "last-set", "class": "FooBuilder", "attr": "_cudagraph_support",
     "before_attr": "cudagraph_support", "before": "NEVER", "after": "UNIFORM_BATCH",
     "direction": "raised", "by": "#901", "by_after": "NEVER"},
    {"kind": "undoes-level", "pr": "#900", "class": "FooBuilder", "before": "UNIFORM_BATCH",
     "after": "NEVER", "back": True, "by": "#901", "by_direction": "raised",
     "by_before": "NEVER", "by_after": "UNIFORM_BATCH", "days": 12,
     "title": "[Bugfix] Foo: lower the level"},
    {"kind": "undoes-level", "pr": "#900", "class": "FooBuilder", "before": "UNIFORM_BATCH",
     "after": "UNIFORM_SINGLE_TOKEN_DECODE", "back": False, "by": "#901",
     "by_direction": "added", "by_after": "UNIFORM_BATCH"},
    {"kind": "blame", "lines": 2, "files": ["vllm/a.py", "vllm/b.py"],
     "commits": ["0123456789ab"], "by": "#901"},
    {"kind": "revert-title", "pr": "#900"},
    {"kind": "blamed-declaration", "classes": ["FooBuilder"], "pr": "#900", "by": "#901"},
    {"kind": "culprit-named", "pr": "#900", "culprits": ["#901", "#902"]},
    {"kind": "closed-unmerged", "pr": "#900", "fix": "#903", "of": "#901"},
    {"kind": "closed-unmerged", "pr": "#900"},
    {"kind": "superseded", "old": "#900", "new": "#901", "state": "merged"},
    {"kind": "superseded", "old": "#900", "new": "#901", "state": "open"},
    {"kind": "same-change", "class": "FooBuilder", "attr": "_cudagraph_support", "days": 3,
     "similarity": 0.67, "test": "tests/test_foo.py"},
]
