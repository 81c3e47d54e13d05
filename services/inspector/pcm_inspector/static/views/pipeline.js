// Pipeline: stream lag and pending per consumer group (GET /v1/pipeline, whole-pipeline
// counts with no tenant's data), and the lifecycle jobs this key may run (GET /v1/jobs).

import { api } from "../api.js";
import { h, table } from "../dom.js";
import { showError } from "../app.js";

export async function pipelineView(main) {
  const [status, { jobs }] = await Promise.all([api("GET", "/v1/pipeline", { auth: false }), api("GET", "/v1/jobs")]);
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
