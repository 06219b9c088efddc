"""graph, timeline, lineage: the typed PR graph and the symbol timeline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..progress import json_term, safe_term
from . import open_store, profile_of

_TYPES_HELP = (
    "comma-separated relation types to keep: fixes-regression-from, attempts-fix-of, "
    "depends-on, follow-up-of, supersedes, alternative-to, reverts, modifies-declaration-of, "
    "mentions (default: all)"
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "graph",
        parents=[common],
        help="the typed PR graph (all of it, or around one PR) as JSON, DOT, GraphML or Mermaid",
        description=(
            "Prints the relations between PRs that the knowledge base derived from PR texts "
            "(phrases such as 'added in #N', 'depends on #N', 'in favor of #N'), from the symbol "
            "timeline (the previous change on the same class and attribute), from blamed lines "
            "and from alternative fixes. With N: only nodes within --depth hops of PR N. Each "
            "edge carries its type, evidence and confidence. Use --rebuild to recompute the "
            "relations first (import and collect do this already)."
        ),
    )
    p.add_argument("number", nargs="?", help="PR number (or issue:N, ext:owner/repo#N, a sha)")
    p.add_argument("--depth", type=int, default=2, help="hops around N (default: 2)")
    p.add_argument("--types", default=None, help=_TYPES_HELP)
    p.add_argument(
        "--format", choices=("json", "dot", "graphml", "mermaid"), default="json",
        help="output format (default: json)",
    )
    p.add_argument("-o", "--out", default=None, help="write to this file instead of stdout")
    p.add_argument(
        "--rebuild", action="store_true", help="recompute all relations before printing"
    )
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser(
        "timeline",
        parents=[common],
        help="a class's declared (and effective) value over time, PR by PR",
        description=(
            "Lists every stored change to CLASS's declaration, oldest first, following the "
            "attribute across its spellings (the profile's symbol family), with the PR of each "
            "change and the declared value after it. Where the git collector's audit stored "
            "readings, also the effective value (with inheritance) at each commit where it "
            "changed."
        ),
    )
    p.add_argument("class_name", metavar="CLASS", help="class name, e.g. TritonMLAMetadataBuilder")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_timeline)

    p = sub.add_parser(
        "lineage",
        parents=[common],
        help="the chain of PRs that led to PR N's change and what followed it",
        description=(
            "Follows modifies-declaration-of, fixes-regression-from, depends-on, follow-up-of "
            "and reverts edges: out of N to the PRs that led to it (ancestors), and into N from "
            "the PRs that came after it (descendants)."
        ),
    )
    p.add_argument("number", help="PR number (or a commit sha)")
    p.add_argument(
        "--types", default=None, help="relation types to follow (default: the five above)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_lineage)


def cmd_graph(args: argparse.Namespace) -> int:
    from ..graph import build_relations, export, graph_view, parse_types

    types = parse_types(args.types)
    with open_store(args) as store:
        if args.rebuild:
            build_relations(store, profile_of(args))
        h = graph_view(store, args.number, depth=args.depth, types=types)
    text = export(h, args.format)
    text = json_term(text) if args.format == "json" else text
    if args.out is None:
        print(text, end="")
    else:
        path = Path(args.out)
        write_atomic(path, text)
        print(f"wrote {path}", flush=True)
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    from ..graph import timeline_of

    profile = profile_of(args)
    with open_store(args) as store:
        tl = timeline_of(store, profile, args.class_name)
    if args.json:
        print(json_term(json.dumps(tl, ensure_ascii=False, indent=1)))
        return 0
    by_file = tl["declared_now_by_file"]
    if len(by_file) > 1:  # a builder is its file and class: one level per file
        now = ", ".join(f"{profile.value_text(v) if v else '-'} in {f}"
                        for f, v in sorted(by_file.items()))
    else:  # a bool is shown as its spelling and value (Profile.value_text): it is no level
        now = profile.value_text(tl["declared_now"]) if tl["declared_now"] else "-"
    print(safe_term(f"{tl['class']}: declared now {now}"
                    f" (spellings: {', '.join(tl['spellings']) or '-'})"))
    for c in tl["changes"]:
        who = f"#{c['pr']}" if c["pr"] is not None else str(c["merge_commit_sha"] or "")[:12]
        attr = c["attr"] if not c["before_attr"] else f"{c['before_attr']}->{c['attr']}"
        state = "" if c["merged"] else f" [{c['state']}, not merged]"
        eff = (f" effective {profile.value_text(c['effective_after'])}"
               if c["effective_after"] else "")
        print(safe_term(
            f"  {(c['date'] or '????-??-??')[:10]} {who:>8} {attr}: {c['before'] or '-'} -> "
            f"{c['after'] or '-'} ({c['direction']}){eff}{state}  {c['title'][:60]}"
        ))
    if tl["effective"]:
        print(f"  effective {'level' if profile.has_levels else 'value'} at collected commits:")
        for e in tl["effective"]:
            who = f"#{e['pr']}" if isinstance(e["pr"], int) else str(e["commit"])[:12]
            dyn = (
                f" (dynamic: {e['level_text']})" if e["dynamic"] and e.get("level_text")
                else " (dynamic)" if e["dynamic"] else ""
            )
            declared, eff = (profile.value_text(v) if v else "-"
                             for v in (e["declared"], e["effective"]))
            print(safe_term(f"    {str(e['date'])[:10]} {who:>8} declared {declared}"
                            f", effective {eff}{dyn}  {e['file']}"))
    return 0


def cmd_lineage(args: argparse.Namespace) -> int:
    from ..graph import LINEAGE_TYPES, parse_types, pr_lineage

    types = parse_types(args.types) or LINEAGE_TYPES
    with open_store(args) as store:
        res = pr_lineage(store, args.number, types)
    if args.json:
        print(json_term(json.dumps(res, ensure_ascii=False, indent=1)))
        return 0
    me = res["node"][0]
    print(safe_term(f"{_name(me)} {me['title'] or ''}".rstrip()))
    for label, items, arrow in (("led to it", res["ancestors"], "->"),
                                ("followed it", res["descendants"], "<-")):
        print(f"  {label}:" if items else f"  {label}: none stored")
        for it in items:
            pad = "  " * it["depth"]
            via = f"#{it['via']}" if isinstance(it["via"], int) else it["via"]
            print(safe_term(
                f"  {pad}{via} {arrow} {it['type']} {arrow} {_name(it)} {it['title'] or ''}"
                .rstrip()
            ))
            if it["evidence"]:
                print(safe_term(f"  {pad}    {it['evidence'][:160]}"))
    return 0


def _name(node: dict[str, Any]) -> str:
    if node["kind"] == "pr" and node["number"] is not None:
        return f"#{node['number']}"
    return str(node["id"])
