// Pipeline: stream lag and pending per consumer group (GET /v1/pipeline, whole-pipeline
// counts with no tenant's data), and the lifecycle jobs this key may run (GET /v1/jobs).

import { api } from "../api.js";
import { h, table, when } from "../dom.js";
import { showError } from "../app.js";

export async function pipelineView(main) {
  const [status, { jobs }, letters] = await Promise.all([
    api("GET", "/v1/pipeline", { auth: false }), api("GET", "/v1/jobs"), api("GET", "/v1/dead-letters"),
  ]);
  const rows = [];
  for (const [stream, s] of Object.entries(status.streams)) {
    for (const [group, c] of Object.entries(s.groups)) {
      rows.push(h("tr", {}, h("td", {}, stream), h("td", {}, group), h("td", {}, s.length), h("td", {}, c.lag), h("td", {}, c.pending)));
    }
  }
  const out = h("p", { role: "status", class: "muted" });
  main.replaceChildren(h("h1", {}, "Pipeline"),
    h("p", {}, status.pending ? `${status.pending} entries still to process.` : "Settled: every consumer group is up to date.", status.indexing ? " The vector index is being rebuilt." : ""),
    table(["Stream", "Consumer group", "Length", "Lag (unread)", "Pending (unacknowledged)"], rows),
    h("h2", {}, `Dead letters (${letters.items.length})`),
    letters.items.length
      ? table(["Failed", "Stream / group", "Memory", "Deliveries", "Error"], letters.items.map((d) => h("tr", {},
        h("td", {}, when(d.failed_at)), h("td", {}, `${d.stream} / ${d.group}`),
        h("td", {}, d.memory_id ? h("a", { href: `/ui/memories/${d.memory_id}` }, d.memory_id.slice(0, 8)) : "—"),
        h("td", {}, d.deliveries), h("td", { class: "text" }, d.error))))
      : h("p", { class: "muted" }, "No dead letters: every event of yours was processed."),
    h("h2", {}, "Lifecycle jobs"),
    h("p", { class: "muted" }, "The sweeper runs these on its own schedule; run one now for your tenant (most need an admin key)."),
    h("ul", { class: "jobs" }, jobs.map((name) => h("li", {}, h("code", {}, name), " ",
      h("button", { type: "button", class: "secondary", onclick: async () => {
        out.textContent = `Running ${name}…`;
        try {
          const r = await api("POST", `/v1/jobs/${name}`);
          out.textContent = `${name}: ${JSON.stringify(r.changed)} changed.`;
        } catch (err) { out.textContent = ""; showError(err); }
      } }, "Run now")))), out);
}
