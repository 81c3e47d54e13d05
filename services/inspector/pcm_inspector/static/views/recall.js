// Recall playground: POST /v1/recall as an agent would, the rendered prompt beside the
// structured answer, each candidate's scores with helpful / not helpful buttons (feedback
// on this recall), and the time per stage. (A recall reinforces
// what it returns, as any recall does.)

import { api } from "../api.js";
import { h, num, when, fields, table } from "../dom.js";
import { showError } from "../app.js";

function form(onRun) {
  const input = (name, label, attrs = {}) => h("div", {}, h("label", { for: `r-${name}` }, label), h("input", { id: `r-${name}`, name, ...attrs }));
  const select = (name, label, options) => h("div", {}, h("label", { for: `r-${name}` }, label),
    h("select", { id: `r-${name}`, name }, options.map(([v, t]) => h("option", { value: v }, t))));
  return h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); onRun(ev.target); } },
    h("div", { class: "grow" }, h("label", { for: "r-query" }, "Query"), h("input", { id: "r-query", name: "query", required: true, type: "search", placeholder: "Where does Alice live now?" })),
    input("user_id", "User"), input("workspace", "Workspace"), input("project", "Project"),
    input("k", "k", { type: "number", min: 1, max: 200 }),
    select("mode", "Mode", [["focused", "focused"], ["associative", "associative"]]),
    select("precision", "Precision", [["standard", "standard"], ["precise", "precise"]]),
    input("now", "now (ISO time)", { placeholder: "2026-12-01T09:00:00Z" }),
    h("div", { class: "checks" },
      h("label", {}, h("input", { type: "checkbox", id: "r-compact", name: "compact", value: "1" }), " compact prompt"),
      h("label", {}, h("input", { type: "checkbox", name: "include_archived", value: "1" }), " include archived"),
      h("label", {}, h("input", { type: "checkbox", name: "include_superseded", value: "1" }), " include superseded")),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Recall")));
}

// The request: always with `explain`, so each ranked item carries the terms of its score.
function body(f) {
  const out = { query: f.query, explain: true };
  for (const k of ["user_id", "workspace", "project", "now"]) if (f[k]) out[k] = f[k];
  if (f.k) out.k = Number(f.k);
  if (f.mode === "associative") out.mode = "associative";
  if (f.precision === "precise") out.precision = "precise";
  if (f.compact) out.compact = true;
  if (f.include_archived) out.include_archived = true;
  if (f.include_superseded) out.include_superseded = true;
  return out;
}

// Entries of timings_ms that are not milliseconds: whether the graph answered, its links.
const NOT_MS = new Set(["graph_ok", "graph_links"]);

// Stages that overlap others (the graph lookup runs alongside embed and search; flags
// alongside the episode read): drawn on their own bars, left out of the stacked total.
const OVERLAPPED = new Set(["graph", "flags"]);
const COLOURS = ["#54aeff", "#2da44e", "#bf8700", "#8250df", "#cf222e", "#1b7c83", "#6e7781", "#fb8f44"];

// The recall's time as one bar: each sequential stage a segment of it, in order.
function stacked(ms) {
  const entries = Object.entries(ms).filter(([k, v]) => typeof v === "number" && !NOT_MS.has(k) && !OVERLAPPED.has(k));
  const total = entries.reduce((t, [, v]) => t + v, 0) || 1;
  const words = entries.map(([k, v]) => `${k} ${num(v, 1)} ms`).join(", ");
  return h("div", { class: "stack-wrap" },
    h("div", { class: "stack", role: "img", "aria-label": `${num(total, 1)} ms in all: ${words}` }, entries.map(([k, v], i) =>
      h("span", { class: "segment", title: `${k}: ${num(v, 1)} ms`, style: `width:${(100 * v) / total}%;background:${COLOURS[i % COLOURS.length]}` }))),
    h("p", { class: "muted stack-legend" }, `${num(total, 1)} ms in all: `, entries.map(([k, v], i) =>
      h("span", {}, h("span", { class: "swatch", style: `background:${COLOURS[i % COLOURS.length]}` }), ` ${k} ${num(v, 1)} ms `))));
}

function timings(ms) {
  const entries = Object.entries(ms).filter(([k, v]) => typeof v === "number" && !NOT_MS.has(k));
  const max = Math.max(1, ...entries.map(([, v]) => v));
  return h("ul", { class: "bars", "aria-label": "Time per stage" }, entries.map(([stage, v]) =>
    h("li", {}, h("span", { class: "bar-label" }, stage), h("span", { class: "bar", style: `width:${Math.max(1, (100 * v) / max)}%` }), h("span", { class: "bar-value" }, `${num(v, 1)} ms`))));
}

// Feedback on this recall (POST /v1/recall/{recall_id}/feedback): later recalls near this
// query rank the memory up (helpful, missed) or down (not helpful).
const SAID = { helpful: "helpful", not_helpful: "not helpful", missed: "missed" };

async function sendFeedback(recallId, kind, id, said) {
  try {
    const out = await api("POST", `/v1/recall/${recallId}/feedback`, { body: { [kind]: [id] } });
    said.textContent = Object.keys(out.changed).length ? `marked ${SAID[kind]}` : `already ${SAID[kind]}`;
  } catch (err) { showError(err); }
}

function feedbackButtons(recallId, id, text, kinds) {
  if (!recallId) return null;
  const said = h("span", { class: "muted said", "aria-live": "polite" });
  const label = { helpful: "Helpful", not_helpful: "Not helpful", missed: "Missed" };
  return h("div", { class: "feedback", role: "group", "aria-label": "Feedback on this recall" },
    kinds.map((kind) => h("button", { type: "button", class: "secondary", "data-feedback": kind, "aria-label": `${label[kind]}: ${text.slice(0, 60)}`, onclick: () => sendFeedback(recallId, kind, id, said) }, label[kind])),
    said);
}

// A memory the recall should have found and did not show: its id (or its inspector
// address), sent as `missed`.
function missedForm(recallId) {
  if (!recallId) return null;
  const said = h("span", { class: "muted said", "aria-live": "polite" });
  return h("form", { class: "missed", id: "missed-form", onsubmit: (ev) => {
    ev.preventDefault();
    const id = ev.target.memory.value.trim().split("/").pop();
    if (id) sendFeedback(recallId, "missed", id, said);
  } },
  h("label", { for: "r-missed" }, "A memory it should have found (id or address)"),
  h("input", { id: "r-missed", name: "memory", required: true }),
  h("button", { type: "submit", class: "secondary" }, "Report missed"), said);
}

// One term of a score: "—" for an item that was not ranked against the query.
const term = (c, name, digits = 3) => (c.terms ? num(c.terms[name], digits) : "—");

function strengthCell(c) {
  if (!c.terms || c.terms.reactivated <= c.terms.strength + 1e-6) return num(c.strength);
  return h("span", { title: "decayed strength → strength the cue restored (S*)" }, `${num(c.strength)} → ${num(c.terms.reactivated)}`);
}

function candidates(items, recallId) {
  const charged = items.some((c) => c.terms && c.terms.state_bonus);
  const headers = ["Memory", "Relevance", "Strength", "Graph link", "Scope bonus", "Feedback", ...(charged ? ["State"] : []), "Score"];
  return table(headers, items.map((c) =>
    h("tr", { "data-memory": c.memory_id }, h("td", { class: "text" }, h("a", { href: `/ui/memories/${c.memory_id}`, title: `created ${when(c.created_at)}` }, c.text), c.state !== "active" ? h("span", { class: `badge ${c.state}` }, c.state) : null, feedbackButtons(recallId, c.memory_id, c.text, ["helpful", "not_helpful"])),
      h("td", {}, num(c.relevance)), h("td", {}, strengthCell(c)),
      h("td", { class: "graph-link", title: c.terms ? `adds ${num(c.terms.link_term)} to the score` : null }, term(c, "graph_link")),
      h("td", { class: "scope-bonus" }, term(c, "scope_bonus")), h("td", { class: "feedback-term" }, term(c, "feedback")),
      charged ? h("td", {}, term(c, "state_bonus")) : null,
      h("td", {}, h("strong", {}, num(c.score))))));
}

// Associative recall's additions: what spreading from the best memories reached.
function associations(items, recallId) {
  const via = { similar: "similar text", episode: "same episode", graph: "shared entity" };
  return table(["Memory", "Energy", "Reached via", "Hops"], items.map((a) =>
    h("tr", { "data-memory": a.memory_id }, h("td", { class: "text" }, h("a", { href: `/ui/memories/${a.memory_id}` }, a.text), feedbackButtons(recallId, a.memory_id, a.text, ["missed"])),
      h("td", {}, num(a.energy, 2)), h("td", {}, via[a.via] || a.via), h("td", {}, String(a.hops)))));
}

// What the score columns mean (DESIGN §3, `explain` in docs/api.md).
const SCORE_NOTE = "Score = relevance × (0.75 + 0.25 × S*) + graph-link weight × graph link + scope bonus + feedback (+ state match of a charged query). S* is the strength the cue restored.";

function answer(out, mode) {
  const flags = out.anomaly_flags.map((f) => h("li", {}, h("strong", {}, f.kind), ` ${f.text}`, f.differs ? ` — differs: ${f.differs}` : "", f.usual ? `; usual: ${f.usual}` : ""));
  return h("div", { class: "split", id: "recall-result" },
    h("section", { class: "card", "aria-labelledby": "r-prompt" }, h("h2", { id: "r-prompt" }, "Prompt slots"), h("pre", { class: "prompt" }, out.prompt)),
    h("section", { class: "card", "aria-labelledby": "r-struct" }, h("h2", { id: "r-struct" }, "Structured answer"),
      h("p", { class: "muted", id: "r-summary" }, `${out.empty ? "Nothing relevant. " : ""}Query charge ${out.query_charge === null || out.query_charge === undefined ? "off" : num(out.query_charge, 2)}; recall id ${out.recall_id || "none (feedback is off)"}.`),
      h("p", { class: "muted" }, SCORE_NOTE),
      h("h3", {}, `Anomaly flags (${out.anomaly_flags.length})`), flags.length ? h("ul", {}, flags) : h("p", { class: "muted" }, "none"),
      h("h3", {}, `Asker context: pinned (${out.asker_context.length})`), out.asker_context.length ? candidates(out.asker_context, out.recall_id) : h("p", { class: "muted" }, "none"),
      h("h3", {}, `Situational context (${out.situational_context.length})`), out.situational_context.length ? candidates(out.situational_context, out.recall_id) : h("p", { class: "muted" }, "nothing relevant"),
      h("h3", {}, `Episode context (${out.episode_context.length})`), out.episode_context.length ? candidates(out.episode_context, out.recall_id) : h("p", { class: "muted" }, "none"),
      out.associations.length || mode === "associative" ? [h("h3", { id: "r-assoc" }, `Associations (${out.associations.length})`),
        out.associations.length ? associations(out.associations, out.recall_id) : h("p", { class: "muted" }, "Spreading from the best memories reached nothing the answer does not show.")] : null,
      h("h3", {}, "Missed a memory?"), missedForm(out.recall_id),
      h("h3", {}, "Time per stage"),
      h("p", { class: "muted" }, `The graph lookup runs alongside embed and search; it ${out.timings_ms.graph_ok ? "answered" : "did not answer"} and linked ${out.timings_ms.graph_links ?? 0} memories.`),
      stacked(out.timings_ms),
      timings(out.timings_ms)));
}

export async function recallView(main) {
  const result = h("div", { "aria-live": "polite" });
  main.replaceChildren(h("h1", {}, "Recall playground"),
    h("p", { class: "muted" }, "Runs a real recall: what it returns is reinforced, as for an agent."),
    form(async (formEl) => {
      result.replaceChildren(h("p", { class: "muted" }, "Recalling…"));
      try {
        const req = body(fields(formEl));
        result.replaceChildren(answer(await api("POST", "/v1/recall", { body: req }), req.mode));
      } catch (err) {
        result.replaceChildren();
        showError(err);
      }
    }), result);
}
