// The value graph: filtered, grouped when large, laid out by dagre and
// drawn as SVG (keys are text).
import dagre from "./vendor/dagre/dagre.esm.js";
import { svg } from "./dom.js";

// Above this many values the graph is drawn as groups (auto grouping).
export const LIMIT = 300;
const ATTENTION = ["FAILED", "PENDING", "RETRYING", "INVALID", "MISSING", "UNIMPLEMENTED"];

export function filterNodes(nodes, f) {
  const out = [];
  for (const n of nodes.values()) {
    if (f.prefix && !n.key.startsWith(f.prefix)) continue;
    if (f.descriptor && n.descriptor !== f.descriptor) continue;
    if (f.state && n.state !== f.state) continue;
    if (f.owner && n.owner !== f.owner) continue;
    out.push(n);
  }
  return out;
}

export function rank(state) {
  const i = ATTENTION.indexOf(state);
  return i < 0 ? ATTENTION.length : i;
}

// groupBy returns what the nodes are grouped by ("descriptor", "owner" or
// "prefix") and the function naming a node's group, or [null, null] to draw
// the nodes themselves.
function groupBy(list, mode) {
  if (list.length === 0 || mode === "none" || (mode === "auto" && list.length <= LIMIT)) return [null, null];
  const by = {
    descriptor: (n) => n.descriptor || "",
    owner: (n) => n.owner || "",
  };
  if (by[mode]) return [mode, by[mode]];
  for (const kind of ["descriptor", "owner"]) {
    if (new Set(list.map(by[kind])).size > 1) return [kind, by[kind]];
  }
  // One descriptor and owner: group by the first key segment that differs.
  const depth = commonDepth(list.map((n) => n.key));
  const bySegment = (n) => n.key.split("/").slice(0, depth + 1).join("/") + "/";
  if (distinct(list, bySegment) <= LIMIT) return ["prefix", bySegment];
  // That segment is (nearly) one per value (names of one kind in one
  // namespace): group by its leading characters, as many as keep the
  // groups within LIMIT, so that 10,000 values are not 10,000 groups.
  const lead = (len) => (n) => {
    const s = n.key.split("/");
    return s.slice(0, depth).concat([(s[depth] || "").slice(0, len)]).join("/");
  };
  let best = 0;
  for (let len = 1; len <= 64; len++) {
    const count = distinct(list, lead(len));
    if (count > LIMIT) break;
    if (count > 1) best = len;
  }
  if (best) return ["prefix", lead(best)];
  return ["state", (n) => n.state];
}

function distinct(list, f) {
  const seen = new Set();
  for (const n of list) seen.add(f(n));
  return seen.size;
}

function commonDepth(keys) {
  const first = keys[0].split("/");
  let d = first.length - 1;
  for (const k of keys) {
    const s = k.split("/");
    let i = 0;
    while (i < d && s[i] === first[i]) i++;
    d = i;
  }
  return d;
}

// layout turns the filtered nodes into boxes and edges with coordinates.
export function layout(list, mode) {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  g.setGraph({ rankdir: "LR", nodesep: 8, ranksep: 50, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  const [groupKind, group] = groupBy(list, mode);
  const boxes = new Map();
  if (!group) {
    for (const n of list) boxes.set(n.key, { id: n.key, label: n.key, node: n, width: 14 + 6.8 * n.key.length, height: 24 });
  } else {
    for (const n of list) {
      const id = "group:" + group(n);
      let b = boxes.get(id);
      if (!b) boxes.set(id, (b = { id, name: group(n), group: true, counts: {}, total: 0, height: 40 }));
      b.counts[n.state] = (b.counts[n.state] || 0) + 1;
      b.total++;
    }
    for (const b of boxes.values()) {
      b.worst = Object.keys(b.counts).sort((x, y) => rank(x) - rank(y))[0];
      b.label = (b.name || "(none)") + " (" + b.total + ")";
      b.sub = Object.entries(b.counts).map(([s, c]) => c + " " + s).join(", ");
      b.width = 20 + 6.8 * Math.max(b.label.length, b.sub.length);
    }
  }
  for (const b of boxes.values()) g.setNode(b.id, b);
  const idOf = (k, byKey) => (group ? (byKey.has(k) ? "group:" + group(byKey.get(k)) : null) : (boxes.has(k) ? k : null));
  const byKey = new Map(list.map((n) => [n.key, n]));
  const edges = new Map();
  // An edge drawn for several dependencies (grouped) is unmet if one is,
  // and ordering-only only if all are.
  const addEdge = (from, to, cls, ordering) => {
    if (!from || !to || from === to) return;
    const id = from + "\u0000" + to;
    const e = edges.get(id);
    if (!e) edges.set(id, { from, to, cls, ordering });
    else edges.set(id, { from, to, cls: cls === "unmet" ? cls : e.cls, ordering: e.ordering && ordering });
  };
  for (const n of list) {
    for (const d of n.deps || []) addEdge(idOf(n.key, byKey), idOf(d.key, byKey), d.met ? "met" : "unmet", !!d.ordering);
    if (n.base) addEdge(idOf(n.key, byKey), idOf(n.base, byKey), "derived");
  }
  for (const e of edges.values()) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const out = { boxes: [], edges: [], width: g.graph().width || 0, height: g.graph().height || 0, grouped: groupKind };
  for (const id of g.nodes()) out.boxes.push(g.node(id));
  for (const e of edges.values()) out.edges.push({ ...e, points: g.edge(e.from, e.to).points });
  return out;
}

// draw renders a layout into the viewport group.
// Clicks are handled by the SVG (see panZoom), not by each element: the
// graph is redrawn when values change, and a click whose element was
// replaced between press and release would otherwise be lost.
export function draw(viewport, lay, selected) {
  const parts = [];
  for (const e of lay.edges) {
    const d = "M" + e.points.map((p) => p.x.toFixed(1) + "," + p.y.toFixed(1)).join("L");
    // Ordering-only dependencies are drawn with a hollow arrowhead: the
    // value stays when what it is ordered after goes.
    parts.push(svg("path", { class: "edge " + e.cls + (e.ordering ? " ordering" : ""), d,
      "marker-end": e.ordering ? "url(#arrow-ordering)" : "url(#arrow)" }));
  }
  for (const b of lay.boxes) {
    const x = b.x - b.width / 2, y = b.y - b.height / 2;
    if (b.group) {
      parts.push(svg("g", { class: "group", "data-group": b.name, "data-total": b.total, "data-kind": lay.grouped, transform: `translate(${x},${y})` },
        svg("rect", { width: b.width, height: b.height, class: "S-" + b.worst, "fill-opacity": 0.5 }),
        svg("text", { x: 8, y: 16 }, b.label), svg("text", { x: 8, y: 31 }, b.sub)));
      continue;
    }
    const n = b.node;
    parts.push(svg("g", { class: "node" + (n.key === selected ? " sel" : ""), "data-key": n.key, "data-state": n.state,
      transform: `translate(${x},${y})` },
      svg("title", {}, n.key + " — " + n.state + (n.reasons ? "\n" + n.reasons.join("\n") : "") + (n.error ? "\n" + n.error : "")),
      svg("rect", { width: b.width, height: b.height, class: "S-" + n.state }),
      svg("text", { x: 7, y: 16 }, n.key)));
  }
  const marker = { viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" };
  const defs = svg("defs", {}, svg("marker", { id: "arrow", ...marker }, svg("path", { d: "M0,0L10,5L0,10z", fill: "#8c959f" })),
    svg("marker", { id: "arrow-ordering", ...marker }, svg("path", { d: "M1,1L9,5L1,9z", fill: "#fff", stroke: "#8c959f" })));
  viewport.replaceChildren(defs, ...parts);
}

// panZoom makes the SVG draggable and zoomable with the wheel; a press and
// release without a drag selects the node (onNode(key)) or the group
// (onGroup(kind, name)) under the pointer at release.
export function panZoom(svgEl, viewport, onNode, onGroup) {
  const v = { x: 0, y: 0, k: 1 };
  const apply = () => viewport.setAttribute("transform", `translate(${v.x},${v.y}) scale(${v.k})`);
  let drag = null, press = null;
  svgEl.addEventListener("mousedown", (e) => { drag = { x: e.clientX - v.x, y: e.clientY - v.y }; press = { x: e.clientX, y: e.clientY }; });
  window.addEventListener("mouseup", () => { drag = null; });
  svgEl.addEventListener("mouseup", (e) => {
    if (!press || Math.abs(e.clientX - press.x) + Math.abs(e.clientY - press.y) > 4) return;
    press = null;
    const t = e.target.closest && e.target.closest("g.node, g.group");
    if (t && t.classList.contains("node")) onNode(t.dataset.key);
    else if (t) onGroup(t.dataset.kind, t.dataset.group);
  });
  svgEl.addEventListener("mousemove", (e) => { if (drag) { v.x = e.clientX - drag.x; v.y = e.clientY - drag.y; apply(); } });
  svgEl.addEventListener("wheel", (e) => {
    e.preventDefault();
    const f = e.deltaY < 0 ? 1.15 : 1 / 1.15;
    const r = svgEl.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
    v.x = px - (px - v.x) * f; v.y = py - (py - v.y) * f; v.k *= f; apply();
  }, { passive: false });
  return {
    fit(w, h) {
      const r = svgEl.getBoundingClientRect();
      v.k = Math.min(1.5, (r.width || 800) / (w || 1), (r.height || 600) / (h || 1));
      v.x = 0; v.y = 0; apply();
    },
  };
}
