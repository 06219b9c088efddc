"""site build, site serve."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import group, open_store, profile_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    site = group(sub, "site", "build the static documentation site, or preview it locally")
    p = site.add_parser(
        "build",
        parents=[common],
        help="write the static site (timeline, PR pages, matrix, builders, graph, audit, search)",
        description=(
            "Writes a static site from the knowledge base into a folder (default: site/): a "
            "timeline of PRs with filters, one page per PR with its full report, the support "
            "matrix of every metadata builder over time, one page per builder, the PR graph, "
            "the audit findings, a Pagefind search (Chinese words included), an Atom feed, a "
            "sitemap and a 404 page, in Chinese and English. The build is written to a "
            "temporary folder and swapped in at the end; pages whose inputs did not change are "
            "kept from the previous build. When only what is shown of a few PRs changed, "
            "their pages are moved into the site in place instead (a build cut short there "
            "is finished by the next one). Needs no network; the site works offline."
        ),
    )
    p.add_argument("-o", "--out", default="site", help="output folder (default: site)")
    p.add_argument(
        "--base-url", default=None, metavar="URL",
        help="where the site will be hosted, for absolute links in the feed and sitemap",
    )
    p.add_argument(
        "--lang", default="zh,en", metavar="LANGS",
        help="languages to build, comma separated (default: zh,en)",
    )
    p.add_argument("--no-search", action="store_true", help="skip the Pagefind search index")
    p.add_argument("--json", action="store_true", help="print the build's figures as JSON")
    p.set_defaults(func=cmd_site_build)

    p = site.add_parser(
        "serve",
        # no --db, --profile or -q: serving a folder reads no knowledge base nor profile
        help="preview a built site on http://127.0.0.1:PORT/ (loopback only)",
        description=(
            "Serves a folder written by 'prkb site build' on 127.0.0.1 until interrupted. "
            "Search needs HTTP (browsers do not load Pagefind from file://), so preview here."
        ),
    )
    # the same flag as `site build` (-o/--out); -d/--dir, the old spelling, still works
    p.add_argument(
        "-o", "--out", "-d", "--dir", dest="dir", default="site",
        help="site folder, as given to `site build -o` (default: site)",
    )
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks one)")
    p.add_argument("--verbose", action="store_true", help="log every request")
    p.set_defaults(func=cmd_site_serve)


def cmd_site_build(args: argparse.Namespace) -> int:
    from ..progress import bar
    from ..site.build import build_site, parse_langs

    langs = parse_langs(args.lang)
    profile = profile_of(args)
    with open_store(args) as store, bar("site", quiet=args.quiet) as b:
        stats = build_site(
            store, args.out, profile, langs=langs, base_url=args.base_url,
            search=not args.no_search, on_page=b.advance,
        )
    if stats.search_missing:
        from ..site.search import MISSING

        print(f"prkb: {MISSING}", file=sys.stderr)
    if not args.base_url:
        print("prkb: warning: no --base-url: the feeds link pages relative to themselves and "
              "the sitemap lists relative paths (search engines want absolute URLs); give "
              "--base-url where the site will be hosted", file=sys.stderr)
    if args.json:
        print(json.dumps(stats.to_json(), ensure_ascii=False))
    else:
        print(stats.summary())
    return 0


def cmd_site_serve(args: argparse.Namespace) -> int:
    from ..site.serve import make_server

    server = make_server(args.dir, args.port, verbose=args.verbose)
    host, port = server.server_address[:2]
    print(f"serving {args.dir} on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
