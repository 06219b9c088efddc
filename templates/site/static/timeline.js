// The home page's timeline: every PR (the HTML holds the newest; timeline.json lists the
// monthly parts that hold all), and filters that hide rows not matching every chosen value:
// platform, risk tag, level change, state, builder (the builders a PR changed) and a text:
// every word of it (split at spaces, case and width folded) must match from the start of a word
// of the PR's number, title or the class names of its builders. A word starts at the start of
// the text, after a character that is no letter or digit, at a camel-case hump
// (Flash|Attention|MLA|Metadata), and at every character of a script written without spaces
// (Chinese, Japanese); a character that is no letter or digit starts a word itself. So "43"
// and "#43" match #4310 but not #14310; "attn" matches "FlashAttnBackend" and "[ROCm] attn",
// not "flashattn". The filters are kept in the address's query string (?builders=...&q=...),
// so a reload or a shared link shows the same rows. Text is set with textContent.
"use strict";
(function () {
  const form = document.getElementById("filters");
  const list = document.getElementById("timeline");
  if (!form || !list) return;
  const selects = Array.from(form.querySelectorAll("select[data-key]"));
  const text = document.getElementById("f-text");
  const count = document.getElementById("f-count");
  const tmpl = count ? count.dataset.template || "{shown} / {total}" : "";
  const stateNames = {};
  const stateSelect = document.getElementById("f-state");
  if (stateSelect) for (const o of stateSelect.options) if (o.value) stateNames[o.value] = o.textContent;
  // builder slug -> class name, for the text filter (a row names its builders by slug)
  const classOf = {};
  const builderSelect = document.getElementById("f-builder");
  if (builderSelect) for (const o of builderSelect.options) if (o.value) classOf[o.value] = o.dataset.class || "";
  let rows = [];
  let words = [];

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function row(p, labels, here) {
    const li = el("li", "pr state-" + p.st);
    li.dataset.platforms = p.pl.join(" ");
    li.dataset.tags = p.tg.join(" ");
    li.dataset.dirs = p.dr.join(" ");
    li.dataset.state = p.st;
    // a change is [class, before, after, direction, builder slug]
    li.dataset.builders = Array.from(new Set(p.c.map((c) => c[4]).filter(Boolean))).join(" ");
    const when = el("div", "when");
    const time = el("time", "", p.d || "?");
    time.dateTime = p.d;
    when.append(time, el("span", "state", stateNames[p.st] || p.st));
    const what = el("div", "what");
    const a = el("a", "title");
    a.href = here + "pr/" + encodeURIComponent(p.s) + ".html";
    a.append(el("span", "num", p.l), document.createTextNode(" " + p.t));
    what.append(a);
    if (p.c.length) {
      const ul = el("ul", "changes");
      for (const c of p.c.slice(0, 4)) {
        const item = el("li");
        item.append(el("code", "", c[0]), document.createTextNode(": " + (c[1] || "–") + " → " + (c[2] || "–") + " "),
          el("span", "dir dir-" + c[3], labels.dirs[c[3]] || c[3]));
        ul.append(item);
      }
      if (p.c.length > 4) ul.append(el("li", "", "… " + (p.c.length - 4)));
      what.append(ul);
    }
    if (p.tg.length) {
      const ul = el("ul", "tags");
      for (const t of p.tg) ul.append(el("li", "tag tag-" + t, labels.tags[t] || t));
      what.append(ul);
    }
    li.append(when, what);
    return li;
  }

  // case and width folded, a character at a time (as the rows' text: a final sigma stays σ)
  const fold = (s) => Array.from(s.normalize("NFKC"), (c) => c.toLowerCase()).join("");
  const WORD = /[\p{L}\p{N}]/u;
  const UPPER = /\p{Lu}/u;
  const LOWER = /\p{Ll}/u;
  const SPACE = /\s/u;
  const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

  // whether the character c (between prev and next, "" at the ends) starts a word
  function startsWord(prev, c, next) {
    if (SPACE.test(c)) return false;
    if (!WORD.test(c) || UNSPACED.test(c)) return true;  // "#", "[", "<"; each CJK character
    if (!prev || !WORD.test(prev)) return true;
    if (UPPER.test(c) && (LOWER.test(prev) || /\p{N}/u.test(prev))) return true;  // Flash|Attn
    return UPPER.test(c) && UPPER.test(prev) && LOWER.test(next);  // MLA|Metadata
  }

  // what the text filter reads of a row: its number and title, its builders' class names;
  // folded, with the offsets (in the folded text) where a word starts
  function haystack(r) {
    const a = r.querySelector("a.title");
    const parts = [a ? a.textContent : ""];
    for (const slug of (r.dataset.builders || "").split(" ")) if (slug && classOf[slug]) parts.push(classOf[slug]);
    const chars = Array.from(parts.join("\n").normalize("NFKC"));
    let text = "";
    const starts = new Set();
    chars.forEach((c, i) => {
      if (startsWord(chars[i - 1] || "", c, chars[i + 1] || "")) starts.add(text.length);
      text += c.toLowerCase();  // one character at a time: the offsets stay those of the text
    });
    return { text, starts };
  }

  // a (folded) term is in the text when it occurs from the start of a word
  function found(h, term) {
    for (let i = h.text.indexOf(term); i !== -1; i = h.text.indexOf(term, i + 1)) {
      if (h.starts.has(i)) return true;
    }
    return false;
  }

  function index() {
    rows = Array.from(list.querySelectorAll("li.pr"));
    words = rows.map((r) => {
      const w = {};
      for (const s of selects) w[s.dataset.key] = new Set((r.dataset[s.dataset.key] || "").split(" ").filter(Boolean));
      w.text = haystack(r);
      return w;
    });
  }

  function apply() {
    const wanted = selects.map((s) => [s.dataset.key, s.value]).filter((kv) => kv[1]);
    const raw = text ? text.value.trim() : "";
    const terms = fold(raw).split(/\s+/).filter(Boolean);
    let shown = 0;
    rows.forEach((r, i) => {
      const ok = wanted.every(([key, value]) => words[i][key].has(value))
        && terms.every((t) => found(words[i].text, t));
      r.hidden = !ok;
      if (ok) shown += 1;
    });
    if (count) count.textContent = tmpl.replace("{shown}", String(shown)).replace("{total}", String(rows.length));
    const params = new URLSearchParams();
    for (const [key, value] of wanted) params.set(key, value);
    if (raw) params.set("q", raw);
    const q = params.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
  }

  // the query string (a link written before the filters moved there may hold them after "#")
  const initial = new URLSearchParams(location.search.length > 1 ? location.search : location.hash.slice(1));
  for (const s of selects) {
    const v = initial.get(s.dataset.key);
    if (v && Array.from(s.options).some((o) => o.value === v)) s.value = v;
    s.addEventListener("change", apply);
  }
  if (text) {
    text.value = initial.get("q") || "";
    let timer = 0;
    text.addEventListener("input", () => {  // as one types, once a pause is long enough
      clearTimeout(timer);
      timer = setTimeout(apply, 120);
    });
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
  index();
  apply();
  const total = Number(list.dataset.total || "0");
  if (total > rows.length && list.dataset.src) {
    // timeline.json: the labels and the parts (one file a month, newest first)
    const base = new URL(list.dataset.src, location.href);
    const json = (r) => { if (!r.ok) throw new Error(r.status); return r.json(); };
    fetch(base).then(json).then((data) => Promise.all(
      data.parts.map((part) => fetch(new URL(part, base)).then(json))
    ).then((parts) => {
      const frag = document.createDocumentFragment();
      for (const prs of parts) {
        for (const p of prs) frag.append(row(p, data.labels, list.dataset.here || ""));
      }
      list.replaceChildren(frag);
      index();
      apply();
      list.dataset.full = "1";
    })).catch(() => { list.dataset.full = "error"; });
  } else {
    list.dataset.full = "1";
  }
})();
