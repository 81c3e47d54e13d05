// The inspector's page: routes /ui/... paths to views, signs in and out, shows errors in
// words. Views live in views/ and get the <main> element to fill.

import { api, key, ApiFailure } from "./api.js";
import { h } from "./dom.js";
import { memoriesView } from "./views/memories.js";
import { memoryView } from "./views/memory.js";
import { recallView } from "./views/recall.js";
import { governanceView } from "./views/governance.js";
import { pipelineView } from "./views/pipeline.js";
import { attentionView } from "./views/attention.js";

const main = document.getElementById("main");
const errorBox = document.getElementById("error");
const nav = document.getElementById("nav");

const ROUTES = [
  [/^\/ui\/memories\/?$/, memoriesView, "Memories"],
  [/^\/ui\/memories\/([^/]+)$/, memoryView, "Memory"],
  [/^\/ui\/recall\/?$/, recallView, "Recall"],
  [/^\/ui\/attention\/?$/, attentionView, "Attention"],
  [/^\/ui\/governance\/?$/, governanceView, "Governance"],
  [/^\/ui\/pipeline\/?$/, pipelineView, "Pipeline"],
];

export function showError(err) {
  const words = err instanceof ApiFailure ? err.message : `Something went wrong: ${err?.message || err}`;
  errorBox.replaceChildren(h("span", {}, words), h("button", { type: "button", onclick: () => (errorBox.hidden = true) }, "Dismiss"));
  errorBox.hidden = false;
  if (err instanceof ApiFailure && err.code === "unknown_api_key") {
    key.clear();
  }
}

export function go(path) {
  history.pushState(null, "", path);
  route();
}

function signIn(next) {
  nav.hidden = true;
  document.title = "Sign in · PCM inspector";
  const input = h("input", { id: "key", name: "key", type: "password", autocomplete: "off", required: true });
  const form = h("form", { class: "card narrow", onsubmit: async (ev) => {
    ev.preventDefault();
    errorBox.hidden = true;
    key.set(input.value.trim());
    try {
      await api("GET", "/v1/stats");
      go(next && next !== "/ui/" ? next : "/ui/memories");
    } catch (err) {
      key.clear();
      showError(err);
    }
  } },
  h("h1", {}, "Sign in"),
  h("p", {}, "Your API key decides the tenant: you see that tenant's memories only. The key stays in this tab (session storage) and goes only to this server."),
  h("label", { for: "key" }, "API key"), input,
  h("button", { type: "submit" }, "Sign in"));
  main.replaceChildren(form);
  input.focus();
}

// Each route() call's number: a view still loading when another page was opened must not
// replace that page when it finishes.
let generation = 0;

async function route() {
  const mine = ++generation;
  errorBox.hidden = true;
  const path = location.pathname;
  if (!key.get() || path === "/ui/" || path === "/ui/signin") {
    if (key.get() && path === "/ui/") return go("/ui/memories");
    return signIn(new URLSearchParams(location.search).get("next") || (path.startsWith("/ui/signin") ? "" : path + location.search));
  }
  nav.hidden = false;
  for (const a of nav.querySelectorAll("a")) a.toggleAttribute("aria-current", path.startsWith(a.getAttribute("href")));
  for (const [pattern, view, title] of ROUTES) {
    const m = path.match(pattern);
    if (!m) continue;
    document.title = `${title} · PCM inspector`;
    main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    // The view fills a page of its own, shown once it is done (and still wanted).
    const page = h("div", { class: "page" });
    try {
      await view(page, m.slice(1).map(decodeURIComponent), new URLSearchParams(location.search));
    } catch (err) {
      if (mine !== generation) return;
      showError(err);
      page.replaceChildren(h("h1", {}, err instanceof ApiFailure && err.status === 404 ? "Not found" : "Could not load this page"), h("p", {}, err.message));
    }
    if (mine !== generation) return;
    main.replaceChildren(page);
    main.focus({ preventScroll: true });
    return;
  }
  main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, "The inspector has no page at this address."));
}

document.addEventListener("click", (ev) => {
  const a = ev.target.closest?.("a[href^='/ui/']");
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || a.target) return;
  ev.preventDefault();
  go(a.getAttribute("href"));
});
document.getElementById("signout").addEventListener("click", () => {
  key.clear();
  go("/ui/signin");
});
window.addEventListener("popstate", route);
window.addEventListener("unhandledrejection", (ev) => showError(ev.reason));
route();
