package schedulerhttp

import (
	"net/http"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// DumpEntry is one value in GET /scheduler/dump: the value of the
// requested view with the key's current status.
//
// ValueSeqNum is the last recorded transaction that created, updated or
// notified the key (transactions are numbered from 0), to tell how old
// the value is; it is empty when that
// happened before the kept history or in a refresh, which records do not
// list.
type DumpEntry struct {
	StatusJSON
	// Value is the value in the view; empty for a cached value whose value
	// the scheduler does not keep (a derived value rejected before it
	// joined the graph).
	Value any `json:"value,omitempty"`
	// Metadata is the value's metadata, for values that exist.
	Metadata any `json:"metadata,omitempty"`
	// Origin is "NB" or "SB": who owns the value.
	Origin      string  `json:"origin,omitempty"`
	ValueSeqNum *uint64 `json:"valueSeqNum,omitempty"`
}

// DumpView is the answer of GET /scheduler/dump.
type DumpView struct {
	// View is "cached", "NB" or "SB".
	View   string      `json:"view"`
	Values []DumpEntry `json:"values"`
	// Metadata is the metadata map (label to metadata) of the requested
	// descriptor, if it keeps one.
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (h *handler) dump(w http.ResponseWriter, r *http.Request) error {
	view, err := oneOf(r, "view", "cached", "NB", "SB", "internal")
	if err != nil {
		return err
	}
	if view == "internal" {
		view = "cached"
	}
	kview := map[string]kvscheduler.View{"cached": kvscheduler.CachedView, "NB": kvscheduler.NBView,
		"SB": kvscheduler.SBView}[view]
	q := r.URL.Query()
	desc, prefix := q.Get("descriptor"), q.Get("key-prefix")
	kvs := h.s.DumpValues(desc, prefix, kview)
	last := lastValues(h.s.TransactionHistory(time.Time{}, time.Time{}))
	out := DumpView{View: view, Values: []DumpEntry{}}
	entry := func(st kvscheduler.ValueStatus, kv *kvscheduler.KVWithMetadata) DumpEntry {
		e := DumpEntry{StatusJSON: h.explain(st)}
		if kv != nil {
			e.Value, e.Metadata, e.Origin = jsonValue(kv.Value), jsonValue(kv.Metadata), originName(kv.Origin)
		}
		if seq, ok := last[st.Key]; ok {
			e.ValueSeqNum = &seq
		}
		return e
	}
	if kview == kvscheduler.CachedView {
		// Every status is listed, even one without a value, because the
		// cached view is the one that explains the statuses.
		byKey := make(map[string]*kvscheduler.KVWithMetadata, len(kvs))
		for i := range kvs {
			byKey[kvs[i].Key] = &kvs[i]
		}
		for _, st := range h.s.ValueStatuses(func(k string) bool { return strings.HasPrefix(k, prefix) }) {
			if desc != "" && st.Descriptor != desc {
				continue
			}
			out.Values = append(out.Values, entry(st, byKey[st.Key]))
		}
	} else {
		for i := range kvs {
			out.Values = append(out.Values, entry(h.s.GetValueStatus(kvs[i].Key), &kvs[i]))
		}
	}
	if desc != "" {
		if mm, ok := h.s.MetadataMap(desc); ok {
			out.Metadata = map[string]any{}
			for _, l := range mm.Labels() {
				if md, ok := mm.Get(l); ok {
					out.Metadata[l] = jsonValue(md)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// originName names an origin in JSON; an unknown origin is left out.
func originName(o kvscheduler.Origin) string {
	switch o {
	case kvscheduler.FromNB:
		return "NB"
	case kvscheduler.FromSB:
		return "SB"
	}
	return ""
}

// lastValues replays the southbound notifications and executed
// operations of recs (oldest first): the transaction that last created,
// updated or notified each key, unless it was deleted since.
func lastValues(recs []*kvscheduler.TxnRecord) map[string]uint64 {
	out := map[string]uint64{}
	for _, rec := range recs {
		if rec.Type == kvscheduler.SBNotification {
			for _, kv := range rec.Values {
				if kv.Value == nil {
					delete(out, kv.Key)
				} else {
					out[kv.Key] = rec.SeqNum
				}
			}
		}
		for _, op := range rec.Executed {
			if op.Err != nil || op.NOOP {
				continue // the value was not applied
			}
			switch op.Operation {
			case kvscheduler.OpCreate, kvscheduler.OpUpdate:
				out[op.Key] = rec.SeqNum
			case kvscheduler.OpDelete:
				delete(out, op.Key)
			}
		}
	}
	return out
}
