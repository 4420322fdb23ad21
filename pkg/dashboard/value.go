package dashboard

import (
	"net/http"
	"slices"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Value is the answer of GET /ui/api/value?key=K: a value's status, its
// objects (redacted) and its timeline.
type Value struct {
	Node Node `json:"node"`
	// Desired is the value the northbound asked for; Actual the value as
	// last created, retrieved or notified in the southbound.
	Desired any `json:"desired,omitempty"`
	Actual  any `json:"actual,omitempty"`
	// Timeline lists what the recorded transactions did to the key,
	// newest first.
	Timeline []Step `json:"timeline"`
}

// Step is one recorded event of a key: a request, a notification, or an
// executed operation.
type Step struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Txn  string    `json:"txn"`
	// What is "requested", "request to delete", "notified", "notified gone"
	// or the operation (CREATE, UPDATE, DELETE).
	What string `json:"what"`
	Op   *Op    `json:"op,omitempty"`
}

// maxTimeline bounds the steps returned for a key.
const maxTimeline = 100

// serveValue answers GET /ui/api/value?key=K (404 for a key the scheduler
// does not know).
func (d *Dashboard) serveValue(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	s := d.opts.Scheduler
	st := s.GetValueStatus(key)
	if key == "" || st.State == kvscheduler.NonExistent {
		http.Error(w, "no such value", http.StatusNotFound)
		return
	}
	stateOf := func(k string) (kvscheduler.ValueState, bool) { return s.GetValueStatus(k).State, true }
	out := Value{Node: d.node(st, stateOf), Timeline: d.timeline(key)}
	if kv, ok := exact(s.DumpValues(st.Descriptor, key, kvscheduler.NBView), key); ok {
		out.Desired = d.redact(key, kv.Value)
	}
	if kv, ok := exact(s.DumpValues(st.Descriptor, key, kvscheduler.SBView), key); ok {
		out.Actual = d.redact(key, kv.Value)
	}
	writeJSON(w, out)
}

func exact(kvs []kvscheduler.KVWithMetadata, key string) (kvscheduler.KVWithMetadata, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv, true
		}
	}
	return kvscheduler.KVWithMetadata{}, false
}

// timeline lists the recorded steps of key, newest first.
func (d *Dashboard) timeline(key string) []Step {
	out := []Step{}
	recs := d.opts.Scheduler.TransactionHistory(time.Time{}, time.Time{})
	for _, rec := range slices.Backward(recs) {
		var steps []Step
		txn := rec.Type.String()
		if rec.Description != "" {
			txn += ": " + rec.Description
		}
		for _, kv := range rec.Values {
			if kv.Key != key {
				continue
			}
			what := map[bool]string{true: "requested", false: "request to delete"}
			if rec.Type == kvscheduler.SBNotification {
				what = map[bool]string{true: "notified", false: "notified gone"}
			}
			steps = append(steps, Step{Seq: rec.SeqNum, Time: rec.Start, Txn: txn, What: what[kv.Value != nil]})
		}
		for _, o := range rec.Executed {
			if o.Key == key {
				op := d.encodeOp(o)
				steps = append(steps, Step{Seq: rec.SeqNum, Time: rec.Stop, Txn: txn, What: op.Operation, Op: &op})
			}
		}
		slices.Reverse(steps)
		out = append(out, steps...)
		if len(out) >= maxTimeline {
			return out[:maxTimeline]
		}
	}
	return out
}
