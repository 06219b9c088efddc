"""The report's implementation breakdown, written here as the items of one numbered list, not
by the template: each declaration change with its values' meanings, the changes of the
mechanism itself (the enum of levels, the base's declaration, the reading sites), the
effective state, the related calls, the other files and the tests.

A PR page's breakdown took about 150,000 instructions in the template (per language), most of
it the template's own work around each sentence. :class:`ImplementationItems` writes the
same text from the same catalog messages (marked here with ``N_``), through the environment's
own ``_``, filters, formatter, labels and the state sentences' macro.
``tests/test_implementation_items.py`` holds the result to the template it replaces, kept as
``tests/golden/implementation_before.j2``, in every format and language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jinja2

from .i18n import N_
from .section_writer import SectionWriter

DECLARATION = N_("Declaration change")
IN_FILE = N_("in %(file)s: %(change)s")
EXPRESSION = N_("The value is an expression; it is kept as written rather than forced into "
                "one level.")
FRAMEWORK = N_("Framework change")
ENUM_ADDED = N_("the enum of levels %(enum)s is introduced, with %(names)s (read from the code "
                "at the parent and at the commit).")
ENUM_REMOVED = N_("the enum of levels %(enum)s is no longer defined in the scanned code; it had "
                  "%(names)s.")
LEVELS_RENAMED = N_("the enum of levels %(enum)s renames %(old)s to %(new)s (read from the code "
                    "at the parent and at the commit).")
LEVELS_ADDED = N_("the enum of levels %(enum)s gains %(names)s (read from the code at the "
                  "parent and at the commit).")
LEVELS_REMOVED = N_("the enum of levels %(enum)s loses %(names)s (read from the code at the "
                    "parent and at the commit).")
FILE = N_("%(file)s changed (+%(add)s/-%(del)s): %(what)s.")
READ_START = N_("from this commit on the code reads %(new)s (%(where)s); at the parent, no "
                "reading site read any spelling of it.")
READ_SPELLING = N_("from this commit on the code reads %(new)s where it read %(old)s "
                   "(%(where)s).")
BASE_READ = N_("%(cls)s in %(file)s, the base of every %(holder)s, now declares %(new)s instead "
               "of %(old)s, and from this commit on the code reads %(new)s (%(where)s).")
BASE_STILL = N_("%(cls)s in %(file)s, the base of every %(holder)s, now declares %(new)s "
                "instead of %(old)s, but the code still reads %(read)s (%(where)s).")
BASE_INFERRED = N_("%(cls)s in %(file)s, the base of every %(holder)s, now declares %(new)s "
                   "instead of %(old)s: from this commit on the code reads %(new)s.")
INFERRED_NOTE = N_(" Which spelling the code reads is inferred from the base's declaration: no "
                   "reading site of the symbol was read for this commit.")
LEFT = N_(" %(holders)s left on a spelling the code no longer reads: %(classes)s.")
PUTS_BACK = N_(" %(by)s puts %(cls)s back on the spelling the code reads.")
NONE_LEFT = N_(" No %(holder)s is left on a spelling the code no longer reads.")
# the kinds of a framework change that are said alone (no word of the classes left behind)
SAID_ALONE = ("enum-added", "enum-removed", "levels-renamed", "levels-added", "levels-removed",
              "file")
ENUM_NAMES = {"enum-added": ENUM_ADDED, "enum-removed": ENUM_REMOVED,
              "levels-added": LEVELS_ADDED, "levels-removed": LEVELS_REMOVED}

STATE = N_("Effective state")
NO_AUDIT = N_("unknown: the consistency audit did not run for this commit, so the class "
              "hierarchy was not read at its parent and at it.")
NO_CLONE = N_("unknown: the clone is not known (this record was not collected from git), so "
              "the class hierarchy was not read at the PR's parent and at its commit.")
NONE_CHANGED = N_("read from the whole class hierarchy at the PR's parent and at its commit: "
                  "the effective value of no %(holder)s changed.")
THESE_CHANGED = N_("read from the whole class hierarchy at the PR's parent and at its commit, "
                   "these effective values changed:")
STATE_CHANGE = N_("%(cls)s in %(file)s, %(value)s: %(before)s → %(after)s")
MOVED = N_(" (moved with its file from %(old)s)")
OUTSIDE_STALE = N_(" (a file this PR did not change: the class is left on a spelling the code "
                   "no longer reads)")
OUTSIDE = N_(" (a file this PR did not change: the class inherits what it changed)")

RELATED = N_("Related change in the same PR")
CALL_ADDED = N_("in %(file)s, class %(cls)s, a line naming %(name)s was added: %(line)s")
CALL_REMOVED = N_("in %(file)s, class %(cls)s, a line naming %(name)s was removed: %(line)s")
CALLS_MORE = N_("%(n)s more lines naming %(names)s in other files, not listed")
OTHER_FILE = N_("Other file")
FILE_ROLE = N_(" (%(role)s, +%(add)s/-%(del)s)")
TESTS = N_("Tests")
TOUCHED = N_("files under %(dir)s changed: %(files)s")
TOUCHED_MORE = N_(", and %(n)s more")
NOT_TOUCHED = N_("no file under %(dir)s changed in this PR.")


class ImplementationItems(SectionWriter):
    """The global ``implementation_items(implementation, changes, change_lines, profile,
    pr_text, words, holder, holders)`` of a report environment: the breakdown after its
    heading, as the environment writes it (Markup under autoescape), when called with the
    section's facts, the report's declaration changes and their sentences, the report
    context's ``profile`` (its ``related_names``), where the PR's text came from, the
    profile's words of the language and what the classes that hold the value are called."""

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.num: Any = env.globals["num"]
        self.capfirst = env.filters["capfirst"]
        self.block = env.filters["block"]
        self.lang = env.globals["lang"]
        self.state_side: Any = env.globals["sentences"]["state"].state_side  # type: ignore[index]
        (self.ol, self.end_ol, self.ul, self.end_ul, self.li3, self.end, self.end_li, self.b,
         self.end_b, self.p, self.end_p, self.ip) = self.structure(
            "ol", "end_ol", "ul", "end_ul", "li3", "end", "end_li", "b", "end_b", "p",
            "end_p", "ip")
        self.tests_dir = self.code("tests/")

    def item(self, i: int, title: str) -> str:
        """A numbered item's start: its number and its bold title, then the colon."""
        return f"{self.shown(self.num(i))}{self.b}{self.shown(self.say(title))}{self.end_b}" \
               f"{self.colon}"

    def change(self, add: Callable[[str], None], ch: Mapping[str, Any], line: Any) -> None:
        shown, code, li3, end, colon = self.shown, self.code, self.li3, self.end, self.colon
        add(f"{shown(self.say(IN_FILE, file=code(ch['file']), change=line))}\n")
        before, after = ch["before"], ch["after"]
        said_before = bool(before and ch["before_meaning"])
        said_after = bool(after and ch["after_meaning"])
        if said_before or said_after or ch["conditional"]:
            add(f"{self.ul}\n")
            if said_before:
                add(f"{li3}{shown(code(before))}{colon}{shown(ch['before_meaning'])}{end}\n")
            if said_after and after != before:
                add(f"{li3}{shown(code(after))}{colon}{shown(ch['after_meaning'])}{end}\n")
            if ch["conditional"]:
                add(f"{li3}{shown(self.say(EXPRESSION))}{end}\n")
            add(f"{self.end_ul}\n")
        add(f"{self.end_li}\n")

    def framework(self, fw: Mapping[str, Any], first: bool, holder: Any,
                  holders: Any) -> str:
        say, code, kind = self.say, self.code, fw["kind"]
        names = ENUM_NAMES.get(kind)
        if names is not None:
            said = say(names, enum=code(fw["enum"]), names=self.codes(fw["names"], self.lsep))
        elif kind == "levels-renamed":
            joint = "" if self.lang == "zh" else " "
            said = self.made(joint.join(str(self.shown(say(
                LEVELS_RENAMED, enum=code(fw["enum"]), old=code(old), new=code(new))))
                for old, new in fw["pairs"]))
        elif kind == "file":
            said = self._file(fw)
        elif kind == "read-start":
            said = say(READ_START, new=code(fw["new"]), where=code(fw["where"]))
        elif kind == "read-spelling":
            said = say(READ_SPELLING, new=code(fw["new"]), old=code(fw["old"]),
                       where=code(fw["where"]))
        else:
            read = fw["read"]
            cls, file = code(fw["class"]), code(fw["file"])
            new, old = code(fw["new"]), code(fw["old"])
            if read and read["attr"] == fw["new"]:
                said = say(BASE_READ, holder=holder, cls=cls, file=file, new=new, old=old,
                           where=code(read["where"]))
            elif read:
                said = say(BASE_STILL, holder=holder, cls=cls, file=file, new=new, old=old,
                           read=code(read["attr"]), where=code(read["where"]))
            else:
                base = say(BASE_INFERRED, holder=holder, cls=cls, file=file, new=new, old=old)
                said = self.made(f"{self.shown(base)}{self.shown(say(INFERRED_NOTE))}")
        text = str(self.shown(said))
        if not first or kind in SAID_ALONE:
            return text
        if fw["left"]:
            text += str(self.shown(say(LEFT, holders=self.capfirst(holders),
                                       classes=self.codes(fw["left"], self.lsep))))
            for x in fw["restored"]:
                if x["by"]:
                    text += str(self.shown(say(PUTS_BACK, by=x["by"], cls=code(x["class"]))))
            return text
        return text + str(self.shown(say(NONE_LEFT, holder=holder)))

    def _file(self, fw: Mapping[str, Any]) -> Any:
        """A file of the mechanism that changed, with its size of change and what it does."""
        return self.say(FILE, file=self.code(fw["file"]),
                        add=fw["additions"] if fw["additions"] is not None else "?",
                        **{"del": fw["deletions"] if fw["deletions"] is not None else "?"},
                        what=self.text(fw["what"][self.lang]))

    def state(self, add: Callable[[str], None], state: Mapping[str, Any], holder: Any,
              words: Mapping[str, Any]) -> None:
        shown, say = self.shown, self.say
        if not state["known"] and state["reason"] == "no-audit":
            add(f"{shown(say(NO_AUDIT))}\n")
        elif not state["known"]:
            add(f"{shown(say(NO_CLONE))}\n")
        elif not state["changes"]:
            add(f"{shown(say(NONE_CHANGED, holder=holder))}\n")
        else:
            code, side, word = self.code, self.state_side, words["holder"]
            add(f"{shown(say(THESE_CHANGED))}\n{self.ul}\n")
            for sc in state["changes"]:
                said = say(STATE_CHANGE, cls=code(sc["class"]), file=code(sc["file"]),
                           value=code(sc["value"]), before=side(sc["before"], word),
                           after=side(sc["after"], word))
                more = ""
                if sc["previous_file"]:
                    more = str(shown(say(MOVED, old=code(sc["previous_file"]))))
                if sc["outside"] and sc["after"]["kind"] == "stale":
                    more += str(shown(say(OUTSIDE_STALE)))
                elif sc["outside"]:
                    more += str(shown(say(OUTSIDE)))
                add(f"{self.li3}{shown(said)}{more}{self.end}\n")
            add(f"{self.end_ul}\n\n")
        add(f"{self.end_li}\n")

    def tests(self, add: Callable[[str], None], tests: Mapping[str, Any],
              pr_text: Any) -> None:
        shown, say = self.shown, self.say
        if tests["touched"]:
            add(str(shown(say(TOUCHED, dir=self.tests_dir,
                              files=self.codes(tests["touched"], self.lsep)))))
            if tests["touched_more"]:
                add(str(shown(say(TOUCHED_MORE, n=tests["touched_more"]))))
        else:
            add(str(shown(say(NOT_TOUCHED, dir=self.tests_dir))))
        add("\n")
        if tests["commands"]:
            lead = self.getitem(self.labels.commands_from, pr_text)
            block = self.block("\n".join(tests["commands"]), "shell")
            add(f"{self.ip}{shown(lead)}{self.end_p}\n\n{shown(block)}\n")
        add(f"{self.end_li}\n")

    def __call__(self, impl: Any, changes: Sequence[Mapping[str, Any]],
                 change_lines: Sequence[Any], profile: Mapping[str, Any], pr_text: Any,
                 words: Mapping[str, Any], holder: Any, holders: Any) -> str:
        shown, say, code, item = self.shown, self.say, self.code, self.item
        state, calls, files = impl.state, impl.calls, impl.files
        parts: list[str] = []
        add = parts.append
        listed = bool(changes or calls or files or impl.files_more)
        if listed:
            add(f"{self.ol}\n")
        i = 0
        for ch, line in zip(changes, change_lines, strict=True):
            i += 1
            add(item(i, DECLARATION))
            self.change(add, ch, line)
        for k, fw in enumerate(state["framework"]):
            i += 1
            add(f"{item(i, FRAMEWORK)}{self.framework(fw, k == 0, holder, holders)}"
                f"{self.end}\n")
        if changes or not state["known"] or state["changes"]:
            i += 1
            add(item(i, STATE))
            self.state(add, state, holder, words)
        for call in calls:
            i += 1
            said = say(CALL_ADDED if call["kind"] == "added" else CALL_REMOVED,
                       file=code(call["file"]), cls=code(call["class"] or "?"),
                       name=code(call["name"]), line=code(call["line"]))
            add(f"{item(i, RELATED)}{shown(said)}{self.end}\n")
        if impl.calls_more:
            i += 1
            said = say(CALLS_MORE, n=impl.calls_more,
                       names=self.codes(profile["related_names"], self.lsep))
            add(f"{item(i, RELATED)}{shown(said)}{self.end}\n")
        framework_files = state["framework_files"]
        for f in files:
            if f["role"] in ("declaration", "related-call") or f["path"] in framework_files:
                continue
            i += 1
            role = say(FILE_ROLE, role=self.getitem(self.labels.role, f["role"]),
                       add=f["additions"], **{"del": f["deletions"]})
            add(f"{item(i, OTHER_FILE)}{shown(code(f['path']))}{shown(role)}{self.end}\n")
        if impl.files_more:
            i += 1
            add(f"{shown(self.num(i))}{shown(self.labels.files_left(self.ctx, impl.files_more))}"
                f"{self.end}\n")
        if files:
            i += 1
            add(item(i, TESTS))
            self.tests(add, impl.tests, pr_text)
        if listed:
            add(f"{self.end_ol}\n")
        if not changes and not calls and not files:
            add(f"\n{self.p}{shown(self.labels.no_files)}{self.end_p}\n")
        return self.made("".join(parts))
