// The explorable PR graph: cytoscape (vendored), data from graph.json next to the page.
"use strict";
(function () {
  const box = document.getElementById("graph");
  if (!box || typeof cytoscape !== "function") return;
  const here = box.dataset.here || "";
  const colors = { "fixes-regression-from": "#b42318", "depends-on": "#2457c5", "follow-up-of": "#2f9e5b",
    "supersedes": "#7b4fc9", "alternative-to": "#e39b2d", "reverts": "#8a1c12",
    "modifies-declaration-of": "#5f6b7a", "mentions": "#b8c0cc" };
  fetch(box.dataset.src).then((r) => r.json()).then((data) => {
    const elements = [];
    for (const n of data.nodes) {
      elements.push({ data: { id: n.id, label: n.label, title: n.title, kind: n.kind, state: n.state || "",
        href: n.slug ? here + "pr/" + encodeURIComponent(n.slug) + ".html" : "" } });
    }
    data.edges.forEach((e, i) => {  // [source, target, type, confidence]
      elements.push({ data: { id: "e" + i, source: e[0], target: e[1], type: e[2],
        color: colors[e[2]] || "#5f6b7a" } });
    });
    const cy = cytoscape({
      container: box, elements: elements, minZoom: 0.1, maxZoom: 4,
      style: [
        { selector: "node", style: { "label": "data(label)", "font-size": 11, "background-color": "#3f7fd6",
          "color": "#1d2430", "text-valign": "bottom", "text-margin-y": 3, "width": 18, "height": 18 } },
        { selector: "node[state = 'open']", style: { "background-color": "#2f9e5b" } },
        { selector: "node[state = 'closed']", style: { "background-color": "#b42318" } },
        { selector: "node[href = '']", style: { "background-color": "#c5ccd6", "shape": "round-rectangle" } },
        { selector: "edge", style: { "width": 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)",
          "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.9 } },
        { selector: ".faded", style: { "opacity": 0.12 } },
      ],
      layout: { name: data.nodes.length > 400 ? "grid" : "cose", animate: false, randomize: false },
    });
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
    if (fit) fit.addEventListener("click", () => cy.fit(undefined, 30));
    box.dataset.ready = "1";
  }).catch(() => { box.dataset.ready = "error"; });
})();
