"""The words of rule ``cg-uniform-without-spec-decode`` in reports.

The report's templates and catalogs say what any consistency-audit rule says, in generic
words ("the audit rule reads it as meeting its condition"). A rule module words those same
messages its own way: :data:`MESSAGES` maps each generic catalog message (its English msgid)
to this rule's English and Chinese text, and, where a report about a commit without a pull
request words it differently, to that text too (the catalog's ``msgctxt "commit"``). Its
``%(name)s`` placeholders are the generic message's (a subset is allowed);
``tests/test_rule_words.py`` holds both to that.
"""

# ruff: noqa: E501  (a message is one line, as in the catalogs)

from __future__ import annotations

from .. import Words

#: the title of the matrix column of what the rule reads of a builder (yes, no, n/a)
COLUMN = "Spec decode"

MESSAGES: dict[str, Words] = {
    "Audit input: %(cls)s declares %(attr)s = %(value)s, which the audit rule reads as meeting its condition.": Words(
        en="Threshold mechanism: %(cls)s declares %(attr)s = %(value)s, so its decode threshold grows to 1 + the number of speculative tokens under speculative decoding.",
        zh="阈值机制：%(cls)s 声明了 %(attr)s = %(value)s，因此在推测解码下其 decode 阈值会增大到 1 加推测词元数。",
    ),
    "Audit input: %(cls)s declares %(attr)s = %(value)s, the default, which the audit rule reads as not meeting its condition.": Words(
        en="Threshold mechanism: %(cls)s declares %(attr)s = %(value)s, the default, so its decode threshold stays 1 even under speculative decoding.",
        zh="阈值机制：%(cls)s 声明的 %(attr)s = %(value)s 是默认值，因此即使开启推测解码，其 decode 阈值仍为 1。",
    ),
    "Audit input: %(cls)s declares %(attr)s = %(value)s; whether that meets the audit rule's condition cannot be read from that value.": Words(
        en="Threshold mechanism: %(cls)s declares %(attr)s = %(value)s; whether its decode threshold grows cannot be read from that value.",
        zh="阈值机制：%(cls)s 声明了 %(attr)s = %(value)s，但无法从该值看出其 decode 阈值是否会增大。",
    ),
    "Audit input: %(cls)s calls %(call)s with %(flag)s, which the audit rule reads as meeting its condition.": Words(
        en="Threshold mechanism: %(cls)s calls %(call)s with %(flag)s, so its decode threshold grows with the number of speculative tokens.",
        zh="阈值机制：%(cls)s 以 %(flag)s 调用 %(call)s，因此其 decode 阈值会随推测词元数增大。",
    ),
    "Audit input: %(cls)s calls %(call)s without %(flag)s, which the audit rule reads as not meeting its condition.": Words(
        en="Threshold mechanism: %(cls)s calls %(call)s without %(flag)s, so its decode threshold does not grow under speculative decoding.",
        zh="阈值机制：%(cls)s 调用 %(call)s 时没有传入 %(flag)s，因此在推测解码下其 decode 阈值不会增大。",
    ),
    "Audit input: %(cls)s calls %(call)s; whether that meets the audit rule's condition cannot be read from the lines shown.": Words(
        en="Threshold mechanism: %(cls)s calls %(call)s; whether its decode threshold grows cannot be read from the lines shown.",
        zh="阈值机制：%(cls)s 调用了 %(call)s，但从所显示的行无法看出其 decode 阈值是否会增大。",
    ),
    "Audit input: %(cls)s sets %(attr)s to %(value)s, which the audit rule reads as meeting its condition.": Words(
        en="Threshold mechanism: %(cls)s sets %(attr)s to %(value)s, which grows with the number of speculative tokens.",
        zh="阈值机制：%(cls)s 把 %(attr)s 设为 %(value)s，该值随推测词元数增大。",
    ),
    "Audit input: %(cls)s sets %(attr)s to %(value)s; the lines shown do not tell whether that meets the audit rule's condition.": Words(
        en="Threshold mechanism: %(cls)s sets %(attr)s to %(value)s; the lines shown do not tell whether that value rises with the number of speculative tokens.",
        zh="阈值机制：%(cls)s 把 %(attr)s 设为 %(value)s；从所显示的代码行看不出该值是否随推测词元数增加。",
    ),
    "Audit input: after the %(method)s of %(cls)s, %(attr)s is %(value)s.": Words(
        en="Threshold mechanism: after the %(method)s of %(cls)s, %(attr)s is %(value)s.",
        zh="阈值机制：%(cls)s 的 %(method)s 执行完后，%(attr)s 为 %(value)s。",
    ),
    "Audit input: %(cls)s declares %(attr)s = %(value)s in its class body.": Words(
        en="Threshold mechanism: %(cls)s declares %(attr)s = %(value)s in its class body.",
        zh="阈值机制：%(cls)s 在类体中声明 %(attr)s = %(value)s。",
    ),
    " A constant (%(n)s): it does not depend on the run-time configuration.": Words(
        en=" A constant: it does not change with the number of speculative tokens, and requests of up to %(n)s tokens count as decodes.",
        zh="它是常量：不随推测 token 数变化，query 长度不超过 %(n)s 的请求都按 decode 处理。",
    ),
    " A constant: it does not depend on the run-time configuration.": Words(
        en=" A constant: it does not change with the number of speculative tokens.",
        zh="它是常量：不随推测 token 数变化。",
    ),
    " The consistency audit reads it as meeting the rule's condition.": Words(
        en=" The consistency audit counts it as able to grow under speculative decoding.",
        zh="一致性审计将其计为在推测解码下可以增大。",
    ),
    " The consistency audit reads it as not meeting the rule's condition.": Words(
        en=" The consistency audit reads that it cannot grow under speculative decoding.",
        zh="一致性审计认定它在推测解码下无法增大。",
    ),
    "Audit input: %(cls)s is the root class of the audit and sets no value the audit rule reads.": Words(
        en="Threshold mechanism: %(cls)s is the base class of every builder and sets no decode threshold itself.",
        zh="阈值机制：%(cls)s 是所有构建器的基类，本身不设置 decode 阈值。",
    ),
    "Audit input: %(cls)s sets no value the audit rule reads, and no class it derives from sets one.": Words(
        en="Threshold mechanism: %(cls)s sets no decode threshold itself, and no class it derives from sets one.",
        zh="阈值机制：%(cls)s 本身不设置 decode 阈值，它的各级父类也都没有设置。",
    ),
    "Audit input: %(cls)s sets no value the audit rule reads itself; the base class's default %(value)s applies.": Words(
        en="Threshold mechanism: %(cls)s sets no decode threshold itself; the base class's default %(value)s applies.",
        zh="阈值机制：%(cls)s 本身不设置 decode 阈值，适用基类的默认值 %(value)s。",
    ),
    "Audit input: %(cls)s sets no value the audit rule reads itself; it inherits %(value)s from %(base)s in %(file)s.": Words(
        en="Threshold mechanism: %(cls)s sets no decode threshold itself; it inherits %(value)s from %(base)s in %(file)s.",
        zh="阈值机制：%(cls)s 本身不设置 decode 阈值，它从 %(file)s 中的 %(base)s 继承 %(value)s。",
    ),
    "Audit input: %(cls)s sets no value the audit rule reads itself; where that value comes from was not read (no reading of the class hierarchy at this commit).": Words(
        en="Threshold mechanism: %(cls)s sets no decode threshold itself; where its threshold comes from was not read (no reading of the class hierarchy at this commit).",
        zh="阈值机制：%(cls)s 本身不设置 decode 阈值；其阈值从何而来未被读取（没有该提交处类继承关系的读取结果）。",
    ),
    "Audit input: the patch shows no line of it for %(cls)s, so from the patch alone it is unknown whether %(cls)s meets the audit rule's condition.": Words(
        en="Threshold mechanism: the patch shows no line of it for %(cls)s, so from the patch alone it is unknown whether its decode threshold grows.",
        zh="阈值机制：补丁中没有显示 %(cls)s 的相关代码行，因此仅凭补丁无法得知其 decode 阈值是否会增大。",
    ),
    "Reading: the consistency audit at this PR's commit reads %(cls)s as meeting its rule for %(levels)s.": Words(
        en="Reading: the consistency audit at this PR's commit reads that the threshold of %(cls)s grows under speculative decoding, as %(levels)s needs.",
        zh="解读：在该 PR 的提交上，一致性审计认定 %(cls)s 的阈值会在推测解码下增大，符合 %(levels)s 的要求。",
        commit=("Reading: the consistency audit at this commit reads that the threshold of %(cls)s grows under speculative decoding, as %(levels)s needs.",
                "解读：在该提交上，一致性审计认定 %(cls)s 的阈值会在推测解码下增大，符合 %(levels)s 的要求。"),
    ),
    "Reading: the consistency audit reads %(cls)s as not meeting its rule while %(levels)s is declared.": Words(
        en="Reading: the consistency audit reads that the threshold of %(cls)s cannot grow while %(levels)s is declared, so full-graph capture with speculative decoding on meets query lengths above it.",
        zh="解读：一致性审计认定 %(cls)s 声明了 %(levels)s，阈值却无法增大，因此开启推测解码时的完整图捕获会遇到超过阈值的 query 长度。",
    ),
    "Reading: the consistency audit's rule does not apply to %(cls)s.": Words(
        en="Reading: %(cls)s reorders no batch by a decode threshold, so the speculative-decoding rule does not apply to it.",
        zh="解读：%(cls)s 不按 decode 阈值重排批次，推测解码规则对它不适用。",
    ),
    "users of %(cls)s whom the audit rule is about, where %(when)s holds and %(unless)s does not": Words(
        en="users who run %(cls)s with speculative decoding (MTP, EAGLE) where %(when)s holds and %(unless)s does not",
        zh="在 %(when)s 成立且 %(unless)s 不成立时，开启推测解码（MTP、EAGLE）并使用 %(cls)s 的用户",
    ),
    "users of %(cls)s whom the audit rule is about": Words(
        en="users who run %(cls)s with speculative decoding (MTP, EAGLE)",
        zh="开启推测解码（MTP、EAGLE）并使用 %(cls)s 的用户",
    ),
    "Who pays: %(party)s; the consistency audit flags %(cls)s for this level.": Words(
        en="Who pays: %(party)s; the consistency audit flags %(cls)s, so full-graph capture can fail once speculative decoding is on.",
        zh="承担代价：%(party)s。一致性审计标记了 %(cls)s，开启推测解码后完整图捕获可能失败。",
    ),
    "Who pays: %(party)s, if %(cls)s cannot really handle what the higher level claims; the consistency audit reads it as meeting its rule, so that risk is checked.": Words(
        en="Who pays: %(party)s, if %(cls)s cannot really handle the newly captured batches; the consistency audit reads that its decode threshold grows under speculative decoding, so that risk is checked.",
        zh="承担代价：%(party)s，前提是 %(cls)s 实际处理不了新捕获的批次；一致性审计认定其 decode 阈值会在推测解码下增大，这一风险已经过检查。",
    ),
    "Who pays: %(party)s; the consistency audit reads %(cls)s as not meeting its rule for this level.": Words(
        en="Who pays: %(party)s; the consistency audit reads that the decode threshold of %(cls)s cannot grow, so capture with speculative decoding on meets query lengths above it.",
        zh="承担代价：%(party)s。一致性审计认定 %(cls)s 的 decode 阈值无法增大，开启推测解码时的捕获会遇到超过阈值的 query 长度。",
    ),
    "Who pays: %(party)s, if %(cls)s cannot really handle what the higher level claims; the consistency audit's rule does not apply to it.": Words(
        en="Who pays: %(party)s, if %(cls)s cannot really handle the newly captured batches; it reorders no batch by a decode threshold, so the speculative-decoding rule does not apply to it.",
        zh="承担代价：%(party)s，前提是 %(cls)s 实际处理不了新捕获的批次；它不按 decode 阈值重排批次，推测解码规则对它不适用。",
    ),
    "Who pays: %(party)s, if %(cls)s cannot really handle what the higher level claims; the consistency audit has not checked it, so this is unknown.": Words(
        en="Who pays: %(party)s, if %(cls)s cannot really handle the newly captured batches; the consistency audit has not checked it, so this is unknown.",
        zh="承担代价：%(party)s，前提是 %(cls)s 实际处理不了新捕获的批次；一致性审计没有检查它，因此尚不清楚。",
    ),
    "Who gains: nobody among %(party)s: the consistency audit reads %(cls)s as not meeting its rule, so the higher level it claims does not hold (%(before)s → %(after)s).": Words(
        en="Who gains: nobody among %(party)s: the consistency audit reads that the decode threshold of %(cls)s cannot grow, so the newly claimed batches fail at capture instead of running in full graphs (%(before)s → %(after)s).",
        zh="受益方：%(party)s 中没有人受益：一致性审计认定 %(cls)s 的 decode 阈值无法增大，新声明的批次会在捕获时失败，而不是以完整 CUDA Graph 运行（%(before)s → %(after)s）。",
    ),
    "Consistency audit at this PR's commit: %(classes)s meets its rule for %(levels)s.": Words(
        en="Consistency audit at this PR's commit: the decode threshold of %(classes)s grows under speculative decoding, as %(levels)s needs.",
        zh="本 PR 提交处的一致性审计：%(classes)s 的 decode 阈值在推测解码下可以增大，满足 %(levels)s 的要求。",
        commit=("Consistency audit at this commit: the decode threshold of %(classes)s grows under speculative decoding, as %(levels)s needs.",
                "该提交处的一致性审计：%(classes)s 的 decode 阈值在推测解码下可以增大，满足 %(levels)s 的要求。"),
    ),
    "Consistency audit: %(classes)s does not meet its rule while %(levels)s is declared.": Words(
        en="Consistency audit: the decode threshold of %(classes)s cannot grow under speculative decoding while %(levels)s is declared, so full-graph capture with speculative decoding on meets query lengths above the threshold.",
        zh="一致性审计：%(classes)s 声明了 %(levels)s，但其 decode 阈值在推测解码下无法增大，因此开启推测解码时完整 CUDA Graph 捕获会遇到超过阈值的 query 长度。",
    ),
    "Consistency audit at this PR's commit: the rule for %(levels)s does not apply to %(classes)s.": Words(
        en="Consistency audit at this PR's commit: %(classes)s does not reorder batches by a decode threshold, so the speculative-decoding rule for %(levels)s does not apply.",
        zh="本 PR 提交处的一致性审计：%(classes)s 不按 decode 阈值重排批次，因此关于 %(levels)s 的推测解码规则不适用。",
        commit=("Consistency audit at this commit: %(classes)s does not reorder batches by a decode threshold, so the speculative-decoding rule for %(levels)s does not apply.",
                "该提交处的一致性审计：%(classes)s 不按 decode 阈值重排批次，因此关于 %(levels)s 的推测解码规则不适用。"),
    ),
    "Consistency of %(classes)s (declared %(levels)s): unknown, not checked; the knowledge base holds no consistency-audit reading for this PR.": Words(
        en="Speculative-decoding readiness of %(classes)s (declared %(levels)s): unknown, not checked; the knowledge base holds no consistency-audit reading for this PR.",
        zh="%(classes)s（声明为 %(levels)s）的推测解码就绪情况：未知，未检查；知识库中没有该 PR 的一致性审计结果。",
        commit=("Speculative-decoding readiness of %(classes)s (declared %(levels)s): unknown, not checked; the knowledge base holds no consistency-audit reading for this commit.",
                "%(classes)s（声明为 %(levels)s）的推测解码就绪情况：未知，未检查；知识库中没有该提交的一致性审计结果。"),
    ),
    "A performance change the consistency audit reads as consistent at this PR's commit: read it closely and verify the raised level on the affected code.": Words(
        en="A performance change the consistency audit reads as consistent (at this PR's commit the builder's decode threshold grows under speculative decoding): read it closely and verify full-graph capture with speculative decoding on.",
        zh="一致性审计认为一致的性能变更（在本 PR 的提交处，构建器的 decode 阈值在推测解码下可以增大）：值得精读，并在开启推测解码时验证完整 CUDA Graph 捕获。",
        commit=("A performance change the consistency audit reads as consistent (at this commit the builder's decode threshold grows under speculative decoding): read it closely and verify full-graph capture with speculative decoding on.",
                "一致性审计认为一致的性能变更（在该提交处，构建器的 decode 阈值在推测解码下可以增大）：值得精读，并在开启推测解码时验证完整 CUDA Graph 捕获。"),
    ),
    "A raise to a level the audit rule covers while the consistency audit reads that the class does not meet the rule: lower the level or fix the class before merging.": Words(
        en="A raise to a level that speculative decoding relies on while the consistency audit reads that the builder's decode threshold cannot grow: lower the level or let the threshold grow before merging.",
        zh="提升到推测解码所依赖的级别，而一致性审计认为该构建器的 decode 阈值无法增大：合并前应降低级别，或让阈值能够增大。",
    ),
    "A raise to a level the audit rule covers, and the consistency audit has not checked this PR: check the class against the rule before merging.": Words(
        en="A raise to a level that speculative decoding relies on, and the consistency audit has not checked this PR: check that the builder's decode threshold can grow under speculative decoding before merging.",
        zh="提升到推测解码所依赖的级别，且一致性审计尚未检查该 PR：合并前请确认该构建器的 decode 阈值在推测解码下可以增大。",
        commit=("A raise to a level that speculative decoding relies on, and the consistency audit has not checked this commit: check that the builder's decode threshold can grow under speculative decoding before relying on it.",
                "提升到推测解码所依赖的级别，且一致性审计尚未检查该提交：依赖它之前请确认该构建器的 decode 阈值在推测解码下可以增大。"),
    ),
}
