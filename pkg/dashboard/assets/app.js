// The dashboard page: loads the graph and the histories, then follows the
// operator over Server-Sent Events. Plain ES modules, no build step.
import { el, put, badge, getJSON, time } from "./dom.js";
import { filterNodes, layout, draw, panZoom, rank } from "./graph.js";
import { showValue, addEvent, addTxn, addDropped, showControllers, showReplicas } from "./views.js";

const $ = (id) => document.getElementById(id);
const live = new Map(); // key -> node, as the stream keeps it
let travel = null; // the nodes of a past graph while time travelling
let selected = null;
let lastEvent = -1, lastTxn = -1;
let run = ""; // the operator run the numbers above are of (api/info, hello)
const txnSeqs = []; // retained transactions, for time travel (oldest first)
let lastFit = "";
// Exposed for the browser tests and anyone curious: renders and their time.
const stats = (window.lariatDashboard = { renders: 0, lastRenderMs: 0, connected: false, graphLoads: 0, travelSeqs: txnSeqs });
const pz = panZoom($("graph"), $("viewport"), (k) => select(k), (kind, name) => drill(kind, name));

const filters = () => ({ prefix: $("filter-prefix").value, descriptor: $("filter-descriptor").value, state: $("filter-state").value, owner: $("filter-owner").value });

function render() {
  const t0 = performance.now();
  const nodes = travel || live;
  const list = filterNodes(nodes, filters());
  list.sort((a, b) => rank(a.state) - rank(b.state) || (a.key < b.key ? -1 : 1));
  $("counts").textContent = list.length + " of " + nodes.size + " values";
  renderList(list);
  const lay = layout(list, $("group").value);
  draw($("viewport"), lay, selected);
  // Fitted again when what is drawn changes (not when states change), so
  // that a new value is not left outside the view.
  const fitKey = JSON.stringify(filters()) + $("group").value + (travel ? "travel" : "") + lay.grouped + lay.boxes.length;
  if (fitKey !== lastFit) { pz.fit(lay.width, lay.height); lastFit = fitKey; }
  options(nodes);
  Object.assign($("graph").dataset, { grouped: lay.grouped || "", count: list.length });
  stats.renders++;
  stats.lastRenderMs = performance.now() - t0;
  // Time from navigation to the first frame showing values.
  if (!stats.firstPaintMs && nodes.size) requestAnimationFrame(() => { stats.firstPaintMs = stats.firstPaintMs || performance.now(); });
}

let pending = 0;
function schedule() {
  if (!pending) pending = setTimeout(() => { pending = 0; render(); }, 100);
}

// renderList lists the filtered values, those needing attention first.
function renderList(list) {
  const rows = list.slice(0, 200).map((n) => el("div", { class: "row" + (n.key === selected ? " sel" : ""), "data-key": n.key, "data-state": n.state, onclick: () => select(n.key) },
    badge(n.state), el("span", { class: "key" }, n.key),
    ...(n.reasons || []).map((r) => el("div", { class: "why" }, r)), n.error ? el("div", { class: "err" }, n.error) : null));
  if (list.length > 200) rows.push(el("p", { class: "hint" }, list.length - 200 + " more: filter to see them"));
  $("attention").replaceChildren(...rows);
}

// options offers the descriptors, states and owners present.
function options(nodes) {
  const sets = { "filter-descriptor": new Set(), "filter-state": new Set(), "filter-owner": new Set() };
  for (const n of nodes.values()) {
    if (n.descriptor) sets["filter-descriptor"].add(n.descriptor);
    sets["filter-state"].add(n.state);
    if (n.owner) sets["filter-owner"].add(n.owner);
  }
  for (const [id, set] of Object.entries(sets)) {
    const sel = $(id), have = new Set([...sel.options].map((o) => o.value));
    for (const v of [...set].sort()) if (!have.has(v)) sel.append(el("option", { value: v }, v));
  }
}

// detailGen numbers what the detail pane was last asked to show: a live
// detail answered after the page moved on (another value, time travel)
// is dropped.
let detailGen = 0;
function liveDetail(key) {
  const gen = ++detailGen;
  showValue($("detail"), key, select, () => gen === detailGen && !travel && selected === key);
}

function select(key) {
  selected = key;
  schedule();
  if (!travel) liveDetail(key);
  else {
    detailGen++;
    const n = travel.get(key);
    put($("detail"), el("h2", {}, key), n ? el("p", {}, badge(n.state), " at the chosen transaction") : null,
      ...((n && n.reasons) || []).map((r) => el("p", { class: "why" }, r)), n && n.error ? el("p", { class: "err" }, n.error) : null);
  }
}

function drill(kind, name) {
  const target = { descriptor: "filter-descriptor", owner: "filter-owner", prefix: "filter-prefix", state: "filter-state" }[kind];
  if (!target) return;
  const e = $(target);
  if (e.tagName === "SELECT" && ![...e.options].some((o) => o.value === name)) e.append(el("option", { value: name }, name));
  e.value = name;
  render();
}

// reloadSoon reloads the graph after dropped messages or a transaction too
// large to stream, at most every 2 s: a page that keeps falling behind a
// busy operator must not make it encode its whole graph again and again.
let reloadTimer = 0, lastLoad = 0, txnsStale = false;
function reloadSoon() {
  if (reloadTimer) return;
  reloadTimer = setTimeout(() => {
    reloadTimer = 0;
    loadGraph();
    if (txnsStale) { txnsStale = false; reloadTxnSeqs(); }
  }, Math.max(0, 2000 - (performance.now() - lastLoad)));
}

// reloadTxnSeqs reads the retained transactions' numbers again after a
// drop marker, so that the slider reaches those the stream dropped. The
// ones the stream brought since the answer was made are kept.
async function reloadTxnSeqs() {
  let txns = [];
  try {
    txns = await getJSON("api/txns?last=1000");
  } catch (e) {
    // The slider keeps what it has; the next marker tries again.
  }
  const at = travel ? txnSeqs[Number($("travel").value)] : null;
  const newest = txns.length ? txns[txns.length - 1].seq : -1;
  const seqs = new Set(txns.map((t) => t.seq));
  for (const s of txnSeqs) if (s > newest || !txns.length) seqs.add(s);
  for (const s of heldSeqs || []) seqs.add(s);
  heldSeqs = null;
  txnSeqs.splice(0, txnSeqs.length, ...[...seqs].sort((a, b) => a - b).slice(-1000));
  $("travel").max = txnSeqs.length;
  $("travel").value = travel ? Math.max(0, txnSeqs.indexOf(at)) : txnSeqs.length;
}

// captures collect the stream's transactions while graph loads are in
// flight: a graph answered before a transaction can arrive after its
// statuses, and must not undo them.
const captures = new Set();

async function loadGraph() {
  lastLoad = performance.now();
  const during = [];
  captures.add(during);
  let g;
  try {
    g = await getJSON("api/graph");
  } finally {
    captures.delete(during);
  }
  live.clear();
  for (const n of g.nodes) live.set(n.key, n);
  // The graph includes every transaction up to g.txn; the newer ones the
  // stream brought meanwhile are applied again, in order.
  for (const t of during) if (t.seq > g.txn) applyStatuses(t);
  stats.graphLoads++;
  render();
}

// applyStatuses puts a streamed transaction's statuses into the live graph.
function applyStatuses(t) {
  for (const n of t.statuses || []) {
    if (n.state === "REMOVED") live.delete(n.key);
    else live.set(n.key, n);
  }
}

let travelGen = 0; // the newest travel asked for; older answers are dropped
function travelTo(i) {
  if (i >= txnSeqs.length) return backToLive();
  const seq = txnSeqs[i], gen = ++travelGen;
  getJSON("api/graph?seq=" + seq).then((g) => {
    if (gen !== travelGen) return;
    travel = new Map(g.nodes.map((n) => [n.key, n]));
    $("travel-label").textContent = "after transaction #" + seq + " at " + time(g.time);
    $("now").hidden = false;
    render();
    if (selected) select(selected); // its state then, not now
  }, (e) => { if (gen === travelGen) $("travel-label").textContent = "transaction #" + seq + " is no longer retained (" + e.message + ")"; });
}

function backToLive() {
  travelGen++;
  travel = null;
  $("travel").value = $("travel").max;
  $("travel-label").textContent = "";
  $("now").hidden = true;
  render();
  if (selected) select(selected);
}

// heldSeqs, between a drop marker and the reload of the transactions'
// numbers, holds the numbers the stream brings: the slider then offers
// them with the dropped ones, never with a gap before them.
let heldSeqs = null;

function noteTxn(seq) {
  if (heldSeqs) return void heldSeqs.push(seq);
  txnSeqs.push(seq);
  if (txnSeqs.length > 1000) txnSeqs.shift();
  const atEnd = !travel;
  $("travel").max = txnSeqs.length;
  if (atEnd) $("travel").value = txnSeqs.length;
}

let detailTimer = 0;
function refreshDetail(key) {
  if (key !== selected || travel || detailTimer) return;
  detailTimer = setTimeout(() => { detailTimer = 0; if (!travel && selected) liveDetail(selected); }, 200);
}

function connect() {
  const es = new EventSource("api/stream?event=" + lastEvent + "&txn=" + lastTxn + "&run=" + encodeURIComponent(run));
  const on = (name, f) => es.addEventListener(name, (m) => f(JSON.parse(m.data)));
  on("hello", (h) => {
    // The stream starts right after these. Lower than what the page has:
    // the operator restarted (a new term numbers from 0 again).
    if (h.txn < lastTxn) txnSeqs.length = 0;
    // Another run (a restarted operator): its numbers have nothing to do
    // with the old ones, which leave the feeds and the slider; the stream
    // sends the new run's recorded history.
    if (run && h.run !== run) {
      txnSeqs.length = 0;
      $("events").replaceChildren();
      $("txns").replaceChildren();
    }
    run = h.run;
    lastEvent = h.event;
    lastTxn = h.txn;
    $("live").className = "on";
    $("live").textContent = "live";
    stats.connected = true;
    loadGraph();
  });
  on("event", (e) => {
    if (e.seq <= lastEvent) return;
    lastEvent = e.seq;
    addEvent($("events"), e);
  });
  on("txn", (t) => {
    if (t.seq <= lastTxn) return;
    lastTxn = t.seq;
    addTxn($("txns"), t);
    noteTxn(t.seq);
    if (t.reload) return reloadSoon();
    for (const c of captures) c.push(t);
    applyStatuses(t);
    for (const n of t.statuses || []) refreshDetail(n.key);
    for (const o of t.ops || []) refreshDetail(o.key);
    if (!travel && t.statuses) schedule();
  });
  on("dropped", (d) => {
    addDropped([$("events"), $("txns")], d.dropped);
    txnsStale = true;
    heldSeqs = heldSeqs || [];
    reloadSoon();
  });
  es.onerror = () => {
    es.close();
    stats.connected = false;
    $("live").className = "off";
    $("live").textContent = "reconnecting";
    // EventSource does not tell a refusal from a lost connection: the
    // info says whether the operator serves as many pages as it may.
    getJSON("api/info").then((i) => {
      if (!stats.connected && i.streams >= i.maxStreams) $("live").textContent = "not live: " + i.streams + " pages open already (the most this operator serves); retrying";
    }, () => {});
    setTimeout(connect, 1000);
  };
}

function tabs() {
  let timer = 0;
  for (const b of document.querySelectorAll("#tabs button")) {
    b.addEventListener("click", () => {
      for (const o of document.querySelectorAll("#tabs button")) o.classList.toggle("active", o === b);
      for (const s of document.querySelectorAll(".tab")) s.classList.toggle("active", s.id === "tab-" + b.dataset.tab);
      clearInterval(timer);
      const refresh = { controllers: () => showControllers($("loop"), $("controllers")), replicas: () => showReplicas($("replicas")) }[b.dataset.tab];
      if (refresh) { refresh(); timer = setInterval(refresh, 2000); }
    });
  }
}

// noGraph leaves the graph out for an operator that runs no KV scheduler
// (controllers only), and opens the controllers view.
function noGraph() {
  const graph = document.querySelector('#tabs button[data-tab="graph"]');
  graph.hidden = true;
  graph.title = "This operator runs no KV scheduler: there is no value graph.";
  document.querySelector('#tabs button[data-tab="controllers"]').click();
}

// setupResync shows the one write action, allowed by the operator
// (Options.AllowResync): a resync request, as POST /controller/resync.
function setupResync() {
  $("resync-bar").hidden = false;
  $("resync").addEventListener("click", async () => {
    $("resync-status").textContent = "requesting…";
    try {
      const r = await fetch("api/resync", { method: "POST" });
      $("resync-status").textContent = r.ok ? "resync requested at " + new Date().toLocaleTimeString() : "refused: " + (await r.text());
    } catch (e) {
      $("resync-status").textContent = "failed: " + e.message;
    }
  });
}

async function main() {
  tabs();
  for (const id of ["filter-prefix", "filter-descriptor", "filter-state", "filter-owner", "group"]) $(id).addEventListener("input", render);
  $("travel").addEventListener("input", (e) => travelTo(Number(e.target.value)));
  $("now").addEventListener("click", backToLive);
  const info = await getJSON("api/info");
  run = info.run || "";
  $("title").textContent = info.title;
  if (info.resync) setupResync();
  if (!info.hasScheduler) noGraph();
  document.title = info.title + " · Lariat";
  const [events, txns] = await Promise.all([getJSON("api/events?last=100"), getJSON("api/txns?last=1000")]);
  for (const e of events) { addEvent($("events"), e); lastEvent = e.seq; }
  for (const t of txns) { noteTxn(t.seq); lastTxn = t.seq; }
  for (const t of txns.slice(-100)) addTxn($("txns"), t);
  connect();
}

main();
