// Browse and search: GET /v1/memories (filters, cursor pages) or, with a query,
// GET /v1/memories:search (meaning and words, reinforces nothing).

import { api } from "../api.js";
import { h, when, num, fields, table, fill } from "../dom.js";
import { go } from "../app.js";

const FILTERS = ["user_id", "scope", "workspace", "project", "state", "pinned", "source", "importance", "flagged"];
// Date fields of the form (a day) and the API's instants they stand for.
const DAYS = { from: "created_after", until: "created_before" };

function select(name, label, options, value) {
  return [h("label", { for: `f-${name}` }, label),
    h("select", { id: `f-${name}`, name }, options.map(([v, t]) => h("option", { value: v, selected: v === value }, t)))];
}

function text(name, label, value, attrs = {}) {
  return [h("label", { for: `f-${name}` }, label), h("input", { id: `f-${name}`, name, value: value || "", ...attrs })];
}

function filterForm(params) {
  return h("form", { class: "filters", role: "search", onsubmit: (ev) => {
    ev.preventDefault();
    go(`/ui/memories?${new URLSearchParams(fields(ev.target))}`);
  } },
  h("div", { class: "grow" }, text("q", "Search (meaning and words)", params.get("q"), { type: "search", placeholder: "e.g. where does Alice live" })),
  h("div", {}, text("user_id", "User", params.get("user_id"))),
  h("div", {}, select("scope", "Scope", [["", "any"], ["global", "global"], ["workspace", "workspace"], ["project", "project"]], params.get("scope") || "")),
  h("div", {}, text("workspace", "Workspace", params.get("workspace"))),
  h("div", {}, text("project", "Project", params.get("project"))),
  h("div", {}, select("state", "State", [["", "any"], ["active", "active"], ["archived", "archived"], ["superseded", "superseded"]], params.get("state") || "")),
  h("div", {}, select("pinned", "Pinned", [["", "any"], ["true", "pinned"], ["false", "not pinned"]], params.get("pinned") || "")),
  h("div", {}, select("source", "Source", [["", "any"], ...["api", "mcp", "hook", "import", "consolidation"].map((s) => [s, s])], params.get("source") || "")),
  h("div", {}, select("importance", "Importance", [["", "any"], ["high", "high"], ["normal", "normal"], ["low", "low"]], params.get("importance") || "")),
  h("div", {}, text("from", "Created from (day)", params.get("from"), { type: "date" })),
  h("div", {}, text("until", "Created before (day)", params.get("until"), { type: "date" })),
  h("div", { class: "checks" }, h("label", {}, h("input", { type: "checkbox", id: "f-flagged", name: "flagged", value: "true", checked: params.get("flagged") === "true" }), " flagged surprising")),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Apply"), h("a", { href: "/ui/memories", class: "button secondary" }, "Clear")));
}

function row(m) {
  return h("tr", {},
    h("td", { class: "text" }, h("a", { href: `/ui/memories/${m.id}` }, m.text.length > 140 ? m.text.slice(0, 140) + "…" : m.text)),
    h("td", {}, h("span", { class: `badge ${m.state}` }, m.state), m.pinned ? h("span", { class: "badge pinned" }, "pinned") : null),
    h("td", {}, [m.scope, m.workspace, m.project].filter(Boolean).join(" / ")),
    h("td", {}, m.user_id || "—"),
    h("td", {}, num(m.current_strength, 2)),
    h("td", {}, m.score === undefined ? when(m.created_at) : num(m.score, 3)));
}

function nextPage(params, offset, page) {
  const out = new URLSearchParams(params);
  out.set("offset", offset);
  out.set("page", page);
  out.delete("forgotten");
  return out;
}

export async function memoriesView(main, _, params) {
  const query = {};
  for (const f of FILTERS) if (params.get(f)) query[f] = params.get(f);
  for (const [day, instant] of Object.entries(DAYS)) if (params.get(day)) query[instant] = `${params.get(day)}T00:00:00Z`;
  const q = params.get("q");
  // The page (or the search) and the counts are asked for together.
  const found = q
    ? api("GET", "/v1/memories:search", { query: { ...query, q, limit: 50 } })
    : api("GET", "/v1/memories", { query: { ...query, limit: 25, offset: params.get("offset") || undefined, count: true } });
  found.catch(() => {}); // (awaited below, after the counts: no unhandled rejection meanwhile)
  const stats = await api("GET", "/v1/stats");
  fill(main,
    h("h1", {}, "Memories"),
    params.get("forgotten") ? h("p", { role: "status", class: "ok" }, "The memory was forgotten.") : null,
    h("p", { class: "muted" }, `${stats.memories} memories: ${stats.by_state.active} active, ${stats.by_state.archived} archived, ${stats.by_state.superseded} superseded; ${stats.pinned} pinned; ${stats.episode_records} episode records.`),
    filterForm(params));
  const { items, total, next_offset: next = null } = await found;
  const n = Number(params.get("page") || 1);
  const pages = Math.max(1, Math.ceil(total / 25));
  const filtered = FILTERS.some((f) => params.get(f)) || Object.keys(DAYS).some((d) => params.get(d));
  // The listing holds the episode records consolidation wrote too; the count is its own.
  const all = "in all (memories and episode records)";
  main.append(h("p", { id: "match-count" }, q
    // A search by meaning gives every memory a score: what it ranks is what the filters
    // let through, and the best of those are shown.
    ? `Best ${items.length} of the ${count(total)} ${filtered ? "the filters let through" : all}: the search ranks every one of them by meaning and words.`
    : `${count(total)} ${filtered ? (total === 1 ? "matches the filters" : "match the filters") : all}.`));
  const pager = h("nav", { class: "pager", "aria-label": "Pages" },
    n > 1 ? h("button", { type: "button", class: "secondary", onclick: () => history.back() }, "← Previous") : null,
    q ? h("span", { class: "muted" }, `${items.length} best matches`) : h("span", { class: "muted" }, `Page ${n} of ${pages}`),
    next ? h("a", { class: "button secondary", href: `/ui/memories?${nextPage(params, next, n + 1)}` }, "Next →") : null);
  main.append(items.length
    ? table(["Text", "State", "Scope", "User", "Strength", q ? "Match" : "Created"], items.map(row))
    : h("p", { class: "empty" }, "No memories match."), pager);
}

function count(n) {
  return n === 1 ? "1 memory" : `${n.toLocaleString("en")} memories`;
}
