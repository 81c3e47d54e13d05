// The memory page's drawings: the strength plot (uPlot) and the graph neighbourhood
// (Cytoscape.js). Both libraries are vendored from npm by scripts/inspector_assets.sh.

import { h } from "../dom.js";

const secs = (iso) => new Date(iso).getTime() / 1000;

// Strength over time: the path before the last reinforcement replayed from the recorded
// events, the known curve since it up to now, the projection after it, the demotion
// threshold, and the events (creation, repeats, recalls, reinforcements) as marks.
export function strengthPlot(container, view) {
  const now = secs(view.now);
  const SERIES = 4; // replayed past, since the last reinforcement, projected, events
  const byX = new Map();
  const put = (x, i, v) => {
    if (!byX.has(x)) byX.set(x, Array(SERIES).fill(null));
    byX.get(x)[i] = v;
  };
  // The replayed past climbs to the stored strength at the last reinforcement: the step
  // it made, whatever the replay could not account for included.
  const past = view.past?.length ? [...view.past, { at: view.t_ref, strength: view.s_ref }] : [];
  past.forEach((p, i) => {
    // A reinforcement is a step at one instant: the value before it is drawn a second
    // earlier, so both ends of the step are kept.
    const step = i + 1 < past.length && past[i + 1].at === p.at;
    put(secs(p.at) - (step ? 1 : 0), 0, p.strength);
  });
  for (const p of view.curve) put(secs(p.at), p.projected ? 2 : 1, p.strength);
  // The curve is continuous at now: the projection starts where the known part ends.
  put(now, 1, view.current);
  put(now, 2, view.current);
  for (const e of view.events) put(secs(e.at), 3, e.strength);
  const xs = [...byX.keys()].sort((a, b) => a - b);
  const data = [xs, ...[0, 1, 2, 3].map((i) => xs.map((x) => byX.get(x)[i])), xs.map(() => view.threshold)];
  const width = Math.max(280, Math.min(container.clientWidth || 800, 900));
  const opts = {
    width,
    height: 260,
    scales: { y: { range: [0, 1.05] } },
    series: [
      {},
      { label: "replayed past", stroke: "#8cb4f5", width: 2, spanGaps: true },
      { label: "strength", stroke: "#1f6feb", width: 2, spanGaps: true },
      { label: "projected", stroke: "#1f6feb", dash: [6, 4], width: 2, spanGaps: true },
      { label: "events", stroke: "#d4380d", width: 0, points: { show: true, size: 9, fill: "#d4380d" }, paths: () => null },
      { label: "demotion threshold", stroke: "#cf222e", width: 1, dash: [2, 3], points: { show: false } },
    ],
    axes: [{}, { label: "strength" }],
    legend: { show: false }, // the page's own legend names the lines and events
  };
  container.replaceChildren();
  // eslint-disable-next-line no-undef
  return new uPlot(opts, data, container);
}

// Entities (by type), typed relations, and linked memories, around this memory.
export function graphDrawing(container, memoryId, graph) {
  const els = [{ data: { id: "m:" + memoryId, label: "this memory", kind: "self" } }];
  const ent = (e) => "e:" + e.type + ":" + e.key;
  const seen = new Set();
  const addEntity = (e) => {
    if (seen.has(ent(e))) return;
    seen.add(ent(e));
    els.push({ data: { id: ent(e), label: `${e.name} (${e.type})`, kind: "entity" } });
  };
  for (const e of graph.entities) {
    addEntity(e);
    els.push({ data: { id: `mention:${ent(e)}`, source: "m:" + memoryId, target: ent(e), label: "mentions" } });
  }
  graph.relations.forEach((r, i) => {
    addEntity(r.source);
    addEntity(r.target);
    els.push({ data: { id: `rel:${i}`, source: ent(r.source), target: ent(r.target), label: r.type, kind: "relation" } });
  });
  const keyed = new Map(graph.entities.map((e) => [e.key, e]));
  for (const m of graph.memories) {
    const id = "m:" + m.id;
    els.push({ data: { id, label: m.text.length > 40 ? m.text.slice(0, 40) + "…" : m.text, kind: "memory", href: `/ui/memories/${m.id}` } });
    for (const k of m.shares) {
      if (keyed.has(k)) els.push({ data: { id: `share:${m.id}:${k}`, source: id, target: ent(keyed.get(k)), label: "" } });
    }
  }
  // eslint-disable-next-line no-undef
  const cy = cytoscape({
    container,
    elements: els,
    maxZoom: 2, // fitting a lone node (nothing extracted yet) would blow it up to the box
    // Rings: this memory in the middle, its entities around it, linked memories outside.
    layout: { name: "concentric", concentric: (n) => ({ self: 3, entity: 2 }[n.data("kind")] || 1), levelWidth: () => 1, minNodeSpacing: 70, padding: 20, animate: false },
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "text-wrap": "wrap", "text-max-width": 120, "background-color": "#8c959f" } },
      { selector: "node[kind = 'self']", style: { "background-color": "#1f6feb", width: 34, height: 34 } },
      { selector: "node[kind = 'entity']", style: { "background-color": "#2da44e", shape: "round-rectangle" } },
      { selector: "node[kind = 'memory']", style: { "background-color": "#bf8700" } },
      { selector: "edge", style: { width: 1.5, "curve-style": "bezier", "line-color": "#afb8c1", "target-arrow-shape": "triangle", "target-arrow-color": "#afb8c1", label: "data(label)", "font-size": 8 } },
      { selector: "edge[kind = 'relation']", style: { "line-color": "#8250df", "target-arrow-color": "#8250df", width: 2.5 } },
    ],
  });
  cy.on("tap", "node[href]", (ev) => {
    history.pushState(null, "", ev.target.data("href"));
    dispatchEvent(new PopStateEvent("popstate"));
  });
  return cy;
}

export function legend(items) {
  return h("ul", { class: "legend" }, items.map(([cls, text]) => h("li", {}, h("span", { class: `swatch ${cls}` }), text)));
}
