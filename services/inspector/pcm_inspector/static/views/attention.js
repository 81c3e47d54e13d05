// Attention: the tenant's routines and the stopped ones on a timeline (GET /v1/attention),
// and the memories judged surprising, with what differs and what is usual.

import { api } from "../api.js";
import { h, when, num, table, whenShown } from "../dom.js";

const secs = (iso) => new Date(iso).getTime() / 1000;

// One row per stopped routine: its entries as marks, and now, so the silence shows.
function timeline(container, routines, now) {
  const xs = [...new Set([...routines.flatMap((r) => r.entries.map((e) => secs(e.at))), secs(now)])].sort((a, b) => a - b);
  const series = routines.map((r, i) => {
    const at = new Set(r.entries.map((e) => secs(e.at)));
    return xs.map((x) => (at.has(x) ? i + 1 : null));
  });
  const nowLine = xs.map((x) => (x === secs(now) ? routines.length + 0.5 : null));
  const opts = {
    width: Math.max(280, Math.min(container.clientWidth || 800, 1100)),
    height: 60 + 36 * routines.length,
    scales: { y: { range: [0, routines.length + 1] } },
    series: [
      {},
      ...routines.map((r) => ({ label: r.last_memory.text.slice(0, 30), stroke: "#cf222e", width: 0, paths: () => null, points: { show: true, size: 8, fill: "#cf222e" } })),
      { label: "now", stroke: "#1f6feb", width: 0, paths: () => null, points: { show: true, size: 10, fill: "#1f6feb" } },
    ],
    // A tick per routine, labelled with its number in the table below.
    axes: [{}, { size: 40, splits: () => routines.map((_, i) => i + 1), values: (_, ticks) => ticks.map((t) => `#${t}`) }],
    legend: { show: false },
  };
  container.replaceChildren();
  // eslint-disable-next-line no-undef
  return new uPlot(opts, [xs, ...series, nowLine], container);
}

function routineRow(r, i) {
  return h("tr", {},
    h("td", {}, r.state === "stopped" ? `#${i + 1}` : ""),
    h("td", { class: "text" }, h("a", { href: `/ui/memories/${r.last_memory.id}` }, r.last_memory.text)),
    h("td", {}, h("span", { class: `badge ${r.state}` }, r.state.replace("_", " "))),
    h("td", {}, r.usual ? `${r.usual} (${num(r.usual_interval_days, 1)} d)` : "—"),
    h("td", {}, when(r.last_at)),
    h("td", {}, r.entries.length));
}

export async function attentionView(main) {
  const view = await api("GET", "/v1/attention");
  const stopped = view.routines.filter((r) => r.state === "stopped");
  const box = h("div", { class: "plot", id: "stopped-timeline", role: "img", "aria-label": `${stopped.length} stopped routines` });
  main.replaceChildren(h("h1", {}, "Attention"),
    h("section", { class: "card", "aria-labelledby": "att-stopped" }, h("h2", { id: "att-stopped" }, `Stopped routines (${stopped.length})`),
      stopped.length ? [h("p", { class: "muted" }, "Each row is a routine that was regular and has gone quiet: its entries, and now (blue)."), box]
        : h("p", { class: "muted" }, "No routine has stopped.")),
    h("section", { class: "card", "aria-labelledby": "att-routines" }, h("h2", { id: "att-routines" }, `Routines (${view.routines.length})`),
      view.routines.length
        ? table(["", "Latest entry", "State", "Usual interval", "Last entry", "Entries"], view.routines.map((r) => routineRow(r, stopped.indexOf(r))))
        : h("p", { class: "muted" }, "No routines yet: they form as the sweeper judges memories that repeat.")),
    h("section", { class: "card", "aria-labelledby": "att-surprises" }, h("h2", { id: "att-surprises" }, `Surprising memories (${view.surprises.length})`),
      view.surprises.length
        ? table(["Memory", "Score (0–1)", "What differs", "What is usual", "Created"], view.surprises.map((s) => h("tr", {},
          h("td", { class: "text" }, h("a", { href: `/ui/memories/${s.memory_id}` }, s.text)), h("td", {}, num(s.score, 2)),
          h("td", {}, s.differs || "—"), h("td", {}, s.usual || "—"), h("td", {}, when(s.created_at)))))
        : h("p", { class: "muted" }, `Nothing judged surprising (score ≥ ${view.min_score}).`)));
  if (stopped.length) whenShown(box, () => timeline(box, stopped, view.now));
}
