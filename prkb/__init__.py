"""prkb: a PR-analysis knowledge base and report generator."""

__version__ = "0.1.0"
