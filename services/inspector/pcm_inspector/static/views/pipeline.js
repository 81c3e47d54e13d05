// Pipeline: stream lag and pending per consumer group (GET /v1/pipeline, whole-pipeline
// counts with no tenant's data), the tenant's dead letters with a retry each
// (GET /v1/dead-letters, POST /v1/dead-letters/{id}:retry), and the lifecycle jobs this key
// may run (GET /v1/jobs).

import { api } from "../api.js";
import { fill, h, table, when } from "../dom.js";
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
  // Sends the letter's event back to its stream; the server removes the letter in the same
  // step, so a second click (or another tab) is told it is gone and publishes nothing.
  const retryButton = (d) => h("button", { type: "button", class: "secondary", "aria-label": `Retry dead letter ${d.id}`, onclick: async (ev) => {
    const button = ev.currentTarget;
    button.disabled = true;
    out.textContent = `Retrying ${d.id}…`;
    try {
      const r = await api("POST", `/v1/dead-letters/${encodeURIComponent(d.id)}:retry`);
      button.replaceWith(h("span", { class: "badge" }, "sent back"));
      out.textContent = `Sent back to ${r.stream} (entry ${r.published_id}); no longer a dead letter.`;
    } catch (err) {
      out.textContent = "";
      button.disabled = err.code !== "dead_letter_not_found";
      showError(err);
    }
  } }, "Retry");
  fill(main, h("h1", {}, "Pipeline"),
    h("p", {}, status.pending ? `${status.pending} entries still to process.` : "Settled: every consumer group is up to date.", status.indexing ? " The vector index is being rebuilt." : ""),
    table(["Stream", "Consumer group", "Length", "Lag (unread)", "Pending (unacknowledged)"], rows),
    h("h2", {}, `Dead letters (${letters.items.length})`),
    letters.items.length
      ? table(["Failed", "Stream / group", "Memory", "Deliveries", "Error", "Retry"], letters.items.map((d) => h("tr", {},
        h("td", {}, when(d.failed_at)), h("td", {}, `${d.stream} / ${d.group}`),
        h("td", {}, d.memory_id ? h("a", { href: `/ui/memories/${d.memory_id}` }, d.memory_id.slice(0, 8)) : "—"),
        h("td", {}, d.deliveries), h("td", { class: "text" }, d.error), h("td", {}, retryButton(d)))))
      : h("p", { class: "muted" }, "No dead letters: every event of yours was processed."),
    letters.items.length ? h("p", { class: "muted" }, "Retry sends the event back to its stream, where each consumer group takes it again (doing it twice changes nothing), and removes the letter: it is sent once however often you click.") : null,
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
