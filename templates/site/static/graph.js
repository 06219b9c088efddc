// The explorable PR graph: cytoscape (vendored), data from the parts graph.json next to the
// page names (../graph/<part>.json, shared by the languages), merged.
// Colours come from the legend's swatches (site.css), so the legend and the drawing agree.
// Labels are plain text drawn on the canvas: a PR title never becomes HTML.
"use strict";
(function () {
  const box = document.getElementById("graph");
  if (!box || typeof cytoscape !== "function") return;
  const here = box.dataset.here || "";
  const swatch = (sel, fallback) => {
    const el = document.querySelector(sel);
    return el ? getComputedStyle(el).backgroundColor : fallback;
  };
  const kindOf = (n) => (n.slug ? "pr-" + (n.state || "") : "ref-" + n.kind);
  const json = (url) => fetch(url).then((r) => {
    if (!r.ok) throw new Error(url + ": " + r.status);
    return r.json();
  });
  json(box.dataset.src).then((index) => Promise.all(
    index.parts.map((p) => json(new URL(p, new URL(box.dataset.src, location.href)).href))
  )).then((parts) => {
    const data = { nodes: [], edges: [] };
    for (const part of parts) {
      for (const n of part.nodes) data.nodes.push(n);
      for (const e of part.edges) data.edges.push(e);
    }
    const elements = [];
    const kindColor = {};
    const relColor = {};
    for (const n of data.nodes) {
      const kind = kindOf(n);
      if (!(kind in kindColor)) {
        const li = document.querySelector(`#g-legend li[data-kind="${CSS.escape(kind)}"] .swatch`);
        kindColor[kind] = li ? getComputedStyle(li).backgroundColor : swatch(".kind-other", "#dfe3e8");
      }
      elements.push({ data: { id: n.id, label: n.label, title: n.title, kind: kind, color: kindColor[kind],
        href: n.slug ? here + "pr/" + encodeURIComponent(n.slug) + ".html" : "" } });
    }
    data.edges.forEach((e, i) => {  // [source, target, type, confidence]
      if (!(e[2] in relColor)) {
        const li = document.querySelector(`#g-legend li[data-rel="${CSS.escape(e[2])}"] .swatch`);
        relColor[e[2]] = li ? getComputedStyle(li).backgroundColor : "#5f6b7a";
      }
      elements.push({ data: { id: "e" + i, source: e[0], target: e[1], type: e[2], color: relColor[e[2]] } });
    });
    const cy = cytoscape({
      container: box, elements: elements, minZoom: 0.05, maxZoom: 4,
      style: [
        { selector: "node", style: { "label": "data(label)", "font-size": 11, "background-color": "data(color)",
          "border-width": 1, "border-color": "#5f6b7a", "color": "#1d2430", "text-valign": "bottom",
          "text-margin-y": 3, "width": 16, "height": 16, "min-zoomed-font-size": 6,
          "text-background-color": "#fbfcfd", "text-background-opacity": 0.85, "text-background-padding": 1 } },
        { selector: "node[href = '']", style: { "shape": "round-rectangle" } },
        { selector: "edge", style: { "width": 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)",
          "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.9 } },
        { selector: ".faded", style: { "opacity": 0.12 } },
        { selector: ".off", style: { "display": "none" } },
      ],
    });
    // the largest connected group of PRs is shown first; the others behind a switch
    const groups = cy.elements().components().sort((a, b) => b.nodes().length - a.nodes().length);
    const all = document.getElementById("g-all");
    // A layered layout: each group in rows by the direction of its relations, every node
    // (with its label) in a cell of its own, so labels never overlap however dense a group.
    const layout = () => {
      const shown = cy.elements().not(".off");
      shown.layout({ name: "breadthfirst", directed: true, avoidOverlap: true,
        nodeDimensionsIncludeLabels: true, spacingFactor: 1.05, padding: 20, animate: false,
        roots: shown.nodes().roots().length ? shown.nodes().roots() : undefined }).run();
      cy.fit(shown, 30);
    };
    const show = () => {
      cy.batch(() => {
        cy.elements().removeClass("off");
        if (!(all && all.checked)) groups.slice(1).forEach((g) => g.addClass("off"));
      });
      layout();
    };
    if (all) {
      if (groups.length < 2) all.closest("label").hidden = true;
      all.addEventListener("change", show);
    }
    show();
    cy.on("tap", "node", (ev) => {
      const href = ev.target.data("href");
      if (href) window.location.assign(href);
    });
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
    if (fit) fit.addEventListener("click", () => cy.fit(cy.elements().not(".off"), 30));
    box.cy = cy;  // for the browser tests
    box.dataset.ready = "1";
  }).catch(() => { box.dataset.ready = "error"; });
})();
