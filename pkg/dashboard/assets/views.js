// The panes around the graph: the value detail, the live feeds, the
// controllers and the replicas.
import { el, put, badge, getJSON, time, firstLine } from "./dom.js";

// showValue shows a value's live detail; still() says, when the answer
// comes, whether it is still wanted (a late answer must not replace what
// the pane shows since, e.g. a past detail while time travelling).
export async function showValue(pane, key, onKey, still = () => true) {
  let v;
  try {
    v = await getJSON("api/value?key=" + encodeURIComponent(key));
  } catch (e) {
    if (still()) put(pane, el("h2", {}, key), el("p", { class: "hint" }, "gone: " + e.message));
    return;
  }
  if (!still()) return;
  const n = v.node;
  const link = (k) => el("a", { href: "#", onclick: (e) => { e.preventDefault(); onKey(k); } }, k);
  put(pane, 
    el("h2", { "data-key": n.key }, n.key),
    el("p", {}, badge(n.state), n.descriptor ? " descriptor " + n.descriptor : "", n.lastOp ? ", last " + n.lastOp : ""),
    n.owner ? el("p", {}, "owner " + n.owner) : null,
    n.error ? el("p", { class: "err reason" }, n.error) : null,
    ...(n.reasons || []).map((r) => el("p", { class: "why reason" }, r)),
    n.base ? el("p", {}, "derived from ", link(n.base)) : null,
    n.deps ? el("div", {}, el("h3", {}, "Depends on"),
      el("ul", {}, n.deps.map((d) => el("li", {}, link(d.key), d.ordering ? " (ordering only)" : " (requires)", d.met ? "" : " (unmet)")))) : null,
    el("h3", {}, "Timeline (newest first)"),
    el("table", { class: "timeline" }, el("tr", {}, el("th", {}, "#"), el("th", {}, "when"), el("th", {}, "what"), el("th", {}, "transaction")),
      v.timeline.map((s) => el("tr", {}, el("td", {}, s.seq), el("td", {}, time(s.time)),
        el("td", {}, s.what, s.op ? " " + s.op.prev + "→" + s.op.new : "", s.op && s.op.error ? el("div", { class: "err" }, s.op.error) : null),
        el("td", { title: s.txn }, firstLine(s.txn))))),
    v.desired !== undefined ? el("div", {}, el("h3", {}, "Desired object"), el("pre", {}, JSON.stringify(v.desired, null, 1))) : null,
    v.actual !== undefined ? el("div", {}, el("h3", {}, "Object in the cluster"), el("pre", { class: "actual" }, JSON.stringify(v.actual, null, 1))) : null,
  );
}

const FEED_MAX = 500;

function prepend(list, item) {
  list.prepend(item);
  while (list.children.length > FEED_MAX) list.lastChild.remove();
}

export function addEvent(list, e) {
  prepend(list, el("li", { "data-seq": e.seq },
    el("b", {}, "#" + e.seq + " "), time(e.start), " ", e.description,
    e.followUpTo !== undefined ? " (follow-up of #" + e.followUpTo + ")" : "",
    (e.handlers || []).filter((h) => h.change || h.error).map((h) =>
      el("div", { class: "ops" + (h.error ? " err" : "") }, h.handler + ": " + (h.error || h.change))),
    e.txnError ? el("div", { class: "err" }, "transaction: " + e.txnError) : null,
    e.txnSeq !== undefined ? el("div", { class: "ops" }, "→ transaction #" + e.txnSeq) : null));
}

export function addTxn(list, t) {
  prepend(list, el("li", { "data-seq": t.seq },
    el("b", {}, "#" + t.seq + " "), time(t.stop), " ", t.type, t.resync ? " " + t.resync : "", t.description ? ": " + t.description : "",
    (t.ops || []).map((o) => el("div", { class: "ops" + (o.error ? " err" : "") },
      o.op + " " + o.key + " " + o.prev + "→" + o.new + (o.noop ? " (no-op)" : "") + (o.retry ? " retry " + o.attempt : "") + (o.error ? ": " + o.error : ""))),
    (t.errors || []).map((e) => el("div", { class: "err" }, e))));
}

export function addDropped(lists, n) {
  for (const l of lists) prepend(l, el("li", { class: "dropped" }, n + " live messages were dropped (the browser read too slowly); the graph was reloaded"));
}

const secs = (s) => (s >= 1 ? s.toFixed(2) + " s" : (s * 1000).toFixed(1) + " ms");
// pcts shows p50 / p90 / p99; the mean is in the tooltip.
const pcts = (p, mean) => el("td", { class: "pcts", title: "mean " + secs(mean) + (p.above ? "; some above the histogram's last bucket" : "") },
  secs(p.p50) + " / " + secs(p.p90) + " / " + (p.above ? "> " : "") + secs(p.p99));

export async function showControllers(loopPane, table) {
  const c = await getJSON("api/controllers");
  put(loopPane, c.loop ? el("p", {}, "Event loop: ", el("b", {}, c.loop.state), ", ", c.loop.processed + " events processed, ",
    c.loop.queueLength + " queued", c.loop.healingDue ? ", healing due " + c.loop.healingDue : "",
    c.loop.failedHealings ? ", " + c.loop.failedHealings + " failed healings" : "", c.loop.error ? el("div", { class: "err" }, c.loop.error) : null)
    : el("p", { class: "hint" }, "No event loop attached."), c.error ? el("p", { class: "err" }, c.error) : null);
  const cols = ["kind", "queue depth", "added", "waiting p50 / p90 / p99", "handling p50 / p90 / p99", "handled", "errors", "retries", "panics", "fights", "cached"];
  const td = (v) => el("td", {}, v);
  put(table, el("tr", {}, cols.map((h) => el("th", {}, h))),
    c.kinds.map((k) => el("tr", { "data-kind": k.kind }, [td(k.kind), td(k.queueDepth), td(k.adds), pcts(k.wait, k.waitMean), pcts(k.handle, k.handleMean),
      ...[k.handled, k.errors, k.retries, k.panics, k.fights, k.cached].map(td)])));
}

export async function showReplicas(pane) {
  const r = await getJSON("api/replicas");
  if (r.mode === "sharded") return showShards(pane, r);
  const modes = { single: "One replica, no leader election.", leader: "Replicas elect a leader; only it runs the operator." };
  put(pane, el("p", {}, modes[r.mode] || r.mode),
    r.identity ? el("p", {}, "This replica: ", el("b", {}, r.identity), r.holding ? " (holding its lease)" : " (standing by)") : null,
    r.leader ? el("p", {}, "Leader: ", el("b", { id: "leader" }, r.leader)) : null,
    r.members && r.members.length ? el("table", {}, el("tr", {}, el("th", {}, "member"), el("th", {}, "share")),
      r.members.map((m) => el("tr", {}, el("td", {}, m.id + (m.leader ? " (leader)" : "")), el("td", {}, m.share ? (m.share * 100).toFixed(0) + "%" : "")))) : null);
}

// showShards shows a sharded replica: its member, the elected sharder and,
// when this replica's sharder is the elected one, every member's share
// and the drains in flight.
function showShards(pane, r) {
  const kinds = (m) => Object.entries(m.byKind || {}).map(([k, n]) => k + ": " + n).join(", ");
  const members = (r.members || []).map((m) => el("tr", { "data-member": m.id, class: m.self ? "self" : "" },
    el("td", {}, m.id, m.self ? " (this replica)" : ""), el("td", {}, m.identity || ""), el("td", { class: "state" }, m.state),
    el("td", { class: "objects" }, m.objects || 0), el("td", {}, m.share ? (m.share * 100).toFixed(0) + "%" : "0%"), el("td", {}, kinds(m)),
    el("td", {}, m.keys && m.keys.length ? el("details", {}, el("summary", {}, m.keys.length < m.objects ? "first " + m.keys.length : "all " + m.keys.length),
      el("ul", { class: "keys" }, m.keys.map((k) => el("li", {}, k)))) : "")));
  const drains = (r.drains || []).map((d) => el("tr", { "data-drain": d.key }, el("td", {}, d.kind), el("td", {}, d.key), el("td", {}, d.member), el("td", {}, time(d.since))));
  put(pane, el("p", {}, "Replicas share the objects of ring ", el("b", {}, r.ring), ": each member caches and handles only its share."),
    el("p", {}, "This replica: ", r.memberId ? [ "member ", el("b", { id: "member" }, r.memberId), " (" + r.identity + ")", r.holding ? ", holding its lease" : ", not holding its lease"] : "between terms (no member now)"),
    el("p", {}, "Sharder: ", el("b", { id: "leader" }, r.leader || "unknown"), r.sharding ? " (this replica)" : ""),
    r.sharding ? null : el("p", { class: "hint" }, "Only the elected sharder watches the members and the objects: its replica's dashboard shows every member's share and the drains."),
    r.sharding && !r.synced ? el("p", { class: "err" }, "The sharder's views are not synced: the counts below may be partial, and it changes nothing until they are.") : null,
    r.sharding ? el("table", { id: "members" }, el("tr", {}, ["member", "identity", "state", "objects", "share", "by kind", "objects held"].map((h) => el("th", {}, h))), members) : null,
    r.sharding && r.unassigned ? el("p", {}, r.unassigned + " objects not assigned yet") : null,
    r.sharding ? el("div", {}, el("h3", {}, "Drains in flight (" + drains.length + ")"), drains.length
      ? el("table", { id: "drains" }, el("tr", {}, ["kind", "object", "from member", "since"].map((h) => el("th", {}, h))), drains)
      : el("p", { class: "hint" }, "None: no object is being handed over.")) : null);
}
