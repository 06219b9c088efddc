"""Python sources of one repository read once: text, syntax tree and class facts by blob id.

The git collector reads the same blobs from several places (the commit being mined, the
declaration scan, blame's look at the commit it lands on); :class:`Sources` parses each blob
once and keeps the most recent ones. :func:`same_ast` compares two trees node by node and stops
at the first difference, which is what a "was this only reformatted?" question needs.
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict
from dataclasses import dataclass
from itertools import zip_longest

from ..analyze.declscan import declaration_key
from ..analyze.symbols import ClassFacts, SourceError, parse_classes, parse_source
from ..gitrepo import GitRepo
from ..profile import Profile

NULL_BLOB = "0" * 40


@dataclass
class Source:
    """One blob as Python: ``text`` is None when the object is missing; ``error`` says why the
    text is not valid Python; ``classes`` are its class facts (empty when the text names no
    watched identifier)."""

    text: str | None
    tree: ast.Module | None = None
    classes: dict[str, ClassFacts] | None = None
    error: str | None = None


class Sources:
    """Blob id -> :class:`Source`, parsed on first use; the newest ``size`` are kept. Cheaper
    questions (:meth:`key`, :meth:`declares`) read the text without parsing it."""

    def __init__(self, git: GitRepo, profile: Profile, size: int = 512) -> None:
        self.git = git
        self.profile = profile
        self.size = size
        self._items: OrderedDict[str, Source] = OrderedDict()
        self._keys: OrderedDict[str, tuple[str | None, bool]] = OrderedDict()
        # the same test `git grep` makes to choose the files the scan starts from
        self._declares = re.compile(profile.git_declaring_regex(), re.MULTILINE)

    def _text_facts(self, blob: str) -> tuple[str | None, bool]:
        """(declaration key, declares) of a blob; (None, False) when it is missing."""
        got = self._keys.get(blob)
        if got is None:
            src = self._items.get(blob)
            text = src.text if src is not None else self.git.read_text(blob)
            got = (
                (None, False) if text is None
                else (declaration_key(text, self.profile), bool(self._declares.search(text)))
            )
            self._keys[blob] = got
            if len(self._keys) > 4 * self.size:
                self._keys.popitem(last=False)
        return got

    def key(self, blob: str) -> str | None:
        """The blob's :func:`declaration_key` (None: missing from the repository)."""
        return self._text_facts(blob)[0]

    def declares(self, blob: str) -> bool:
        """Whether a line of the blob looks like a family declaration or the definition of a
        watched method (to choose the files the declaration scan watches; nothing is decided
        from it). False for an empty or missing blob."""
        if not blob or set(blob) == {"0"}:
            return False
        return self._text_facts(blob)[1]

    def get(self, blob: str, path: str) -> Source:
        if not blob or set(blob) == {"0"}:
            return Source("", None, {})
        got = self._items.get(blob)
        if got is not None:
            self._items.move_to_end(blob)
            return got
        got = self._read(blob, path)
        self._items[blob] = got
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return got

    def _read(self, blob: str, path: str) -> Source:
        text = self.git.read_text(blob)
        if text is None:
            return Source(None)
        try:
            tree = parse_source(text, path)
            classes = (
                parse_classes(text, self.profile, filename=path, tree=tree)
                if self.profile.watch_regex.search(text)
                else {}
            )
        except SourceError as e:
            return Source(text, error=str(e))
        return Source(text, tree, classes)


def same_ast(a: ast.AST | None, b: ast.AST | None) -> bool:
    """Whether two syntax trees are equal (positions aside), stopping at the first difference."""
    if a is None or b is None:
        return False
    for x, y in zip_longest(ast.walk(a), ast.walk(b)):
        if x is None or y is None or type(x) is not type(y):
            return False
        for name in x._fields:
            vx, vy = getattr(x, name, None), getattr(y, name, None)
            if isinstance(vx, list) and isinstance(vy, list):
                if len(vx) != len(vy):
                    return False
                if any(
                    not isinstance(i, ast.AST) and i != j for i, j in zip(vx, vy, strict=True)
                ):
                    return False
            elif isinstance(vx, ast.AST) or isinstance(vy, ast.AST):
                if type(vx) is not type(vy):
                    return False
            elif vx != vy or type(vx) is not type(vy):
                return False
    return True
