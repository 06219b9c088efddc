// Search with Pagefind (index per language, Chinese words segmented by the extended build;
// in shards, merged in the browser).
// Results are built as DOM nodes: text from the index is never parsed as HTML.
const form = document.getElementById("search-form");
const input = document.getElementById("q");
const status = document.getElementById("search-status");
const results = document.getElementById("results");
let pagefind = null;

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

async function run(q) {
  results.replaceChildren();
  if (!q.trim()) { status.textContent = ""; return; }
  let pf;
  try { pf = await load(); } catch (e) { status.textContent = form.dataset.missing; return; }
  const found = await pf.search(q);
  if (!found || !found.results.length) { status.textContent = form.dataset.none; return; }
  status.textContent = String(found.results.length);
  const items = await Promise.all(found.results.slice(0, 30).map((r) => r.data()));
  for (const item of items) {
    const href = safeHref(item.url);
    if (!href) continue;
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = href;
    a.textContent = (item.meta && item.meta.title) || item.url;
    const p = document.createElement("p");
    p.className = "excerpt";
    p.appendChild(excerptNodes(item.excerpt));
    li.append(a, p);
    results.appendChild(li);
  }
  results.dataset.query = q;
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = input.value;
  history.replaceState(null, "", "#q=" + encodeURIComponent(q));
  run(q);
});
const initial = new URLSearchParams(location.hash.slice(1)).get("q");
if (initial) { input.value = initial; run(initial); }
