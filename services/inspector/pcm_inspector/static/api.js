// The HTTP API with the signed-in key. The inspector reads nothing else: what it shows is
// what this key may read through the API.

const KEY = "pcm-inspector-key";

export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// What each error code means to a person.
const WORDS = {
  memory_not_found: "Not found: there is no memory with this id for your key.",
  missing_api_key: "You are not signed in.",
  unknown_api_key: "This key was refused (unknown, revoked or expired). Sign in again.",
  forbidden: "Your key may not do this (it needs an admin key).",
  rate_limited: "Too many requests: wait a moment and try again.",
  unavailable: "PCM cannot reach its stores right now; try again shortly.",
  invalid_scope: "That scope is incomplete: a workspace scope needs a workspace, a project scope a project.",
  policy_not_found: "This scope has no policy.",
  secret_detected: "Refused: the text contains what looks like a secret (nothing was stored).",
  text_too_large: "The text is too long.",
  job_running: "That job is already running.",
  dead_letter_not_found: "That dead letter is gone: it was retried already (here or elsewhere) or trimmed by age.",
  dead_letter_busy: "The dead letters kept changing while retrying; nothing was sent. Try again.",
  recall_not_found: "That recall is no longer kept for feedback (recalls are kept for a while, then forgotten). Run it again.",
  invalid_feedback: "That feedback does not fit this recall; nothing was changed.",
};

export const key = {
  get: () => sessionStorage.getItem(KEY),
  set: (k) => sessionStorage.setItem(KEY, k),
  clear: () => sessionStorage.removeItem(KEY),
};

function detailWords(detail) {
  if (Array.isArray(detail)) {
    return detail.map((d) => (d.loc ? `${d.loc.slice(1).join(".")}: ${d.msg}` : JSON.stringify(d))).join("; ");
  }
  return typeof detail === "string" ? detail : "";
}

export async function api(method, path, { body, query, auth = true } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== "") url.searchParams.set(k, v);
  const headers = {};
  if (auth) headers.Authorization = `Bearer ${key.get() || ""}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let resp;
  try {
    resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiFailure(0, "network", "PCM did not answer: is the server running?");
  }
  if (resp.status === 204) return null;
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    const code = data?.error || "error";
    const extra = detailWords(data?.detail);
    const words = WORDS[code] || `The request failed (${resp.status}${code ? ", " + code : ""}).`;
    throw new ApiFailure(resp.status, code, extra && !WORDS[code] ? `${words} ${extra}` : words);
  }
  return data;
}
