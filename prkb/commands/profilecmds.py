"""profile check, profile keys."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..progress import safe_term
from . import group


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    profile = group(sub, "profile",
                    "check a profile file, or list the keys a profile may have (the tracked "
                    "symbol, as data)")
    p = profile.add_parser(
        "check",
        parents=[common],
        help="validate a profile file and show what it will track",
        description=(
            "Validates FILE against the profile schema and the rules a schema cannot say, and "
            "lists every problem at once, each with the line of the file it is on (exit 1 when "
            "there is any). A valid profile is summarised: the symbol and its spellings, the "
            "levels, the audit's scan paths, markers and reading sites, the framework files, "
            "and the pickaxe regex. With --clone, also: the files under the scan paths that "
            "declare a spelling but hold none of the file_markers (the audit never reads their "
            "classes), and how many commits the pickaxe finds on the branch."
        ),
    )
    p.add_argument("file", help="the profile's .toml file (or a bundled profile's name)")
    p.add_argument("--clone", metavar="PATH", help="a git clone to try the profile on")
    p.add_argument("--branch", default=None,
                   help="the branch or revision of --clone (default: the profile's branch)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_profile_check)
    k = profile.add_parser(
        "keys",
        parents=[common],
        help="list every key a profile may have, with its type, default and meaning",
        description=(
            "Lists every key a profile may write, read from the profile schema "
            "(data/profiles/profile.schema.json, what validation checks), so it never "
            "disagrees with it: the key's dotted path ('[]' is an entry of an array of tables, "
            "'<name>' a name the profile chooses, as in levels.aliases.<name>), its type, "
            "then 'required' (wherever its table is written), 'default' and the value prkb "
            "takes when the key is left out, or 'no default' (the description says what its "
            "absence means), and the description: what it means, what prkb does with it, an "
            "example. --json prints a list of objects {key, type, required, default (only when "
            "there is one), description}."
        ),
    )
    k.add_argument("--json", action="store_true", help="print the keys as a JSON list")
    k.set_defaults(func=cmd_profile_keys)


def cmd_profile_check(args: argparse.Namespace) -> int:
    from ..profile import profile_path
    from ..profile_check import check_profile, clone_facts, summary

    res = check_profile(profile_path(args.file))
    out: dict[str, Any] = {"file": res.path, "ok": res.ok,
                           "problems": [x.to_json() for x in res.problems]}
    if res.profile is not None:
        out["tracks"] = summary(res.profile)
        if args.clone:
            out["clone"] = clone_facts(res.profile, args.clone, args.branch)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0 if res.ok else 1
    for x in res.problems:
        at = f":{x.line}" if x.line else ""
        print(safe_term(f"{res.path}{at}: {x.key}: {x.message}"))
    if not res.ok:
        n = len(res.problems)
        print(f"{n} problem{'s' if n != 1 else ''}")
        return 1
    t = out["tracks"]
    print(safe_term(f"{res.path}: valid profile {t['name']!r} of {t['repo']} ({t['branch']})"))
    lines = [
        ("symbol", f"{t['symbol']} (spellings, oldest first: {', '.join(t['spellings'])})"),
        ("kind", {"enum": "enum (ordered levels)", "int": "int (raised, lowered as numbers)",
                  "bool": "bool (enabled, disabled)"}.get(t["kind"], f"{t['kind']} (changed)")),
        ("set in", ", ".join(["class body" if w == "class" else "__init__"
                              for w in t["set_in"]]
                             + [f"{s['call']}(...) argument {s['arg']}" for s in t["setters"]])),
        ("dynamic when overridden", ", ".join(t["methods"]) or "-"),
        ("levels", (f"{' < '.join(t['levels'])}; default {t['default']}"
                    if t["levels"] else "- (no levels: the value is kept as written)")
         + (f"; old names {', '.join(f'{k}={v}' for k, v in t['aliases'].items())}"
            if t["aliases"] else "")),
        ("enum", t["enum"] or "-"),
        ("audit rule", t["rule"] or "none (no audit findings)"),
        ("scan paths", ", ".join(t["scan_paths"]) or "-"),
        ("file markers", ", ".join(t["file_markers"]) or "- (every file under the scan paths)"),
        ("builder bases", ", ".join(t["builder_bases"])
         or "- (every class that sets the value, or inherits it, is read)"),
        ("reading sites", ", ".join(t["reading_sites"])
         or "- (the root base's declaration tells which spelling is read)"),
        ("framework files", ", ".join(t["framework_files"]) or "-"),
        ("pickaxe", f"git log -G'{t['pickaxe_regex']}'"),
    ]
    for k, v in lines:
        print(safe_term(f"  {k}: {v}"))
    c = out.get("clone")
    if c:
        print(safe_term(f"  on {args.clone} ({c['branch']}): {c['pickaxe_commits']} commits "
                        f"found by the pickaxe in {c['pickaxe_seconds']} s; "
                        f"{c['declaring_files']} files declare a spelling"))
        for f in c["left_out"]:
            print(safe_term(f"    left out (no file marker): {f['file']}: "
                            f"{', '.join(f['classes']) or 'no class'}"))
        if not c["left_out"]:
            print("    every file that declares a spelling holds a file marker")
    return 0


def cmd_profile_keys(args: argparse.Namespace) -> int:
    import textwrap

    from ..profile_check import schema_keys

    keys = schema_keys()
    if args.json:
        print(json.dumps([x.to_json() for x in keys], ensure_ascii=False, indent=1))
        return 0
    for x in keys:
        print(safe_term(f"{x.key} ({x.type}{'; ' + x.status if x.status else ''})"))
        print(safe_term(textwrap.fill(x.description, width=92, initial_indent="    ",
                                      subsequent_indent="    ", break_long_words=False,
                                      break_on_hyphens=False)))
    return 0
