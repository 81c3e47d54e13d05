// Governance: the tenant's scope policies (GET /v1/governance), set one (PUT), clear one
// (DELETE), and the policy in force for a scope.

import { api } from "../api.js";
import { h, fields, table, fill } from "../dom.js";
import { go, showError } from "../app.js";

const MODES = ["", "all", "manual_only", "hooks_only"];

function editor(p = {}) {
  const input = (name, label, attrs = {}) => h("div", {}, h("label", { for: `g-${name}` }, label), h("input", { id: `g-${name}`, name, value: p[name] ?? "", ...attrs }));
  return h("form", { class: "filters", id: "policy-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const f = fields(ev.target);
    const body = { scope: f.scope, workspace: f.workspace || "", project: f.project || "" };
    if (f.capture_mode) body.capture_mode = f.capture_mode;
    if (f.retention_days) body.retention_days = Number(f.retention_days);
    if (f.max_memories) body.max_memories = Number(f.max_memories);
    try {
      await api("PUT", "/v1/governance", { body });
      go("/ui/governance?saved=1");
    } catch (err) { showError(err); }
  } },
  h("div", {}, h("label", { for: "g-scope" }, "Scope"), h("select", { id: "g-scope", name: "scope" }, ["global", "workspace", "project"].map((s) => h("option", { value: s, selected: s === p.scope }, s)))),
  input("workspace", "Workspace"), input("project", "Project"),
  h("div", {}, h("label", { for: "g-capture_mode" }, "Capture mode"), h("select", { id: "g-capture_mode", name: "capture_mode" }, MODES.map((m) => h("option", { value: m, selected: m === (p.capture_mode ?? "") }, m || "inherit")))),
  input("retention_days", "Retention (days)", { type: "number", min: 1 }),
  input("max_memories", "Max memories", { type: "number", min: 1 }),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Save policy")));
}

export async function governanceView(main, _, params) {
  const { policies } = await api("GET", "/v1/governance");
  let form = editor();
  const rows = policies.map((p) => h("tr", {},
    h("td", {}, [p.scope, p.workspace, p.project].filter(Boolean).join(" / ")),
    h("td", {}, p.capture_mode ?? "inherit"), h("td", {}, p.retention_days ?? "inherit"), h("td", {}, p.max_memories ?? "inherit"),
    h("td", {},
      h("button", { type: "button", class: "secondary", onclick: () => { const next = editor(p); form.replaceWith(next); form = next; next.querySelector("#g-scope").focus(); } }, "Edit"),
      h("button", { type: "button", class: "danger", onclick: async () => {
        try {
          await api("DELETE", "/v1/governance", { query: { scope: p.scope, workspace: p.workspace, project: p.project } });
          go("/ui/governance");
        } catch (err) { showError(err); }
      } }, "Clear"))));
  fill(main, h("h1", {}, "Governance"),
    params.get("saved") ? h("p", { role: "status", class: "ok" }, "Policy saved.") : null,
    h("p", { class: "muted" }, "Each scope may set how memories are captured, how long they are kept and how many; what a policy leaves out it inherits from the wider scope."),
    policies.length ? table(["Scope", "Capture mode", "Retention (days)", "Max memories", ""], rows) : h("p", { class: "empty" }, "No policies: every scope keeps the defaults."),
    h("h2", {}, "Set a policy"), form);
}
