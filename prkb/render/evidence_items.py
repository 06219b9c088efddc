"""A relation's evidence, each item's sentences written here, not by ``report/_evidence.j2``.

The report's related PRs and the digest's relations say each relation's evidence; a site
build words about 28,000 of them at 10,000 PRs (once per text, language and wording:
:mod:`.evidence_lines`), which cost a twentieth of its rendering in the template's macro.
:class:`EvidenceItems` writes the same text from the same catalog messages (marked here with
``N_``), through the environment's own ``_``, filters (``c``, ``q``, ``label``, Jinja's
``join``), ``codes`` and labels, as the macro did: in the report's environments and the
digest's, whose ``_`` is a plain call. The macro stays the oracle
(``tests/test_evidence_items.py``) and what an environment whose ``_`` is the i18n
extension's (it needs a template context) says.

A field the macro read as ``it.name`` must be there (the environments' undefined is strict:
the macro raised), here too (a ``KeyError``); one it read with ``it.get`` may be missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jinja2

from .evidence_lines import EVIDENCE
from .i18n import N_
from .section_writer import SectionWriter

QUOTE = {
    "title": N_("Title of %(pr)s: %(text)s"),
    "body": N_("Description of %(pr)s: %(text)s"),
    "comment": N_("A comment on %(pr)s: %(text)s"),
    "review": N_("A review of %(pr)s: %(text)s"),
}
QUOTE_AT = N_("A review comment on %(pr)s, at %(path)s: %(text)s")
QUOTE_ELSE = N_("A review comment on %(pr)s: %(text)s")
RECORD = N_("As the curated record states it: %(text)s")
LEGACY = N_("Evidence as an earlier prkb version stored it: %(text)s")
OLDER = N_("%(older)s is older than %(newer)s, so it cannot have replaced it.")
NOT_DECLARED = N_("not declared")
RENAMED = N_("%(old)s (now %(new)s)")
KEEPS = N_("%(decl)s keeps its value %(after)s (%(dir)s).")
DECLARED = N_("%(decl)s is declared as %(after)s (%(dir)s).")
REMOVED = N_("%(decl)s is removed; it was %(before)s.")
GOES = N_("%(decl)s goes from %(before)s to %(after)s (%(dir)s).")
BY_DECLARED = N_("%(by)s had declared it as %(level)s.")
BY_SET = N_("%(by)s had last set it, from %(by_before)s to %(by_after)s.")
LOWERS_BACK = N_("%(pr)s lowers %(cls)s from %(before)s to %(after)s, back to the level it "
                 "had before %(by)s.")
LOWERS = N_("%(pr)s lowers %(cls)s from %(before)s to %(after)s.")
DECLARED_DAY = N_("%(by)s had declared it as %(level)s less than a day earlier.")
DECLARED_DAYS = N_("%(by)s had declared it as %(level)s %(days)s days earlier.")
RAISED_DAY = N_("%(by)s had raised it from %(before)s to %(after)s less than a day earlier.")
RAISED_DAYS = N_("%(by)s had raised it from %(before)s to %(after)s %(days)s days earlier.")
RAISED = N_("%(by)s had raised it from %(before)s to %(after)s.")
FIX_TITLE = N_("The title of %(pr)s marks it as a fix: %(title)s")
BLAME_MORE = N_("%(tool)s on the parent commit: %(n)s changed line(s) in %(files)s were last "
                "changed by commit %(commits)s, which %(by)s merged (%(more)s more files or "
                "commits are counted and not listed).")
BLAME = N_("%(tool)s on the parent commit: %(n)s changed line(s) in %(files)s were last "
           "changed by commit %(commits)s, which %(by)s merged.")
REVERT = N_("The title of %(pr)s says it is a revert.")
BLAMED = N_("The blamed lines declare %(classes)s: %(by)s raised or added its level and "
            "%(pr)s lowers it.")
CULPRIT = N_("The text of %(pr)s names %(culprits)s as the change that caused the problem.")
CLOSED_FIX = N_("%(pr)s was closed without merging; %(fix)s is the merged fix of the problem "
                "from %(of)s.")
CLOSED = N_("%(pr)s was closed without merging.")
SUPERSEDED_MERGED = N_("%(old)s was closed without merging and is older than %(new)s, which "
                       "was merged.")
SUPERSEDED_OPEN = N_("%(old)s was closed without merging and is older than %(new)s, which is "
                     "still open.")
SAME_CHANGE = N_("Both change %(decl)s within %(days)s days, and one of them was closed "
                 "without merging.")
ALIKE = N_("Their titles are %(pct)s alike.")
SAME_TEST = N_("Both name the test %(test)s.")
STALE_ADDED = N_("%(by)s added %(cls)s in %(file)s on %(attr)s, a spelling the code did not "
                 "read, so its effective level was %(stale)s; %(pr)s puts it on the spelling "
                 "the code reads (%(after)s).")
STALE_LEFT = N_("%(by)s left %(cls)s in %(file)s on %(attr)s, a spelling the code no longer "
                "read, so its effective level went from %(before)s to %(stale)s; %(pr)s puts "
                "it back on the spelling the code reads (%(after)s).")


def writes_evidence(env: jinja2.Environment) -> bool:
    """Whether :class:`EvidenceItems` can word the evidence of ``env``: its ``_`` is a plain
    call (the report's and the digest's), and it has what a section writer reads."""
    return (getattr(env.globals.get("_"), "_plain_call", False)
            and all(k in env.filters for k in ("c", "t", "q", "label", "join"))
            and all(k in env.globals for k in ("codes", "labels", "markup")))


def evidence_writer(env: jinja2.Environment) -> EvidenceItems | None:
    """The writer of ``env``'s evidence (``i18n.sentence_macros(..., evidence=)``), None when
    the macro must word it (:func:`writes_evidence`)."""
    return EvidenceItems(env) if writes_evidence(env) else None


class EvidenceItems(SectionWriter):
    """``lines(items, li, end)`` of ``report/_evidence.j2`` for one environment: each sentence
    of the evidence as one list item, ``li`` before it, ``end`` and a newline after it; the
    text the macro's function returned (its caller makes it Markup under autoescape)."""

    TEMPLATE = EVIDENCE  # the macro's template: its autoescape

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        self.join_filter = env.filters["join"]
        # the quotation marks as ``labels.lq ~ x ~ labels.rq`` joined them: escaped under
        # autoescape (the quoted text is markup), as they are otherwise
        self.lq, self.rq = self.punctuation("lq", "rq")

    def _quote(self, text: Any) -> Any:
        """``labels.lq ~ (text|q) ~ labels.rq`` as the template made it."""
        return self.made(f"{self.lq}{self.quoted(text)}{self.rq}")

    def sentences(self, it: Mapping[str, Any]) -> list[Any]:
        """What the macro said of one item, a sentence each."""
        say, code = self.say, self.code
        k = it["kind"]
        if k == "quote":
            where = it["where"]
            text = self._quote(it["text"])
            msg = QUOTE.get(where) if isinstance(where, str) else None
            if msg is not None:
                return [say(msg, pr=it["pr"], text=text)]
            if it.get("path"):
                return [say(QUOTE_AT, pr=it["pr"], path=code(it["path"]), text=text)]
            return [say(QUOTE_ELSE, pr=it["pr"], text=text)]
        if k == "record":
            return [say(RECORD, text=self._quote(it["text"]))]
        if k == "legacy":
            return [say(LEGACY, text=self._quote(it["text"]))]
        if k == "older":
            return [say(OLDER, older=it["older"], newer=it["newer"])]
        if k == "last-set":
            return self._last_set(it)
        if k == "undoes-level":
            return self._undoes(it)
        if k == "blame":
            files = self.codes(it["files"], self.lsep)
            commits = self.codes(it["commits"], self.lsep)
            if it.get("more"):
                return [say(BLAME_MORE, tool=code("git blame"), n=it["lines"], files=files,
                            commits=commits, by=it["by"], more=it["more"])]
            return [say(BLAME, tool=code("git blame"), n=it["lines"], files=files,
                        commits=commits, by=it["by"])]
        if k == "revert-title":
            return [say(REVERT, pr=it["pr"])]
        if k == "blamed-declaration":
            return [say(BLAMED, classes=self.codes(it["classes"], self.lsep), by=it["by"],
                        pr=it["pr"])]
        if k == "culprit-named":
            return [say(CULPRIT, pr=it["pr"],
                        culprits=self.join_filter(self.ctx, it["culprits"], self.lsep))]
        if k == "closed-unmerged":
            if it.get("fix"):
                return [say(CLOSED_FIX, pr=it["pr"], fix=it["fix"], of=it["of"])]
            return [say(CLOSED, pr=it["pr"])]
        if k == "superseded":
            return [say(SUPERSEDED_MERGED if it["state"] == "merged" else SUPERSEDED_OPEN,
                        old=it["old"], new=it["new"])]
        if k == "same-change":
            out = [say(SAME_CHANGE, decl=code(f"{it['class']}.{it['attr']}"),
                       days=it["days"])]
            if it.get("similarity") is not None:
                # what ``"%d%%"|format(...)`` made: the whole percent, cut, not rounded
                out.append(say(ALIKE, pct=f"{int(it['similarity'] * 100)}%"))
            if it.get("test"):
                out.append(say(SAME_TEST, test=code(it["test"])))
            return out
        if k == "stale-restored":
            stale = code(it["level_stale"] or "-")
            after = code(it["level_after"] or "-")
            if not it["level_before"]:
                return [say(STALE_ADDED, by=it["by"], cls=code(it["class"]),
                            file=code(it["file"]), attr=code(it["attr"]), stale=stale,
                            pr=it["pr"], after=after)]
            return [say(STALE_LEFT, by=it["by"], cls=code(it["class"]), file=code(it["file"]),
                        attr=code(it["attr"]), before=code(it["level_before"] or "-"),
                        stale=stale, pr=it["pr"], after=after)]
        return [code(k)]

    def _levels(self, it: Mapping[str, Any]) -> list[Any]:
        """The four levels of a ``last-set`` or ``undoes-level`` item (before, after,
        by_before, by_after) as code, "not declared" for a missing one."""
        undeclared = self.say(NOT_DECLARED)
        return [self.code(v) if (v := it.get(key)) else undeclared
                for key in ("before", "after", "by_before", "by_after")]

    def _last_set(self, it: Mapping[str, Any]) -> list[Any]:
        say, code = self.say, self.code
        before, after, by_before, by_after = self._levels(it)
        if it.get("before_attr"):
            decl = say(RENAMED, old=code(f"{it['class']}.{it['before_attr']}"),
                       new=code(it["attr"]))
        else:
            decl = code(f"{it['class']}.{it['attr']}")
        direction = it["direction"]
        if direction in ("renamed", "moved"):
            out = [say(KEEPS, decl=decl, after=after, dir=self.label(direction, "directions"))]
        elif not it.get("before"):
            out = [say(DECLARED, decl=decl, after=after,
                       dir=self.label(direction, "directions"))]
        elif not it.get("after"):
            out = [say(REMOVED, decl=decl, before=before)]
        else:
            out = [say(GOES, decl=decl, before=before, after=after,
                       dir=self.label(direction, "directions"))]
        if not it.get("by_before"):
            out.append(say(BY_DECLARED, by=it["by"], level=by_after))
        else:
            out.append(say(BY_SET, by=it["by"], by_before=by_before, by_after=by_after))
        return out

    def _undoes(self, it: Mapping[str, Any]) -> list[Any]:
        say, code = self.say, self.code
        before, after, by_before, by_after = self._levels(it)
        if it.get("back"):
            out = [say(LOWERS_BACK, pr=it["pr"], cls=code(it["class"]), before=before,
                       after=after, by=it["by"])]
        else:
            out = [say(LOWERS, pr=it["pr"], cls=code(it["class"]), before=before,
                       after=after)]
        added = it["by_direction"] == "added"
        days = it.get("days")
        if added and days == 0:
            out.append(say(DECLARED_DAY, by=it["by"], level=by_after))
        elif added and days is not None:
            out.append(say(DECLARED_DAYS, by=it["by"], level=by_after, days=it["days"]))
        elif added:
            out.append(say(BY_DECLARED, by=it["by"], level=by_after))
        elif days == 0:
            out.append(say(RAISED_DAY, by=it["by"], before=by_before, after=by_after))
        elif days is not None:
            out.append(say(RAISED_DAYS, by=it["by"], before=by_before, after=by_after,
                           days=it["days"]))
        else:
            out.append(say(RAISED, by=it["by"], before=by_before, after=by_after))
        if it.get("title"):
            out.append(say(FIX_TITLE, pr=it["pr"], title=self._quote(it["title"])))
        return out

    def __call__(self, items: Iterable[Mapping[str, Any]], li: Any, end: Any) -> str:
        shown = self.shown
        head, tail = shown(li), f"{shown(end)}\n"
        return "".join([f"{head}{shown(s)}{tail}" for it in items for s in self.sentences(it)])
