"""``prkb check``: the consistency audit on a pull request (base against head), with SARIF and
GitHub annotations (see :mod:`prkb.check.compare` and :mod:`prkb.check.formats`)."""

from .compare import FAIL_ON, CheckFinding, CheckReport, DriftItem, LevelChange, run_check
from .formats import FORMATS, render, to_sarif

__all__ = [
    "FAIL_ON",
    "FORMATS",
    "CheckFinding",
    "CheckReport",
    "DriftItem",
    "LevelChange",
    "render",
    "run_check",
    "to_sarif",
]
