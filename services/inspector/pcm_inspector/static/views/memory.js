// One memory: text and metadata, versions with diffs, the supersession chain, strength
// over time, surprisal, episode, graph neighbourhood, and the actions pin/unpin, edit,
// forget, and feedback (helpful, not helpful, wrong). Each part reads its own API route; a part that fails says so in words and the
// rest of the page stays.

import { api, ApiFailure } from "../api.js";
import { h, when, num, dl, whenShown } from "../dom.js";
import { go, showError } from "../app.js";
import { strengthPlot, graphDrawing, legend } from "./charts.js";

const link = (id, text) => h("a", { href: `/ui/memories/${id}` }, text || id);

function section(title, id, ...body) {
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), ...body);
}

async function part(title, id, load) {
  try {
    return await load();
  } catch (err) {
    return section(title, id, h("p", { class: "problem" }, err instanceof ApiFailure ? err.message : `Could not draw this part: ${err.message}`));
  }
}

// Word-level diff of two versions (jsdiff), added and removed words marked.
function diffOf(before, after) {
  // eslint-disable-next-line no-undef
  return h("p", { class: "diff" }, Diff.diffWords(before, after).map((p) =>
    p.added ? h("ins", {}, p.value) : p.removed ? h("del", {}, p.value) : p.value));
}

async function chain(mem) {
  // Follow each direction a few steps: older facts this one replaced, newer ones.
  const older = [], newer = [];
  for (let id = mem.supersedes, n = 0; id && n < 5; n++) {
    const m = await api("GET", `/v1/memories/${id}`).catch(() => null);
    if (!m) break;
    older.push(m);
    id = m.supersedes;
  }
  for (let id = mem.superseded_by, n = 0; id && n < 5; n++) {
    const m = await api("GET", `/v1/memories/${id}`).catch(() => null);
    if (!m) break;
    newer.push(m);
    id = m.superseded_by;
  }
  const item = (m, note) => h("li", {}, link(m.id, m.text), h("span", { class: "muted" }, ` · ${note} · ${when(m.created_at)}`));
  return [...older.reverse().map((m) => item(m, "older")), h("li", { class: "current" }, mem.text, h("span", { class: "muted" }, " · this memory")), ...newer.map((m) => item(m, "newer"))];
}

// What a feedback answer changed, in words (POST /v1/memories/{id}/feedback).
export function feedbackWords(signal, out) {
  const label = { helpful: "helpful", not_helpful: "not helpful", wrong: "wrong" }[signal] || signal;
  if (!Object.keys(out.changed || {}).length) return `Already marked ${label}: nothing changed.`;
  const parts = [`Marked ${label}.`];
  if (signal === "helpful") parts.push("It ranks a little higher from now on.");
  else parts.push("It ranks a little lower from now on.");
  if ((out.reinforced || []).length) parts.push("Its strength is reinforced.");
  if ((out.reconsolidation || []).length) parts.push("A rewrite from newer information was requested.");
  return parts.join(" ");
}

function feedbackButtons(mem) {
  const said = h("span", { class: "muted said", "aria-live": "polite", id: "feedback-result" });
  const send = (signal) => async () => {
    try {
      const out = await api("POST", `/v1/memories/${mem.id}/feedback`, { body: { signal } });
      said.textContent = feedbackWords(signal, out);
    } catch (err) { showError(err); }
  };
  return h("div", { class: "toolbar feedback", role: "group", "aria-label": "Feedback" },
    h("span", {}, "Feedback:"),
    h("button", { type: "button", class: "secondary", id: "feedback-helpful", onclick: send("helpful") }, "Helpful"),
    h("button", { type: "button", class: "secondary", id: "feedback-not-helpful", onclick: send("not_helpful") }, "Not helpful"),
    h("button", { type: "button", class: "danger", id: "feedback-wrong", title: "What it says is wrong: it is rewritten from newer information", onclick: send("wrong") }, "Wrong"),
    said);
}

function actions(mem, main) {
  const status = h("p", { class: "muted", role: "status" });
  const editor = h("form", { class: "editor", hidden: true, onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api("PATCH", `/v1/memories/${mem.id}`, { body: { text: ev.target.text.value } });
      go(`/ui/memories/${mem.id}`);
    } catch (err) { showError(err); }
  } },
  h("label", { for: "edit-text" }, "Text"),
  h("textarea", { id: "edit-text", name: "text", rows: 4 }, mem.text),
  h("button", { type: "submit" }, "Save"),
  h("button", { type: "button", class: "secondary", onclick: () => (editor.hidden = true) }, "Cancel"));
  const confirm = h("div", { class: "confirm", hidden: true },
    h("span", {}, "Forget this memory? It is deleted with its graph facts; this cannot be undone."),
    h("button", { type: "button", class: "danger", id: "forget-confirm", onclick: async () => {
      try {
        await api("DELETE", `/v1/memories/${mem.id}`);
        go(`/ui/memories?forgotten=${mem.id}`);
      } catch (err) { showError(err); }
    } }, "Forget for good"),
    h("button", { type: "button", class: "secondary", onclick: () => (confirm.hidden = true) }, "Cancel"));
  return h("div", { class: "toolbar" },
    h("button", { type: "button", onclick: async () => {
      try {
        await api("PATCH", `/v1/memories/${mem.id}`, { body: { pinned: !mem.pinned } });
        go(`/ui/memories/${mem.id}`);
      } catch (err) { showError(err); }
    } }, mem.pinned ? "Unpin" : "Pin"),
    h("button", { type: "button", onclick: () => { editor.hidden = false; editor.text.focus(); } }, "Edit"),
    h("button", { type: "button", class: "danger", onclick: () => { confirm.hidden = false; confirm.querySelector("button").focus(); } }, "Forget"),
    status, editor, confirm);
}

function overview(mem, main) {
  return h("section", { class: "card", "aria-labelledby": "mem-title" },
    h("h1", { id: "mem-title" }, "Memory"),
    h("blockquote", { class: "memtext" }, mem.text),
    h("p", {}, h("span", { class: `badge ${mem.state}` }, mem.state), mem.pinned ? h("span", { class: "badge pinned" }, "pinned") : null,
      h("span", { class: "badge" }, `importance ${mem.importance}`), h("span", { class: "badge" }, `strength ${num(mem.current_strength, 3)}`)),
    actions(mem, main),
    feedbackButtons(mem),
    dl([
      ["id", mem.id], ["created", when(mem.created_at)], ["stored", when(mem.ingested_at)],
      ["scope", [mem.scope, mem.workspace, mem.project].filter(Boolean).join(" / ")],
      ["user", mem.user_id || "everyone"], ["source", mem.source], ["episode", mem.episode],
      ["version", mem.version], ["repeats", (mem.repeats || []).length],
      ["metadata", h("pre", {}, JSON.stringify(mem.metadata || {}, null, 2))],
    ]));
}

// Why a version was replaced (`reason` of GET /v1/memories/{id}/history): a PATCH with a
// new text, or the sweeper's reconsolidation from a newer memory (`by`).
function replacedBy(v) {
  if (v.reason === "edit") return "edited";
  if (v.reason === "reconsolidation") return "rewritten by reconsolidation";
  return "replaced";
}

async function historyPart(mem) {
  const hist = await api("GET", `/v1/memories/${mem.id}/history`);
  const versions = hist.versions;
  const items = versions.map((v, i) => h("li", {}, h("strong", {}, `version ${v.version ?? i + 1}${v.current ? " (current)" : ""}`),
    h("span", { class: "muted" }, ` · since ${when(v.at)}`),
    v.changed_at ? h("span", { class: "reason" }, ` · ${replacedBy(v)} ${when(v.changed_at)}`, v.by ? [" from ", link(v.by, "the newer memory")] : null) : null,
    i === 0 ? h("p", {}, v.text) : diffOf(versions[i - 1].text, v.text)));
  return section("Versions and supersession", "mem-history",
    h("ol", { class: "versions" }, items),
    h("h3", {}, "Supersession chain (oldest first)"),
    h("ol", { class: "chain" }, await chain(mem)));
}

// What the replayed past rests on, in words: the recorded events it replays, and what the
// record does not keep (earlier recalls, activation spread from other recalls).
function pastSentence(view) {
  const r = view.replay;
  if (!r || !view.past.length) return null;
  const repeats = view.events.filter((e) => e.kind === "repeat").length;
  const kept = [repeats ? `${repeats} repeat${repeats === 1 ? "" : "s"}` : null,
    view.events.some((e) => e.kind === "recall") ? "the last recall" : null].filter(Boolean);
  const parts = [`Before the last reinforcement (light line): replayed from its creation at ${num(r.initial, 2)}` +
    (kept.length ? ` through its ${kept.join(" and ")}, the events the record keeps.` : "; the record keeps no event before it.")];
  if (r.unrecorded > 0) {
    parts.push(`${r.unrecorded} earlier spaced ${r.unrecorded === 1 ? "reinforcement (a recall) is" : "reinforcements (recalls) are"} counted but not recorded with a time, so the light line leaves ${r.unrecorded === 1 ? "it" : "them"} out.`);
  }
  if (Math.abs(r.jump) >= 0.001) {
    parts.push(`At the last reinforcement the stored strength is ${num(view.s_ref, 3)} where the replay reaches ${num(r.end_strength, 3)}: the difference is what unrecorded recalls and activation spread from other memories' recalls added.`);
  }
  return h("p", { id: "strength-past" }, parts.join(" "));
}

async function strengthPart(mem) {
  const view = await api("GET", `/v1/memories/${mem.id}/strength`);
  const box = h("div", { class: "plot", id: "strength-plot", role: "img", "aria-label": `Strength ${num(view.current, 3)} now` });
  const out = section("Strength over time", "mem-strength",
    h("p", {}, view.pinned ? "Pinned: strength stays 1 and the memory is never demoted." :
      `Now ${num(view.current, 3)}; decays with a time constant of ${num(view.tau_days, 1)} days (${view.n} spaced reinforcements). ` +
      (view.crosses_threshold_at ? `Falls below the demotion threshold ${view.threshold} on ${when(view.crosses_threshold_at)}; ` : "") +
      (view.demotable_at ? `archived no earlier than ${when(view.demotable_at)} if not recalled.` : "")),
    box,
    pastSentence(view),
    legend([
      ...(view.past.length ? [["past", "before the last reinforcement, replayed from the recorded events"]] : []),
      ["line", "strength since the last reinforcement"], ["dash", "projected decay"],
      ["dot", "events: " + view.events.map((e) => `${e.kind} ${when(e.at)}`).join(", ")], ["threshold", "demotion threshold"]]));
  whenShown(box, () => strengthPlot(box, view));
  return out;
}

function surprisalPart(mem) {
  const s = mem.surprisal || {};
  const family = s.family_ids || [];
  return section("Surprisal", "mem-surprisal",
    s.judged_at ? dl([
      ["verdict", s.score === null || s.score === undefined ? "not judged (family too small)" : `${num(s.score, 2)} (0–1; 0.7 and above is flagged as a surprise)`],
      ["what differs", s.differs || "nothing"], ["what is usual", s.usual || "—"], ["judged", when(s.judged_at)],
      ["family", family.length ? h("ul", {}, family.slice(0, 12).map((id) => h("li", {}, link(id)))) : "none"],
    ]) : h("p", { class: "muted" }, "Not judged yet: the sweeper judges memories shortly after they are written."));
}

// The memory's episode: its record (what consolidation made of it), and the other memories
// of the episode in time order.
async function episodePart(mem) {
  if (!mem.episode) return section("Episode", "mem-episode", h("p", { class: "muted" }, "No episode."));
  const { items } = await api("GET", "/v1/memories", { query: { episode: mem.episode, limit: 100 } });
  const records = items.filter((m) => m.source === "consolidation");
  const members = items.filter((m) => m.source !== "consolidation").sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  return section("Episode", "mem-episode",
    h("p", {}, `Episode ${mem.episode}: ${members.length} memories${items.length === 100 ? " (the first 100)" : ""}.`),
    records.length ? [h("h3", {}, "Episode record"), records.map((r) => h("blockquote", { class: "record" }, link(r.id, r.text)))]
      : h("p", { class: "muted" }, "No episode record yet: consolidation writes one once the episode is over."),
    h("ol", { class: "episode" }, members.map((m) => h("li", { class: m.id === mem.id ? "current" : "" },
      m.id === mem.id ? m.text : link(m.id, m.text), h("span", { class: "muted" }, ` · ${when(m.created_at)}`)))));
}

async function graphPart(mem) {
  const g = await api("GET", `/v1/memories/${mem.id}/graph`);
  const box = h("div", { class: "graph", id: "graph-view", role: "img", "aria-label": `Graph: ${g.entities.length} entities, ${g.memories.length} linked memories` });
  const list = h("ul", { class: "linked" }, g.memories.map((m) => h("li", {}, link(m.id, m.text), h("span", { class: "muted" }, ` · shares ${m.shares.join(", ")}`))));
  const out = section("Graph neighbourhood", "mem-graph",
    g.entities.length ? h("p", {}, `Entities: ${g.entities.map((e) => `${e.name} (${e.type})`).join(", ")}.` + (g.relations.length ? ` Relations: ${g.relations.map((r) => `${r.source.name} ${r.type} ${r.target.name}`).join("; ")}.` : ""))
      : h("p", { class: "muted" }, g.extracted ? "No entities found in this memory." : "Not extracted yet."),
    box,
    legend([["self", "this memory"], ["entity", "entity"], ["memory", "linked memory"], ["relation", "typed relation"]]),
    g.memories.length ? h("h3", {}, "Linked memories") : null, list);
  whenShown(box, () => graphDrawing(box, mem.id, g));
  return out;
}

export async function memoryView(main, [id]) {
  const mem = await api("GET", `/v1/memories/${id}`);
  main.replaceChildren(overview(mem, main));
  const parts = await Promise.all([
    part("Strength over time", "mem-strength", () => strengthPart(mem)),
    part("Graph neighbourhood", "mem-graph", () => graphPart(mem)),
    part("Versions and supersession", "mem-history", () => historyPart(mem)),
    part("Episode", "mem-episode", () => episodePart(mem)),
    part("Surprisal", "mem-surprisal", async () => surprisalPart(mem)),
  ]);
  main.append(...parts);
}
