// Small DOM helpers: elements are built with text nodes, never from HTML strings, so a
// memory's text is always shown as text.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

export function num(x, digits = 3) {
  return typeof x === "number" ? x.toFixed(digits) : "—";
}

// A form's named fields as an object of the non-empty ones.
export function fields(form) {
  const out = {};
  for (const [k, v] of new FormData(form).entries()) if (String(v).trim() !== "") out[k] = String(v).trim();
  return out;
}

export function table(headers, rows) {
  return h("div", { class: "scroll" },
    h("table", {},
      h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows)));
}

export function dl(pairs) {
  return h("dl", { class: "facts" }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "—")]));
}

// Replace an element's children, leaving out the absent ones (null, false, undefined).
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

// Run `draw` once `el` is in the document (views are built off-screen and shown when
// done; a plot needs its box's size). Given up after about ten seconds: the page was left.
export function whenShown(el, draw) {
  let frames = 600;
  const tick = () => {
    if (el.isConnected) draw();
    else if (frames-- > 0) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
