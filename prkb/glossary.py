"""The one glossary of labels (data/glossary.toml) shared by every output."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from typing import Any

from .models import RiskTag
from .paths import data_dir


@lru_cache(maxsize=1)
def glossary() -> dict[str, Any]:
    return tomllib.loads((data_dir() / "glossary.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=256)
def risk_tag(code: str) -> RiskTag:
    """The risk tag ``code`` with its labels (a frozen value: made once per code; a digest week
    asks for a tag of each of its PRs)."""
    entry = glossary()["risk_tags"].get(code)
    if entry is None:
        return RiskTag(code, code, code)
    return RiskTag(code, entry["en"], entry["zh"])


def label(section: str, code: str, lang: str) -> str:
    entry = glossary().get(section, {}).get(code)
    if not entry:
        return code
    return str(entry.get(lang) or entry.get("en") or code)
