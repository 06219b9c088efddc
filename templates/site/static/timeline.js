// The home page's timeline: every PR (the HTML holds the newest; timeline.json lists the
// monthly parts that hold all), and filters that hide rows not matching every chosen value:
// platform, risk tag, level change, state, builder (the builders a PR changed) and a text
// (every word of it in the PR's number, title or the class names of its builders). The
// filters are kept in the address's query string (?builders=...&q=...), so a reload or a
// shared link shows the same rows. Text is set with textContent.
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

  const fold = (s) => s.normalize("NFKC").toLowerCase();

  // what the text filter reads of a row: its number and title, its builders' class names
  function haystack(r) {
    const a = r.querySelector("a.title");
    const parts = [a ? a.textContent : ""];
    for (const slug of (r.dataset.builders || "").split(" ")) if (slug && classOf[slug]) parts.push(classOf[slug]);
    return fold(parts.join("\n"));
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
        && terms.every((t) => words[i].text.includes(t));
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
