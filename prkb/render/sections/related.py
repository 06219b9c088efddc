"""The related PRs: the graph's relations of the PR, else the PRs its texts mention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..prfacts import PrFacts


@dataclass(frozen=True)
class Related:
    relations: list[dict[str, Any]]
    mentions: list[dict[str, Any]]


def build(f: PrFacts) -> Related:
    return Related(relations=f.relations, mentions=f.mentions)
