"""Collectors: the bundled snapshot, a local git clone, the GitHub API."""
