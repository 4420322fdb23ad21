package dashboard

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Node is one value of the graph as the page draws it.
type Node struct {
	Key        string `json:"key"`
	State      string `json:"state"`
	Descriptor string `json:"descriptor,omitempty"`
	// Owner groups the node (Options.OwnerOf).
	Owner  string `json:"owner,omitempty"`
	LastOp string `json:"lastOp,omitempty"`
	Error  string `json:"error,omitempty"`
	// Reasons say, for a PENDING value, what each unmet dependency waits
	// for; for an INVALID one, the fields rejected.
	Reasons []string `json:"reasons,omitempty"`
	// Base is the value a derived value derives from.
	Base string `json:"base,omitempty"`
	// Deps are the value's dependencies, one edge per key that satisfies
	// (or would satisfy) each.
	Deps []Edge `json:"deps,omitempty"`
}

// Edge is a dependency of a node on another value.
type Edge struct {
	Key string `json:"key"`
	Met bool   `json:"met"`
	// Ordering is set for an ordering-only dependency
	// (kvscheduler.OrderingOnly): the value is created after Key and
	// deleted before it, but stays when Key goes.
	Ordering bool `json:"ordering,omitempty"`
}

// Graph is the answer of GET /ui/api/graph: the values now, or after
// transaction Seq when time travelling.
type Graph struct {
	// Seq is the transaction the graph follows (time travel only).
	Seq *uint64 `json:"seq,omitempty"`
	// Txn is the newest transaction whose statuses the graph includes
	// (-1: none): the page applies again the statuses of newer
	// transactions the stream brought while the graph was on its way, so
	// that an older graph does not undo them. The graph may include some
	// of a newer transaction's statuses too; applying them again changes
	// nothing.
	Txn  int64     `json:"txn"`
	Time time.Time `json:"time"`
	// Nodes are sorted with PENDING, FAILED, RETRYING and INVALID first,
	// then by key.
	Nodes []Node `json:"nodes"`
}

// nodes encodes statuses, resolving what PENDING values wait for among
// the same statuses (so a past graph explains itself with its own past).
func (d *Dashboard) nodes(sts []kvscheduler.ValueStatus) []Node {
	states := make(map[string]kvscheduler.ValueState, len(sts))
	for _, st := range sts {
		states[st.Key] = st.State
	}
	stateOf := func(k string) (kvscheduler.ValueState, bool) {
		s, ok := states[k]
		return s, ok
	}
	out := make([]Node, 0, len(sts))
	for _, st := range sts {
		out = append(out, d.node(st, stateOf))
	}
	sortNodes(out)
	return out
}

// stateFunc tells the state of a key, and whether it is known.
type stateFunc func(key string) (kvscheduler.ValueState, bool)

func (d *Dashboard) node(st kvscheduler.ValueStatus, states stateFunc) Node {
	n := Node{Key: st.Key, State: st.State.String(), Descriptor: st.Descriptor, Base: st.BaseKey}
	if st.LastOp != kvscheduler.OpNone {
		n.LastOp = st.LastOp.String()
	}
	n.Error = d.errText(st.Key, st.Error)
	if d.opts.OwnerOf != nil {
		n.Owner = d.opts.OwnerOf(st.Key)
	}
	for _, dep := range st.Dependencies {
		for _, k := range dep.Keys {
			n.Deps = append(n.Deps, Edge{Key: k, Met: dep.Met, Ordering: dep.Kind == kvscheduler.OrderingOnly})
		}
	}
	if st.State == kvscheduler.Pending {
		n.Reasons = pendingReasons(st, states)
	}
	if st.State == kvscheduler.Invalid && len(st.InvalidFields) > 0 {
		n.Reasons = []string{fmt.Sprintf("invalid fields: %v", st.InvalidFields)}
	}
	return n
}

// pendingReasons explains each unmet dependency of a PENDING value.
func pendingReasons(st kvscheduler.ValueStatus, states stateFunc) []string {
	described := map[string]kvscheduler.DependencyStatus{}
	for _, dep := range st.Dependencies {
		described[dep.Label] = dep
	}
	stateOf := func(k string) string {
		if s, ok := states(k); ok && s != kvscheduler.NonExistent {
			return s.String()
		}
		return "absent"
	}
	var out []string
	for _, label := range st.UnmetDependencies {
		dep, ok := described[label]
		switch {
		case ok && dep.Key != "":
			r := "waits for " + dep.Key + " (" + stateOf(dep.Key) + ")"
			if label != dep.Key {
				r = label + ": " + r
			}
			out = append(out, r)
		case ok && len(dep.Keys) > 0:
			out = append(out, fmt.Sprintf("%s: waits for one of %v, none ready", label, dep.Keys))
		case ok:
			out = append(out, label+": nothing matches yet")
		case label == st.BaseKey:
			out = append(out, "waits for its base "+label+" ("+stateOf(label)+")")
		default:
			out = append(out, "waits for "+label+" ("+stateOf(label)+")")
		}
	}
	return out
}

// rank orders states for the list: what needs attention first.
func rank(state string) int {
	switch state {
	case "FAILED":
		return 0
	case "PENDING":
		return 1
	case "RETRYING":
		return 2
	case "INVALID":
		return 3
	case "MISSING", "UNIMPLEMENTED":
		return 4
	}
	return 5
}

func sortNodes(ns []Node) {
	slices.SortFunc(ns, func(a, b Node) int {
		if ra, rb := rank(a.State), rank(b.State); ra != rb {
			return ra - rb
		}
		return cmp.Compare(a.Key, b.Key)
	})
}

// serveGraph answers GET /ui/api/graph: now, or after transaction seq=N.
func (d *Dashboard) serveGraph(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("seq") {
		// Read before the statuses: the scheduler publishes a
		// transaction's statuses before (under the same lock as) it
		// records it, so the statuses read after include at least those
		// of every transaction up to txn.
		txn := d.newestTxn()
		writeJSON(w, Graph{Txn: txn, Time: time.Now(), Nodes: d.nodes(d.opts.Scheduler.ValueStatuses(nil))})
		return
	}
	seq, err := strconv.ParseUint(q.Get("seq"), 10, 64)
	if err != nil {
		http.Error(w, "seq: not a transaction number", http.StatusBadRequest)
		return
	}
	snap, err := d.opts.Scheduler.GraphSnapshotAt(seq)
	if errors.Is(err, kvscheduler.ErrOutsideHistory) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, Graph{Seq: &snap.SeqNum, Txn: int64(snap.SeqNum), Time: snap.Time, Nodes: d.nodes(snap.Values)})
}

// newestTxn returns the number of the newest recorded transaction, -1 when
// none is.
func (d *Dashboard) newestTxn() int64 {
	recs := d.opts.Scheduler.TransactionHistory(time.Time{}, time.Time{})
	if len(recs) == 0 {
		return -1
	}
	return int64(recs[len(recs)-1].SeqNum)
}
