"""The key files: the files a report lists, and how many it leaves out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..prfacts import PrFacts


@dataclass(frozen=True)
class KeyFiles:
    files: list[dict[str, Any]]  # PrFacts.files items: path, module, category, type, role…
    more: dict[str, int] | None  # count and changed lines of the files left out


def build(f: PrFacts) -> KeyFiles:
    return KeyFiles(files=f.shown, more=f.files_more)
