"""Names vulture cannot see used: hooks called by frameworks and names templates call.

Read by ``tests/test_structure.py`` (``test_no_dead_code``); each line says who calls it.
"""
# ruff: noqa: B018
from prkb.collect import git_plugin, github_plugin
from prkb.publish import digest
from prkb.render import formats
from prkb.site import serve

digest.DigestText.open_section  # templates/digest/section.j2: F.open_section(...)
digest.DigestHtml.open_section  # the same, in HTML
formats.FormatConstants.preprocess  # jinja2.ext.Extension hook
serve.SiteHandler.list_directory  # http.server.SimpleHTTPRequestHandler hook
git_plugin.GitPlugin  # pyproject.toml entry point prkb.collectors: git
github_plugin.GithubPlugin  # pyproject.toml entry point prkb.collectors: github

import prkb  # noqa: E402

prkb.__getattr__  # PEP 562: module attribute look-up (the lazy public API)
prkb.__dir__  # PEP 562: dir(prkb)
