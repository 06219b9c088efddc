"""The report's risks and impact, written here as the items of one list, not by the template.

A PR page's risks section took about 570,000 instructions in the template (per language, a
builder with two effects and four risk tags): a tenth of the page, the report's costliest
section. Most of it was the template's own work around each sentence: a ``yield`` and an
``escape`` per value, a macro call per effect, the ``elif`` chains read again on every item.
:class:`RisksItems` writes the same text in one call, from the same catalog messages
(marked here with ``N_``, so the catalog's extraction finds them), the environment's own
``_`` (its language, and the wording of a report about a commit or of a profile's audit rule),
its filters (``c``, ``t``, ``label``, ``capfirst``, ``format_date``, Jinja's ``join`` and
``replace``), its formatter and its label tables.

``tests/test_risks_items.py`` holds the result to the template it replaces, kept as
``tests/golden/risks_before.j2``, in every format and language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jinja2

from .i18n import N_
from .jinja_calls import markup_join
from .section_writer import SectionWriter

# Who gains or pays, by whom the effect reaches (a condition, the audit rule's users)
PARTY_RULE_WHEN = N_("users of %(cls)s whom the audit rule is about, where %(when)s holds "
                     "and %(unless)s does not")
PARTY_WHEN = N_("the models that select %(cls)s where %(when)s holds and %(unless)s does not")
PARTY_RULE = N_("users of %(cls)s whom the audit rule is about")
PARTY_ALL = N_("every model that selects %(cls)s")

# what a raise or a lowering of a class's effects is measured against (its ``basis``)
BASIS: dict[str, str] = {
    "versus-default": N_(" Compared with the base class's default: the level the new "
                         "declaration replaces may have been inherited and is not known here."),
    "inherited": N_(" Compared with the level %(cls)s inherited before from %(base)s in "
                    "%(file)s."),
    "now-inherits": N_(" Its declaration was removed: it now inherits %(after)s from %(base)s "
                       "in %(file)s."),
    "restored": N_(" Read from the class hierarchy: %(cls)s declared a spelling the code no "
                   "longer read, and now declares the one it reads."),
    "base-changed": N_(" %(cls)s did not change itself: it inherits this from %(base)s in "
                       "%(file)s."),
    "state": N_(" Read from the effective values at the PR's parent and at its commit."),
}

# an effect's sentence, by its reason (and the audit's reading of a raise)
CONDITION_SHIFT = N_("Read from the two expressions: where %(when)s holds and %(unless)s does "
                     "not, %(cls)s now declares %(after)s instead of %(before)s; everywhere "
                     "else its declared value is what it was.")
GAIN_WORDED = N_("Who gains: %(party)s; %(gain)s.")
GAIN_UP = N_("Who gains: %(party)s; the level goes up (%(before)s → %(after)s).")
PAYS_AUDIT: dict[str, str] = {
    "finding": N_("Who pays: %(party)s; the consistency audit flags %(cls)s for this level."),
    "ready": N_("Who pays: %(party)s, if %(cls)s cannot really handle what the higher level "
                "claims; the consistency audit reads it as meeting its rule, so that risk is "
                "checked."),
    "not-ready": N_("Who pays: %(party)s; the consistency audit reads %(cls)s as not meeting "
                    "its rule for this level."),
    "not-applicable": N_("Who pays: %(party)s, if %(cls)s cannot really handle what the "
                         "higher level claims; the consistency audit's rule does not apply "
                         "to it."),
    "not-checked": N_("Who pays: %(party)s, if %(cls)s cannot really handle what the higher "
                      "level claims; the consistency audit has not checked it, so this is "
                      "unknown."),
}
PAYS_WORDED = N_("Who pays: %(party)s, %(risk)s.")
PAYS_RAISE = N_("Who pays: %(party)s, if %(cls)s cannot really handle what the higher level "
                "claims.")
GAIN_FIX = N_("Who gains: %(party)s; %(cls)s no longer claims a level above what it supports "
              "(%(before)s → %(after)s), a correctness fix.")
PAYS_COST_WORDED = N_("Who pays: %(party)s; %(cost)s.")
PAYS_LOWER = N_("Who pays: %(party)s; what the higher level made possible is no longer used.")
SAME_AS_DEFAULT = N_("Nobody gains or pays: %(cls)s declares %(after)s, the base class's "
                     "default.")
NO_GAIN_NOT_READY = N_("Who gains: nobody among %(party)s: the consistency audit reads %(cls)s "
                       "as not meeting its rule, so the higher level it claims does not hold "
                       "(%(before)s → %(after)s).")
LEFT_STALE = N_("Who pays: %(party)s; %(cls)s is left on %(attr)s, a spelling the code no "
                "longer reads, so its effective level falls from %(before)s to %(after)s, the "
                "level it inherits.")
NEW_HOLDER = N_("Nobody else gains or pays: %(cls)s sets the value for the first time, at "
                "%(after)s (at the PR's parent it set none); it adds a row and takes nothing "
                "from the other %(holders)s.")
NEW_BUILDER = N_("Nobody else gains or pays: %(cls)s is a new %(holder)s; it adds a row at "
                 "%(after)s and takes nothing from the other %(holders)s.")
CLASS_REMOVED = N_("Nobody keeps this value: %(cls)s no longer exists at the PR's commit, so "
                   "its value (%(before)s) applies to no class; a model that selected it has "
                   "to select another class, which is not read here.")
# reasons said with the class alone
CLASS_ONLY: dict[str, str] = {
    "same-effective": N_("Nobody gains or pays: the effective value of %(cls)s is the same at "
                         "the PR's parent and at its commit (read from the class hierarchy)."),
    "no-value-change": N_("Nobody gains or pays: %(cls)s keeps its value (a rename or a "
                          "move)."),
    "falls-back-to-inherited": N_("Effect unknown: %(cls)s now inherits its parent's level, "
                                  "which this record does not give."),
    "decided-at-run-time": N_("The effect depends on run-time conditions: %(cls)s decides its "
                              "level in its support method."),
}
KIND_NO_EFFECT = N_("Effect not said: %(cls)s went from %(before)s to %(after)s, and the "
                    "profile says nothing of what such a change means for whom.")
BOOL_VALUE = N_("Effect unknown: one side of the change is a bool (%(before)s → %(after)s), "
                "and the profile maps no bool to a level.")
EXPRESSION = N_("Effect unknown: the value of %(cls)s is an expression (%(after)s), not one "
                "level.")

# each changed class
CLASS = N_("class")
BUILDER_PLATFORMS = N_("%(holder)s %(cls)s in %(file)s; platform of the code: %(platforms)s.")
BUILDER_NO_PLATFORM = N_("%(holder)s %(cls)s in %(file)s; no platform recognised from the "
                         "file's path.")
NOT_HOLDER = N_(" It is no %(holder)s: at the PR's commit the audit does not find it below "
                "%(bases)s, so its value decides nothing the profile tracks.")

# the lines of the whole PR
PLATFORMS = N_("Platforms")
PORTABLE = N_("none specific; the changed code is %(label)s, which is not tied to one platform")
NO_PLATFORM = N_("no specific platform recognised")
ALSO_PORTABLE = N_("the change also touches %(label)s code, which is not tied to one platform")
TITLE_ONLY = N_("named only in the title: %(names)s")
NONE = N_("none")
READINGS: dict[str, str] = {
    "ready": N_("Consistency audit at this PR's commit: %(classes)s meets its rule for "
                "%(levels)s."),
    "not-ready": N_("Consistency audit: %(classes)s does not meet its rule while %(levels)s is "
                    "declared."),
    "not-applicable": N_("Consistency audit at this PR's commit: the rule for %(levels)s does "
                         "not apply to %(classes)s."),
}
READING_UNKNOWN = N_("Consistency of %(classes)s (declared %(levels)s): unknown, not checked; "
                     "the knowledge base holds no consistency-audit reading for this PR.")
CORE_RULE = N_("Core path rule: the profile counts a declaration change under %(prefixes)s as "
               "a core path change even when only one file changes, because %(why)s. Applies "
               "to: %(files)s.")
CORE_PATHS = N_("Core paths touched (they reach every backend)")
AUDIT = N_("Consistency audit")
FINDINGS = N_("%(n)s finding(s)")
NO_FINDING = N_("no finding recorded for this PR")
NO_RULE = N_("none (the profile names no audit rule)")
FINDING = N_("%(rule)s on %(cls)s in %(file)s, as the audit worded it: %(message)s")
FIXED_BY = N_(" Fixed by %(by)s (%(date)s): the audit at its parent had this finding, at its "
              "commit not.")
FIXED_BY_COMMIT = N_("commit %(sha)s")
NOT_FIXED = N_(" No later commit in the knowledge base makes it no longer hold.")
RISK_TAGS = N_("Risk tags")


class RisksItems(SectionWriter):
    """The global ``risks_items(risks, pr_text, profile, holder, holders)`` of a report
    environment: the list of the risks section, from its opening tag to its closing one (no
    newline after it), as the environment writes it (Markup under autoescape), when called
    with ``risks`` (the section's localized facts), ``pr_text`` (where the PR's text came from:
    the features' label), ``profile`` (the report context's: ``rules``, ``builder_bases``,
    ``wording``) and ``holder``/``holders`` (what the classes that hold the value are
    called)."""

    def __init__(self, env: jinja2.Environment) -> None:
        super().__init__(env)
        filters = env.filters
        self.capfirst = filters["capfirst"]
        self.format_date = filters["format_date"]
        self.jinja_join, self.jinja_replace = filters["join"], filters["replace"]
        self.ul, self.end_ul, self.li, self.li2, self.end, self.end_li = self.structure(
            "ul", "end_ul", "li", "li2", "end", "end_li")
        # a line the template ended with a tag, then its end and a blank line
        self.end_blank = self.after_tag("end", "\n\n")
        self.semi, self.lp, self.rp = self.punctuation("semi", "lp", "rp")

    def join(self, items: Sequence[Any]) -> Any:
        """``items|join(labels.lsep)``."""
        return self.jinja_join(self.ctx, items, self.lsep)

    def replace(self, s: Any, old: str, new: Any) -> Any:
        """``s|replace(old, new)``."""
        return self.jinja_replace(self.ctx, s, old, new)

    def concat(self, *parts: Any) -> Any:
        """``a ~ b ~ c``."""
        return markup_join(parts) if self.auto else "".join(str(x) for x in parts)

    def basis_note(self, e: Mapping[str, Any], after: Any) -> Any:
        """What a raise or a lowering is measured against, after its sentence."""
        basis = e["basis"]
        said = BASIS.get(basis)
        if said is None:
            return ""
        say, code = self.say, self.code
        if basis in ("inherited", "now-inherits", "base-changed"):
            base, file = code(e["from_class"] or "?"), code(e["from_file"] or "?")
            if basis == "now-inherits":
                return say(said, after=after, base=base, file=file)
            return say(said, cls=code(e["builder"]), base=base, file=file)
        if basis == "restored":
            return say(said, cls=code(e["builder"]))
        return say(said)

    def party(self, e: Mapping[str, Any], cls: Any) -> Any:
        """Who an effect reaches: under a condition, the audit rule's users, every model."""
        say, code, when = self.say, self.code, e["when"]
        if when and e["party"] == "rule-users":
            return say(PARTY_RULE_WHEN, cls=cls, when=code(when), unless=code(e["unless"]))
        if when:
            return say(PARTY_WHEN, cls=cls, when=code(when), unless=code(e["unless"]))
        return say(PARTY_RULE if e["party"] == "rule-users" else PARTY_ALL, cls=cls)

    def effect(self, e: Mapping[str, Any], words: Mapping[str, Any], holder: Any,
               holders: Any) -> Any:
        """One effect's sentence, by its reason."""
        say, code, replace = self.say, self.code, self.replace
        reason, cls = e["reason"], code(e["builder"])
        party = self.party(e, cls)
        before, after = code(e["before"] or "-"), code(e["after"] or "-")
        if reason == "condition-shift":
            return say(CONDITION_SHIFT, when=code(e["when"]), unless=code(e["unless"]),
                       cls=cls, before=before, after=after)
        if reason == "more-batches-captured":
            gain = words.get("raise_gain")
            said = say(GAIN_WORDED, party=party, gain=replace(replace(
                gain, "{before}", before), "{after}", after)) if gain else \
                say(GAIN_UP, party=party, before=before, after=after)
            return self.concat(said, self.basis_note(e, after))
        if reason == "correctness-risk":
            pays = PAYS_AUDIT.get(e["audit"])
            if pays is not None:
                return say(pays, party=party, cls=cls)
            risk = words.get("raise_risk")
            if risk:
                return say(PAYS_WORDED, party=party, risk=replace(risk, "{cls}", cls))
            return say(PAYS_RAISE, party=party, cls=cls)
        if reason == "correctness-fix":
            gain = words.get("lower_gain")
            said = say(GAIN_WORDED, party=party, gain=replace(replace(replace(
                gain, "{cls}", cls), "{before}", before), "{after}", after)) if gain else \
                say(GAIN_FIX, party=party, cls=cls, before=before, after=after)
            return self.concat(said, self.basis_note(e, after))
        if reason == "fewer-batches-captured":
            cost = words.get("lower_cost")
            said = say(PAYS_COST_WORDED, party=party, cost=cost) if cost else \
                say(PAYS_LOWER, party=party)
            return self.concat(said, self.basis_note(e, after))
        if reason == "no-gain-not-ready":
            return self.concat(say(NO_GAIN_NOT_READY, party=party, cls=cls, before=before,
                                   after=after), self.basis_note(e, after))
        if reason == "left-stale":
            return say(LEFT_STALE, party=party, cls=cls, attr=code(e["stale_attr"] or "?"),
                       before=before, after=after)
        return self.neutral(e, reason, cls, before, after, holder, holders)

    def neutral(self, e: Mapping[str, Any], reason: str, cls: Any, before: Any, after: Any,
                holder: Any, holders: Any) -> Any:
        """The sentence of an effect that nobody gains or pays by, or an unknown one."""
        say, code = self.say, self.code
        if reason == "same-as-default":
            return say(SAME_AS_DEFAULT, cls=cls, after=code(e["after"] or "-"))
        if reason == "new-holder":
            return say(NEW_HOLDER, holders=holders, cls=cls,
                       after=code(e["level_after"] or "-"))
        if reason == "new-builder":
            return say(NEW_BUILDER, holder=holder, holders=holders, cls=cls,
                       after=code(e["level_after"] or "-"))
        if reason == "class-removed":
            return say(CLASS_REMOVED, cls=cls, before=code(e["level_before"] or "-"))
        only = CLASS_ONLY.get(reason)
        if only is not None:
            return say(only, cls=cls)
        if reason == "kind-no-effect":
            return say(KIND_NO_EFFECT, cls=cls, before=before, after=after)
        if reason == "bool-value":
            return say(BOOL_VALUE, before=before, after=after)
        return say(EXPRESSION, cls=cls, after=code(e["after"] or "-"))

    def builders(self, add: Callable[[str], None], risks: Any, profile: Mapping[str, Any],
                 holder: Any, holders: Any) -> None:
        """Each changed class, then its effects."""
        say, code, shown = self.say, self.code, self.shown
        li, li2, end, ul, end_ul, end_li = (self.li, self.li2, self.end, self.ul, self.end_ul,
                                            self.end_li)
        words: Mapping[str, Any] = profile["wording"]
        for b in risks.builders:
            holder_word = self.capfirst(holder if b["holder"] else say(CLASS))
            platforms = b["platforms"]
            head = say(BUILDER_PLATFORMS, holder=holder_word, cls=code(b["class_name"]),
                       file=code(b["file"]), platforms=self.join(platforms)) if platforms \
                else say(BUILDER_NO_PLATFORM, holder=holder_word, cls=code(b["class_name"]),
                         file=code(b["file"]))
            add(f"{li}{shown(head)}")
            if not b["holder"]:
                add(str(shown(say(NOT_HOLDER, holder=holder,
                                  bases=self.codes(profile["builder_bases"], self.lsep)))))
            add("\n")
            if b["effects"]:
                add(f"{ul}\n")
                for e in b["effects"]:
                    add(f"{li2}{shown(self.effect(e, words, holder, holders))}{end}\n")
                add(f"{end_ul}\n")
            add(f"{end_li}\n")

    def platforms_and_features(self, add: Callable[[str], None], risks: Any,
                               pr_text: Any) -> None:
        """The platforms of the code (portable code, platforms only the title names), then
        the features and where each was named."""
        say, shown, li, colon, semi = self.say, self.shown, self.li, self.colon, self.semi
        platforms, portable, titled = risks.platforms, risks.portable, risks.title_platforms
        add(f"{li}{shown(say(PLATFORMS))}{colon}")
        if platforms:
            add(str(shown(self.join(platforms))))
        elif portable:
            add(str(shown(say(PORTABLE, label=portable))))
        else:
            add(str(shown(say(NO_PLATFORM))))
        if platforms and portable:
            add(f"{semi}{shown(say(ALSO_PORTABLE, label=portable))}")
        if titled:
            add(f"{semi}{shown(say(TITLE_ONLY, names=self.join(titled)))}")
        add(self.end_blank)
        labels, getitem, sep = self.labels, self.getitem, self.sep
        add(f"{li}{shown(getitem(labels.features_from, pr_text))}{colon}")
        if risks.features:
            found_in = labels.found_in
            add(sep.join(
                f"{shown(ft['label'])}{self.lp}"
                f"{sep.join(str(shown(getitem(found_in, w))) for w in ft['where'])}{self.rp}"
                for ft in risks.features))
        else:
            add(str(shown(say(NONE))))
        add(self.end_blank)

    def audit(self, add: Callable[[str], None], risks: Any, profile: Mapping[str, Any]) -> None:
        """The audit's readings, the core path rule and paths, the audit's findings."""
        say, code, codes, shown, lsep = self.say, self.code, self.codes, self.shown, self.lsep
        li, li2, end = self.li, self.li2, self.end
        for g in risks.readings:
            said = say(READINGS.get(g["state"], READING_UNKNOWN),
                       classes=codes(g["classes"], lsep), levels=codes(g["levels"], lsep))
            add(f"{li}{shown(said)}{end}\n")
        rule = risks.core_rule
        if rule["applies"]:
            said = say(CORE_RULE, prefixes=codes(rule["prefixes"], lsep), why=rule["why"],
                       files=codes(rule["files"], lsep))
            add(f"{li}{shown(said)}{end}\n")
        if risks.core_paths:
            add(f"{li}{shown(say(CORE_PATHS))}{self.colon}"
                f"{shown(codes(risks.core_paths, lsep))}{end}\n")
        findings = risks.findings
        add(f"{li}{shown(say(AUDIT))}{self.colon}")
        if findings:
            add(str(shown(say(FINDINGS, n=len(findings)))))
        else:
            add(str(shown(say(NO_FINDING if profile["rules"] else NO_RULE))))
        add("\n")
        if findings:
            add(f"{self.ul}\n")
            for fd in findings:
                said = say(FINDING, rule=code(fd["rule"]), cls=code(fd["class"]),
                           file=code(fd["file"]), message=self.concat(
                               self.labels.lq, self.text(fd["message"]), self.labels.rq))
                fixed = fd["fixed_by"]
                if fixed:
                    number = fixed["number"]
                    by = self.concat("#", number) if number is not None else \
                        say(FIXED_BY_COMMIT, sha=code((fixed["commit"] or "")[:12]))
                    note = say(FIXED_BY, by=by, date=self.format_date(fixed["date"]))
                else:
                    note = say(NOT_FIXED)
                add(f"{li2}{shown(said)}{shown(note)}{end}\n")
            add(f"{self.end_ul}\n")
        add(f"{self.end_li}\n")

    def tags(self, add: Callable[[str], None], risks: Any, words: Mapping[str, Any]) -> None:
        """The risk tags, then each with its reason and details."""
        say, shown, label, colon = self.say, self.shown, self.label, self.colon
        tags = risks.tags
        add(f"{self.li}{shown(say(RISK_TAGS))}{colon}")
        if tags:
            add(self.sep.join(str(shown(label(tg["code"], "risk_tags"))) for tg in tags))
        else:
            add(str(shown(say(NONE))))
        add("\n")
        if tags:
            add(f"{self.ul}\n")
            core_tag = words.get("core_tag")
            tag_why: Mapping[str, Any] = self.labels.tag_why
            for tg in tags:
                tag = tg["code"]
                why = core_tag if tag == "core-path" and core_tag else tag_why.get(tag, tag)
                add(f"{self.li2}{shown(label(tag, 'risk_tags'))}{colon}{shown(why)}")
                details = tg["details"]
                if details:
                    said = self.join(details) if tag == "platform-specific" else \
                        self.codes(details, self.lsep)
                    add(f"{self.lp}{shown(said)}{self.rp}")
                add(self.end_blank)
            add(f"{self.end_ul}\n")
        add(f"{self.end_li}\n")

    def __call__(self, risks: Any, pr_text: Any, profile: Mapping[str, Any], holder: Any,
                 holders: Any) -> str:
        parts: list[str] = [f"{self.ul}\n"]
        add = parts.append
        self.builders(add, risks, profile, holder, holders)
        self.platforms_and_features(add, risks, pr_text)
        self.audit(add, risks, profile)
        self.tags(add, risks, profile["wording"])
        add(self.end_ul)
        return self.made("".join(parts))
