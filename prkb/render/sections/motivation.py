"""The motivation: the sections of the PR's description (or commit message)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..prfacts import PrFacts


@dataclass(frozen=True)
class Motivation:
    has_body: bool
    sections: list[dict[str, Any]]  # body.Section as dicts: kind, heading, text, commands


def build(f: PrFacts) -> Motivation:
    return Motivation(has_body=bool(f.body.strip()),
                      sections=[vars(s) for s in f.body_sections])
