package schedulerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/internal/historyquery"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

func (h *handler) txnHistory(w http.ResponseWriter, r *http.Request) error {
	format, err := oneOf(r, "format", "json", "text")
	if err != nil {
		return err
	}
	hq, err := historyquery.Parse(r.URL.Query())
	if err != nil {
		return badParam{err}
	}
	var recs []*kvscheduler.TxnRecord
	single := false
	switch hq.Kind {
	case historyquery.One:
		rec, found := h.s.GetRecordedTransaction(hq.SeqNum)
		if !found {
			return notFound{fmt.Errorf("transaction #%d is not recorded", hq.SeqNum)}
		}
		recs, single = []*kvscheduler.TxnRecord{rec}, true
	case historyquery.Window:
		recs = h.s.TransactionHistory(hq.Since, hq.Until)
	case historyquery.Range:
		for _, rec := range h.s.TransactionHistory(time.Time{}, time.Time{}) {
			if rec.SeqNum >= hq.From && rec.SeqNum <= hq.To {
				recs = append(recs, rec)
			}
		}
	case historyquery.First:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
		recs = recs[:min(uint64(len(recs)), hq.N)]
	case historyquery.Last:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
		recs = recs[uint64(len(recs))-min(uint64(len(recs)), hq.N):]
	default:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
	}
	if format == "text" {
		var b strings.Builder
		for _, rec := range recs {
			b.WriteString(rec.String())
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(b.String()))
		return nil
	}
	if single {
		writeJSON(w, http.StatusOK, encodeTxn(recs[0]))
		return nil
	}
	out := make([]TxnJSON, 0, len(recs))
	for _, rec := range recs {
		out = append(out, encodeTxn(rec))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// The events of a key's timeline.
const (
	// EventRequested is a value (or, with Removed, a deletion) requested by
	// a northbound transaction; what happened to it is in the following
	// executed events, or in the status if it is still waiting.
	EventRequested = "requested"
	// EventNotified is a value (or, with Removed, a removal) notified by
	// the southbound.
	EventNotified = "notified"
	// EventExecuted is an operation executed on the key.
	EventExecuted = "executed"
)

// TimelineEntry is one event of a key in a recorded transaction.
type TimelineEntry struct {
	SeqNum     uint64    `json:"seqNum"`
	TxnType    string    `json:"txnType"`
	ResyncType string    `json:"resyncType,omitempty"`
	Time       time.Time `json:"time"`
	// Event is EventRequested, EventNotified or EventExecuted.
	Event string `json:"event"`
	// Value is the requested or notified value.
	Value any `json:"value,omitempty"`
	// Removed marks a requested deletion or a notified removal.
	Removed bool `json:"removed,omitempty"`
	// OpJSON is the executed operation.
	*OpJSON
}

// KeyTimeline is the answer of GET /scheduler/key-timeline. It is built
// from the recorded transactions, so it only reaches back as far as the
// history is kept, and it does not show changes that a refresh (Retrieve)
// found, because records do not list them.
type KeyTimeline struct {
	Key      string          `json:"key"`
	Current  StatusJSON      `json:"current"`
	Timeline []TimelineEntry `json:"timeline"`
}

func (h *handler) keyTimeline(w http.ResponseWriter, r *http.Request) error {
	key := r.URL.Query().Get("key")
	if key == "" {
		return badParam{errors.New("parameter key is required")}
	}
	out := KeyTimeline{Key: key, Current: h.explain(h.s.GetValueStatus(key)), Timeline: []TimelineEntry{}}
	for _, rec := range h.s.TransactionHistory(time.Time{}, time.Time{}) {
		base := TimelineEntry{SeqNum: rec.SeqNum, TxnType: rec.Type.String(), Time: rec.Stop}
		if rec.Resync != kvscheduler.NoResync {
			base.ResyncType = rec.Resync.String()
		}
		// A downstream resync ignores its values: they were not requested.
		if rec.Resync != kvscheduler.DownstreamResync {
			// Values obtained from the southbound were not requested.
			for _, kv := range rec.Values[:len(rec.Values)-rec.Obtained] {
				if kv.Key != key {
					continue
				}
				e := base
				e.Event, e.Value, e.Removed = EventRequested, jsonValue(kv.Value), kv.Value == nil
				if rec.Type == kvscheduler.SBNotification {
					e.Event = EventNotified
				}
				out.Timeline = append(out.Timeline, e)
			}
		}
		for _, op := range rec.Executed {
			if op.Key != key {
				continue
			}
			e := base
			oj := encodeOp(op)
			e.Event, e.OpJSON = EventExecuted, &oj
			out.Timeline = append(out.Timeline, e)
		}
	}
	if len(out.Timeline) == 0 && out.Current.State == kvscheduler.NonExistent.String() {
		return notFound{fmt.Errorf("key %q is unknown and not in the recorded transactions", key)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
