// Small DOM helpers: every text goes through textContent, never innerHTML,
// since keys, errors and descriptions come from the cluster.
const SVG = "http://www.w3.org/2000/svg";

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  return fill(e, attrs, children);
}

export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

function fill(e, attrs, children) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// put replaces the children of parent, leaving out the absent ones
// (replaceChildren would write "null").
export function put(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false && c !== ""));
}

// firstLine shortens a transaction's description (the loop's list every
// handler's change on lines of their own) for a table cell.
export function firstLine(s, max = 90) {
  const line = (s || "").split("\n")[0];
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

export function badge(state) {
  return el("span", { class: "badge S-" + state }, state);
}

export async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()));
  return r.json();
}

export function time(t) {
  return new Date(t).toLocaleTimeString();
}
