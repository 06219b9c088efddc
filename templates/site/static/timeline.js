// Filters of the timeline: hide rows that do not match every chosen value.
"use strict";
(function () {
  const form = document.getElementById("filters");
  const list = document.getElementById("timeline");
  if (!form || !list) return;
  const selects = Array.from(form.querySelectorAll("select[data-key]"));
  const rows = Array.from(list.querySelectorAll("li.pr"));
  const count = document.getElementById("f-count");
  const total = rows.length;
  const tmpl = count ? count.dataset.template || "{shown} / {total}" : "";
  const words = rows.map((row) => {
    const w = {};
    for (const s of selects) {
      const key = s.dataset.key;
      w[key] = new Set((row.dataset[key] || "").split(" ").filter(Boolean));
    }
    return w;
  });
  function apply() {
    const wanted = selects.map((s) => [s.dataset.key, s.value]).filter((kv) => kv[1]);
    let shown = 0;
    rows.forEach((row, i) => {
      const ok = wanted.every(([key, value]) => words[i][key].has(value));
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    if (count) count.textContent = tmpl.replace("{shown}", String(shown)).replace("{total}", String(total));
    const params = new URLSearchParams();
    for (const [key, value] of wanted) params.set(key, value);
    const q = params.toString();
    history.replaceState(null, "", q ? "#" + q : location.pathname);
  }
  const initial = new URLSearchParams(location.hash.slice(1));
  for (const s of selects) {
    const v = initial.get(s.dataset.key);
    if (v && Array.from(s.options).some((o) => o.value === v)) s.value = v;
    s.addEventListener("change", apply);
  }
  form.addEventListener("submit", (e) => e.preventDefault());
  apply();
})();
