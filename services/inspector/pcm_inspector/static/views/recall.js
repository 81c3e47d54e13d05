// Recall playground: POST /v1/recall as an agent would, the rendered prompt beside the
// structured answer, each candidate's scores with helpful / not helpful buttons (feedback
// on this recall), and the time per stage. (A recall reinforces
// what it returns, as any recall does.)

import { api } from "../api.js";
import { h, num, when, fields, table } from "../dom.js";
import { showError } from "../app.js";

function form(onRun) {
  const input = (name, label, attrs = {}) => h("div", {}, h("label", { for: `r-${name}` }, label), h("input", { id: `r-${name}`, name, ...attrs }));
  return h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); onRun(ev.target); } },
    h("div", { class: "grow" }, h("label", { for: "r-query" }, "Query"), h("input", { id: "r-query", name: "query", required: true, type: "search", placeholder: "Where does Alice live now?" })),
    input("user_id", "User"), input("workspace", "Workspace"), input("project", "Project"),
    input("k", "k", { type: "number", min: 1, max: 200 }),
    h("div", {}, h("label", { for: "r-mode" }, "Mode"), h("select", { id: "r-mode", name: "mode" }, h("option", { value: "" }, "full"), h("option", { value: "compact" }, "compact"))),
    input("now", "now (ISO time)", { placeholder: "2026-12-01T09:00:00Z" }),
    h("div", { class: "checks" },
      h("label", {}, h("input", { type: "checkbox", name: "include_archived", value: "1" }), " include archived"),
      h("label", {}, h("input", { type: "checkbox", name: "include_superseded", value: "1" }), " include superseded")),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Recall")));
}

function body(f) {
  const out = { query: f.query };
  for (const k of ["user_id", "workspace", "project", "now"]) if (f[k]) out[k] = f[k];
  if (f.k) out.k = Number(f.k);
  if (f.mode === "compact") out.compact = true;
  if (f.include_archived) out.include_archived = true;
  if (f.include_superseded) out.include_superseded = true;
  return out;
}

// Entries of timings_ms that are not milliseconds: whether the graph answered, its links.
const NOT_MS = new Set(["graph_ok", "graph_links"]);

function timings(ms) {
  const entries = Object.entries(ms).filter(([k, v]) => typeof v === "number" && !NOT_MS.has(k));
  const max = Math.max(1, ...entries.map(([, v]) => v));
  return h("ul", { class: "bars", "aria-label": "Time per stage" }, entries.map(([stage, v]) =>
    h("li", {}, h("span", { class: "bar-label" }, stage), h("span", { class: "bar", style: `width:${Math.max(1, (100 * v) / max)}%` }), h("span", { class: "bar-value" }, `${num(v, 1)} ms`))));
}

// Per-item feedback on this recall (POST /v1/recall/{recall_id}/feedback): later recalls
// near this query rank the memory up or down.
function feedbackButtons(recallId, c) {
  if (!recallId) return null;
  const said = h("span", { class: "muted said", "aria-live": "polite" });
  const send = (kind) => async () => {
    try {
      const out = await api("POST", `/v1/recall/${recallId}/feedback`, { body: { [kind]: [c.memory_id] } });
      const label = kind === "helpful" ? "helpful" : "not helpful";
      said.textContent = Object.keys(out.changed).length ? `marked ${label}` : `already ${label}`;
    } catch (err) { showError(err); }
  };
  return h("div", { class: "feedback", role: "group", "aria-label": "Feedback on this recall" },
    h("button", { type: "button", class: "secondary", "data-feedback": "helpful", "aria-label": `Helpful: ${c.text.slice(0, 60)}`, onclick: send("helpful") }, "Helpful"),
    h("button", { type: "button", class: "secondary", "data-feedback": "not_helpful", "aria-label": `Not helpful: ${c.text.slice(0, 60)}`, onclick: send("not_helpful") }, "Not helpful"),
    said);
}

function candidates(items, recallId) {
  return table(["Memory", "Relevance", "Strength", "Score", "Scope", "Created"], items.map((c) =>
    h("tr", {}, h("td", { class: "text" }, h("a", { href: `/ui/memories/${c.memory_id}` }, c.text), feedbackButtons(recallId, c)),
      h("td", {}, num(c.relevance)), h("td", {}, num(c.strength)), h("td", {}, num(c.score)), h("td", {}, c.scope), h("td", {}, when(c.created_at).slice(0, 10)))));
}

function answer(out) {
  const flags = out.anomaly_flags.map((f) => h("li", {}, h("strong", {}, f.kind), ` ${f.text}`, f.differs ? ` — differs: ${f.differs}` : "", f.usual ? `; usual: ${f.usual}` : ""));
  return h("div", { class: "split", id: "recall-result" },
    h("section", { class: "card", "aria-labelledby": "r-prompt" }, h("h2", { id: "r-prompt" }, "Prompt slots"), h("pre", { class: "prompt" }, out.prompt)),
    h("section", { class: "card", "aria-labelledby": "r-struct" }, h("h2", { id: "r-struct" }, "Structured answer"),
      h("h3", {}, `Anomaly flags (${out.anomaly_flags.length})`), flags.length ? h("ul", {}, flags) : h("p", { class: "muted" }, "none"),
      h("h3", {}, `Asker context: pinned (${out.asker_context.length})`), out.asker_context.length ? candidates(out.asker_context, out.recall_id) : h("p", { class: "muted" }, "none"),
      h("h3", {}, `Situational context (${out.situational_context.length})`), out.situational_context.length ? candidates(out.situational_context, out.recall_id) : h("p", { class: "muted" }, "nothing relevant"),
      h("h3", {}, `Episode context (${out.episode_context.length})`), out.episode_context.length ? candidates(out.episode_context, out.recall_id) : h("p", { class: "muted" }, "none"),
      h("h3", {}, "Time per stage"),
      h("p", { class: "muted" }, `The graph lookup runs alongside embed and search; it ${out.timings_ms.graph_ok ? "answered" : "did not answer"} and linked ${out.timings_ms.graph_links ?? 0} memories.`),
      timings(out.timings_ms)));
}

export async function recallView(main) {
  const result = h("div", { "aria-live": "polite" });
  main.replaceChildren(h("h1", {}, "Recall playground"),
    h("p", { class: "muted" }, "Runs a real recall: what it returns is reinforced, as for an agent."),
    form(async (formEl) => {
      result.replaceChildren(h("p", { class: "muted" }, "Recalling…"));
      try {
        result.replaceChildren(answer(await api("POST", "/v1/recall", { body: body(fields(formEl)) })));
      } catch (err) {
        result.replaceChildren();
        showError(err);
      }
    }), result);
}
