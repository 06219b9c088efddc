// The explorable PR graph: cytoscape (vendored), data from the parts graph.json next to the
// page names (../graph/<part>.json, shared by the languages), merged.
// A time axis: PRs left to right by date (merged, else closed, else opened; a node without a
// date at its neighbours'), each group in lanes of its own where no two labels overlap, with
// the dates under the drawing. A click on a PR highlights it and its neighbours and dims the
// rest (graph.html?focus=<PR> does the same on load); a second click opens its page.
// Colours come from the legend's swatches and the page's colours (site.css, light or dark),
// so the legend and the drawing agree. Labels are plain text drawn on the canvas and the
// panel is filled with textContent: a PR title never becomes HTML.
"use strict";
(function () {
  const box = document.getElementById("graph");
  if (!box || typeof cytoscape !== "function") return;
  const here = box.dataset.here || "";
  const axisBox = document.getElementById("g-axis");
  const DAY = 86400000;
  const kindOf = (n) => (n.slug ? "pr-" + (n.state || "") : "ref-" + n.kind);
  const json = (url) => fetch(url).then((r) => {
    if (!r.ok) throw new Error(url + ": " + r.status);
    return r.json();
  });
  const cssVar = (name, fallback) =>
    getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
  const swatch = (sel, fallback) => {
    const el = document.querySelector(sel);
    return el ? getComputedStyle(el).backgroundColor : fallback;
  };
  const kindColor = (kind) => swatch(`#g-legend li[data-kind="${CSS.escape(kind)}"] .swatch`, "")
    || swatch(".kind-other", "#dfe3e8");
  const relColor = (type) => swatch(`#g-legend li[data-rel="${CSS.escape(type)}"] .swatch`, "#5f6b7a");

  function style() {
    const fg = cssVar("--fg", "#1d2430");
    const bg = cssVar("--graph-bg", "#fbfcfd");
    const muted = cssVar("--muted", "#5f6b7a");
    const accent = cssVar("--accent", "#2457c5");
    return [
      { selector: "node", style: { "label": "data(label)", "font-size": 11, "background-color": "data(color)",
        "border-width": 1, "border-color": muted, "color": fg, "text-valign": "bottom",
        "text-margin-y": 3, "width": 16, "height": 16, "min-zoomed-font-size": 6,
        "text-background-color": bg, "text-background-opacity": 0.85, "text-background-padding": 1 } },
      { selector: "node[href = '']", style: { "shape": "round-rectangle" } },
      { selector: "edge", style: { "width": 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)",
        "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.9 } },
      { selector: "edge.arc", style: { "curve-style": "unbundled-bezier",
        "control-point-distances": "data(arc)", "control-point-weights": 0.5 } },
      { selector: "node.near", style: { "border-width": 2, "border-color": accent } },
      { selector: "node.focused", style: { "border-width": 4, "border-color": accent, "font-weight": "bold" } },
      { selector: "edge.near", style: { "width": 2.6 } },
      { selector: ".faded, .dimmed", style: { "opacity": 0.12 } },
      { selector: ".off", style: { "display": "none" } },
    ];
  }

  json(box.dataset.src).then((index) => Promise.all(
    index.parts.map((p) => json(new URL(p, new URL(box.dataset.src, location.href)).href))
  )).then((parts) => {
    const data = { nodes: [], edges: [] };
    for (const part of parts) {
      for (const n of part.nodes) data.nodes.push(n);
      for (const e of part.edges) data.edges.push(e);
    }
    const elements = [];
    for (const n of data.nodes) {
      const kind = kindOf(n);
      elements.push({ data: { id: n.id, label: n.label, title: n.title, kind: kind, color: kindColor(kind),
        slug: n.slug || "", date: n.date || "",
        href: n.slug ? here + "pr/" + encodeURIComponent(n.slug) + ".html" : "" } });
    }
    data.edges.forEach((e, i) => {  // [source, target, type, confidence]
      elements.push({ data: { id: "e" + i, source: e[0], target: e[1], type: e[2], color: relColor(e[2]) } });
    });
    const cy = cytoscape({ container: box, elements: elements, minZoom: 0.05, maxZoom: 4, style: style() });
    // the colours again when the reader's system switches between light and dark
    const scheme = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    if (scheme && scheme.addEventListener) scheme.addEventListener("change", () => {
      cy.batch(() => {
        cy.nodes().forEach((n) => { n.data("color", kindColor(n.data("kind"))); });
        cy.edges().forEach((e) => { e.data("color", relColor(e.data("type"))); });
      });
      cy.style(style());
    });
    // the largest connected group of PRs is shown first; the others behind a switch
    const groups = cy.elements().components().sort((a, b) => b.nodes().length - a.nodes().length);
    const all = document.getElementById("g-all");
    let axis = [];  // [day (ms), x] of each day a shown node is placed at, oldest first

    const dayOf = (n) => {
      const t = n.data("date") ? Date.parse(n.data("date") + "T00:00:00Z") : NaN;
      return Number.isNaN(t) ? null : t;
    };

    // The time axis: a node's x is its day's; the days apart by a step that grows with the
    // time between them (a long quiet stretch does not squeeze the busy weeks). Each group
    // gets lanes of its own below the previous group's; a node goes in the free lane nearest
    // its placed neighbours', free where its box (with its label) ends left of the node.
    function layout() {
      const shown = cy.elements().not(".off");
      const nodes = shown.nodes();
      const day = new Map();
      nodes.forEach((n) => { const t = dayOf(n); if (t !== null) day.set(n.id(), t); });
      for (let pass = 0; pass < 3; pass++) {
        nodes.forEach((n) => {
          if (day.has(n.id())) return;
          const ts = n.neighborhood().nodes().filter((m) => day.has(m.id())).map((m) => day.get(m.id()))
            .sort((a, b) => a - b);
          if (ts.length) day.set(n.id(), ts[Math.floor((ts.length - 1) / 2)]);
        });
      }
      const known = Array.from(day.values());
      const first = known.length ? Math.min.apply(null, known) : 0;
      nodes.forEach((n) => { if (!day.has(n.id())) day.set(n.id(), first); });
      const days = Array.from(new Set(day.values())).sort((a, b) => a - b);
      const xOf = new Map();
      let x = 0;
      days.forEach((d, i) => {
        if (i) x += 36 + 26 * Math.log2(1 + (d - days[i - 1]) / DAY);
        xOf.set(d, x);
      });
      axis = days.filter((d) => nodes.some((n) => dayOf(n) === d)).map((d) => [d, xOf.get(d)]);
      const size = new Map();
      let height = 0;
      nodes.forEach((n) => {
        const bb = n.boundingBox({ includeLabels: true, includeOverlays: false });
        size.set(n.id(), bb.w);
        height = Math.max(height, bb.h);
      });
      const laneH = height + 14;
      const pos = {};
      let top = 0;  // the first lane of the next group
      for (const g of groups) {
        const members = g.nodes().filter((n) => nodes.contains(n));
        if (!members.length) continue;
        const order = members.toArray().sort((a, b) =>
          xOf.get(day.get(a.id())) - xOf.get(day.get(b.id())) || b.degree() - a.degree()
          || (a.id() < b.id() ? -1 : 1));
        const right = new Map();  // lane -> right edge of its last box
        const laneOf = new Map();
        for (const n of order) {
          const cx = xOf.get(day.get(n.id()));
          const half = size.get(n.id()) / 2;
          const near = n.neighborhood().nodes().filter((m) => laneOf.has(m.id())).map((m) => laneOf.get(m.id()));
          const want = near.length ? Math.round(near.reduce((a, b) => a + b, 0) / near.length) : 0;
          let lane = want;
          for (let k = 0; ; k++) {
            const fits = (l) => !right.has(l) || right.get(l) + 10 <= cx - half;
            if (fits(want + k)) { lane = want + k; break; }
            if (k && fits(want - k)) { lane = want - k; break; }
          }
          right.set(lane, cx + half);
          laneOf.set(n.id(), lane);
        }
        const lanes = Array.from(laneOf.values());
        const low = Math.min.apply(null, lanes);
        for (const [id, lane] of laneOf) pos[id] = { x: xOf.get(day.get(id)), y: (top + lane - low) * laneH };
        top += Math.max.apply(null, lanes) - low + 2;
      }
      nodes.layout({ name: "preset", positions: (n) => pos[n.id()], fit: false, animate: false }).run();
      // a relation between two PRs of one lane with others between them: an arc over them
      const byLane = new Map();
      nodes.forEach((n) => {
        const y = pos[n.id()].y;
        if (!byLane.has(y)) byLane.set(y, []);
        byLane.get(y).push(pos[n.id()].x);
      });
      cy.batch(() => shown.edges().forEach((e) => {
        const a = pos[e.source().id()], b = pos[e.target().id()];
        const lo = Math.min(a.x, b.x), hi = Math.max(a.x, b.x);
        if (a.y === b.y && byLane.get(a.y).some((x) => x > lo && x < hi)) {
          e.data("arc", (b.x > a.x ? -1 : 1) * Math.min(24 + (hi - lo) * 0.15, laneH * 2.5));
          e.addClass("arc");
        } else e.removeClass("arc");
      }));
      view(shown);
    }

    // the whole drawing (a small one not blown up), or from its newest end when all of it
    // would make the labels too small
    function view(eles) {
      cy.fit(eles, 30);
      const readable = 0.6;
      if (cy.zoom() > 1.5) {
        cy.zoom(1.5);
        cy.center(eles);
      } else if (cy.zoom() < readable) {
        const bb = eles.boundingBox();
        cy.zoom(readable);
        cy.pan({ x: box.clientWidth - 30 - bb.x2 * readable, y: box.clientHeight / 2 - (bb.y1 + bb.y2) / 2 * readable });
      }
      drawAxis();
    }

    // the dates of the days nodes are placed at, under the drawing: as many as fit apart
    function drawAxis() {
      if (!axisBox) return;
      axisBox.replaceChildren();
      const z = cy.zoom();
      const pan = cy.pan();
      const off = box.getBoundingClientRect().left + box.clientLeft
        - axisBox.getBoundingClientRect().left - axisBox.clientLeft;
      const width = axisBox.clientWidth;
      let last = -Infinity;
      for (const [d, x] of axis) {
        const sx = x * z + pan.x + off;
        if (sx < 0 || sx > width || sx - last < 24) continue;
        const tick = document.createElement("span");
        tick.className = "tick";
        const time = document.createElement("time");
        time.dateTime = new Date(d).toISOString().slice(0, 10);
        time.textContent = time.dateTime;
        tick.append(time);
        tick.style.left = sx + "px";
        axisBox.append(tick);
        const w = tick.offsetWidth;
        if (sx - w / 2 < 0 || sx + w / 2 > width || sx - w / 2 < last + 8) { tick.remove(); continue; }
        last = sx + w / 2;
      }
      axisBox.dataset.ticks = String(axisBox.childElementCount);
    }
    let pending = 0;
    cy.on("viewport", () => { if (!pending) pending = requestAnimationFrame(() => { pending = 0; drawAxis(); }); });
    window.addEventListener("resize", () => { cy.resize(); drawAxis(); });

    const show = () => {
      cy.batch(() => {
        cy.elements().removeClass("off");
        if (!(all && all.checked)) groups.slice(1).forEach((g) => g.addClass("off"));
      });
      layout();
    };
    if (all) {
      if (groups.length < 2) all.closest("label").hidden = true;
      all.addEventListener("change", () => { show(); if (focused && focused.hasClass("off")) setFocus(null); });
    }

    // focus: a PR, its neighbours and the relations between them; the rest dimmed
    const panel = document.getElementById("g-focus");
    let focused = null;
    const focusKey = (n) => n.data("slug") || n.id();
    function setFocus(node, move) {
      focused = node;
      cy.batch(() => {
        cy.elements().removeClass("dimmed focused near");
        if (!node) return;
        const hood = node.closedNeighborhood();
        cy.elements().not(hood).addClass("dimmed");
        hood.addClass("near");
        node.removeClass("near").addClass("focused");
      });
      if (panel) {
        panel.hidden = !node;
        if (node) {
          document.getElementById("g-focus-label").textContent = node.data("label");
          document.getElementById("g-focus-title").textContent = node.data("title") || "";
          const open = document.getElementById("g-focus-open");
          open.hidden = !node.data("href");
          if (node.data("href")) open.href = node.data("href");
        }
      }
      const params = new URLSearchParams(location.search);
      if (node) params.set("focus", focusKey(node)); else params.delete("focus");
      const q = params.toString();
      history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
      box.dataset.focus = node ? node.id() : "";
      if (node && move) {
        cy.fit(node.closedNeighborhood(), 60);
        if (cy.zoom() > 1.6) { cy.zoom(1.6); cy.center(node); }
      }
    }
    const clear = document.getElementById("g-focus-clear");
    if (clear) clear.addEventListener("click", () => setFocus(null));

    // ?focus=47144 (a PR's page name, a number with or without "#", or a node's id)
    const wanted = new URLSearchParams(location.search).get("focus");
    let start = null;
    if (wanted) {
      const w = wanted.replace(/^#/, "");
      start = cy.nodes().filter((n) => n.data("slug") === w || n.id() === w || n.id() === "pr:" + w).first();
      if (start.empty()) start = null;
      if (start && all && groups[0] && !groups[0].contains(start)) all.checked = true;
    }
    show();
    if (start) setFocus(start, true);

    cy.on("tap", "node", (ev) => {
      const n = ev.target;
      if (focused && focused.same(n)) {
        const href = n.data("href");
        if (href) window.location.assign(href);
        return;
      }
      setFocus(n, false);
    });
    cy.on("tap", (ev) => { if (ev.target === cy) setFocus(null); });
    cy.on("mouseover", "node", (ev) => { box.title = ev.target.data("label") + " " + ev.target.data("title"); });
    const type = document.getElementById("g-type");
    const rows = Array.from(document.querySelectorAll("#edges tbody tr"));
    if (type) type.addEventListener("change", () => {
      const t = type.value;
      cy.elements().removeClass("faded");
      if (t) {
        const keep = cy.edges().filter((e) => e.data("type") === t);
        cy.elements().difference(keep.union(keep.connectedNodes())).addClass("faded");
      }
      for (const r of rows) r.hidden = !!t && r.dataset.type !== t;
    });
    const fit = document.getElementById("g-fit");
    if (fit) fit.addEventListener("click", () => {
      cy.fit(cy.elements().not(".off"), 30);
      if (cy.zoom() > 1.5) { cy.zoom(1.5); cy.center(cy.elements().not(".off")); }
    });
    box.cy = cy;  // for the browser tests
    box.dataset.ready = "1";
  }).catch(() => { box.dataset.ready = "error"; });
})();
