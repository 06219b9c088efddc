// Search with Pagefind (index per language, Chinese words segmented by the extended build;
// in shards, merged in the browser), as one types (after a short pause) or on Enter.
// Results come 30 at a time: "Show more" adds the next ones until all are shown. Each
// result is its title and, in a block of its own, its excerpt.
// Results are built as DOM nodes: text from the index is never parsed as HTML.
const form = document.getElementById("search-form");
const input = document.getElementById("q");
const status = document.getElementById("search-status");
const results = document.getElementById("results");
const more = document.getElementById("search-more");
const PAGE = 30;  // results shown at once, and added by each "Show more"
const PAUSE = 250;  // ms of no typing before a search starts
let pagefind = null;
let current = 0;  // the newest search; an older one that finishes later shows nothing
let found = [];  // the newest search's results (Pagefind's, each loaded when shown)
let shown = 0;

function decode(text) {
  const t = document.createElement("textarea");
  t.innerHTML = text;  // a textarea's content is text only: entities decode, tags do not run
  return t.value;
}

function excerptNodes(excerpt) {
  const frag = document.createDocumentFragment();
  const parts = String(excerpt || "").split(/(<mark>|<\/mark>)/);
  let marked = false;
  for (const part of parts) {
    if (part === "<mark>") { marked = true; continue; }
    if (part === "</mark>") { marked = false; continue; }
    const text = document.createTextNode(decode(part));
    if (marked) { const m = document.createElement("mark"); m.appendChild(text); frag.appendChild(m); }
    else frag.appendChild(text);
  }
  return frag;
}

function safeHref(url) {
  try {
    const u = new URL(url, location.href);
    if (u.origin !== location.origin) return null;
    return u.href;
  } catch (e) { return null; }
}

async function load() {
  if (pagefind) return pagefind;
  const bundle = new URL(form.dataset.bundle, location.href).href;
  const pf = await import(bundle);
  const baseUrl = new URL("../", location.href).pathname;
  await pf.options({ baseUrl });
  await pf.init();
  // the index is in shards: this bundle, and the others listed in shards.json, merged here
  const shards = await fetch(new URL("shards.json", bundle)).then((r) => r.json());
  await Promise.all(shards.map((s) => pf.mergeIndex(new URL(s, bundle).pathname, { baseUrl })));
  pagefind = pf;
  return pagefind;
}

function countText(n) {
  const t = n === 1 ? form.dataset.one : form.dataset.many;
  return (t || "{n}").replace("{n}", String(n));
}

function item(data) {
  const href = safeHref(data.url);
  if (!href) return null;
  const li = document.createElement("li");
  const a = document.createElement("a");
  a.href = href;
  a.textContent = (data.meta && data.meta.title) || data.url;
  const p = document.createElement("p");  // the excerpt: a block of its own
  p.className = "excerpt";
  p.appendChild(excerptNodes(data.excerpt));
  li.append(a, p);
  return li;
}

// the next PAGE results of search ``id``, appended (nothing when a newer search started)
async function showMore(id) {
  const next = found.slice(shown, shown + PAGE);
  const items = await Promise.all(next.map((r) => r.data()));
  if (id !== current) return;
  for (const data of items) {
    const li = item(data);
    if (li) results.appendChild(li);
  }
  shown += next.length;
  more.hidden = shown >= found.length;
  results.dataset.shown = String(shown);
}

async function run(q) {
  const id = ++current;
  if (!q.trim()) {
    found = []; shown = 0;
    results.replaceChildren(); more.hidden = true; status.textContent = "";
    delete results.dataset.query;
    return;
  }
  let pf;
  try { pf = await load(); } catch (e) {
    if (id === current) status.textContent = form.dataset.missing;
    return;
  }
  const res = await pf.search(q);
  if (id !== current) return;
  found = (res && res.results) || [];
  shown = 0;
  results.replaceChildren();
  more.hidden = true;
  status.textContent = found.length ? countText(found.length) : form.dataset.none;
  if (found.length) await showMore(id);
  if (id === current) results.dataset.query = q;
}

function remember(q) {
  history.replaceState(null, "", q ? "#q=" + encodeURIComponent(q) : location.pathname);
}

let timer = 0;
input.addEventListener("input", (e) => {
  if (e.isComposing) return;  // an input method is composing a word: wait for it
  clearTimeout(timer);
  timer = setTimeout(() => { remember(input.value); run(input.value); }, PAUSE);
});
input.addEventListener("compositionend", () => {
  clearTimeout(timer);
  timer = setTimeout(() => { remember(input.value); run(input.value); }, PAUSE);
});
form.addEventListener("submit", (e) => {
  e.preventDefault();
  clearTimeout(timer);
  remember(input.value);
  run(input.value);
});
more.addEventListener("click", () => { more.disabled = true; showMore(current).finally(() => { more.disabled = false; }); });
// a link to search.html#q=...: its query, on load and when only the address's "#" part changes
function fromHash() {
  const q = new URLSearchParams(location.hash.slice(1)).get("q");
  if (q && q !== results.dataset.query) { input.value = q; run(q); }
}
window.addEventListener("hashchange", fromHash);
fromHash();
