// Pipeline: stream lag and pending per consumer group (GET /v1/pipeline, whole-pipeline
// counts with no tenant's data), the tenant's dead letters with a retry each
// (GET /v1/dead-letters, POST /v1/dead-letters/{id}:retry), and the lifecycle jobs with
// their last runs on this tenant (GET /v1/jobs/runs) and a button to run one now.

import { api, ApiFailure } from "../api.js";
import { fill, h, table, when } from "../dom.js";
import { showError } from "../app.js";

const EVERY = [[86400, "day"], [3600, "hour"], [60, "minute"]];

function every(seconds) {
  for (const [unit, name] of EVERY) {
    if (seconds >= unit) {
      const n = Math.round((seconds / unit) * 10) / 10;
      return n === 1 ? `every ${name}` : `every ${n} ${name}s`;
    }
  }
  return `every ${seconds} s`;
}

const took = (ms) => (ms < 1 ? "under 1 ms" : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function outcome(run) {
  return run.outcome === "ok"
    ? [h("span", { class: "badge regular" }, "ok"), `${run.changed} changed`]
    : [h("span", { class: "badge stopped" }, "failed"), h("span", { class: "text" }, run.error || "")];
}

function started(run) {
  return [h("time", { datetime: run.started_at }, when(run.started_at)), h("span", { class: "muted" },
    run.trigger === "schedule" ? " · scheduled" : " · on request",
    run.now ? ` (simulated time ${when(run.now)})` : "")];
}

// One row per job: its schedule, its last run on this tenant, and "Run now"; then every
// kept run, newest first. `runs` is the answer of GET /v1/jobs/runs, or the failure to get
// it (the job names and buttons stay usable, the runs part says what went wrong).
function jobsTable(names, runs, runNow) {
  const byJob = runs instanceof Error ? {} : Object.fromEntries(runs.jobs.map((j) => [j.job, j]));
  const rows = names.map((name) => {
    const last = byJob[name]?.runs[0];
    return h("tr", {},
      h("td", {}, h("code", {}, name)),
      h("td", {}, byJob[name] ? every(byJob[name].interval_s) : "—"),
      h("td", {}, last ? started(last) : "no run yet"),
      h("td", {}, last ? outcome(last) : "—"),
      h("td", {}, last ? took(last.duration_ms) : "—"),
      h("td", {}, h("button", { type: "button", class: "secondary", "aria-label": `Run ${name} now`, onclick: () => runNow(name) }, "Run now")));
  });
  const all = Object.values(byJob).flatMap((j) => j.runs).sort((a, b) => Date.parse(b.started_at) - Date.parse(a.started_at));
  return [
    runs instanceof Error ? h("p", { class: "problem" }, `The last runs could not be loaded: ${runs instanceof ApiFailure ? runs.message : runs}`) : null,
    h("div", { class: "jobs" }, table(["Job", "Schedule", "Last run", "Outcome", "Took", "Run"], rows)),
    all.length ? h("details", { class: "runs" }, h("summary", {}, `Recent runs, newest first (${all.length})`),
      table(["Job", "Started", "Outcome", "Took"], all.map((r) => h("tr", {},
        h("td", {}, h("code", {}, r.job)), h("td", {}, started(r)), h("td", {}, outcome(r)), h("td", {}, took(r.duration_ms)))))) : null,
  ];
}

function jobsPart(names, firstRuns, out) {
  const box = h("div", { id: "jobs" });
  const draw = (runs) => fill(box, jobsTable(names, runs, runNow));
  const reload = () => api("GET", "/v1/jobs/runs").catch((err) => err).then(draw);
  async function runNow(name) {
    out.textContent = `Running ${name}…`;
    try {
      const r = await api("POST", `/v1/jobs/${name}`);
      out.textContent = `${name}: ${JSON.stringify(r.changed)} changed.`;
    } catch (err) { out.textContent = ""; showError(err); }
    await reload();  // a failed run is one of the last runs too
  }
  draw(firstRuns);
  return box;
}

export async function pipelineView(main) {
  const [status, { jobs }, letters, runs] = await Promise.all([
    api("GET", "/v1/pipeline", { auth: false }), api("GET", "/v1/jobs"), api("GET", "/v1/dead-letters"),
    api("GET", "/v1/jobs/runs").catch((err) => err),
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
    h("p", { class: "muted" }, "The sweeper runs these on its own schedule; each row shows the last run on your tenant. Run one now for your tenant (most need an admin key)."),
    jobsPart(jobs, runs, out), out);
}
