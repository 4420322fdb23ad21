package eventloop

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// EventRecord is the record of one processed event.
type EventRecord struct {
	SeqNum          uint64    // 0 for the startup resync, then +1 per event
	ProcessingStart time.Time // when the loop took the event
	ProcessingEnd   time.Time // when Done was about to be called
	IsFollowUp      bool      // pushed by a handler through PushFollowUp
	FollowUpTo      uint64    // sequence number of the parent, for follow-ups
	Name            string    // Event.GetName
	Description     string    // Event.String, computed once per event
	Method          EventMethodType
	// Handlers lists the handler calls in order: Update/Resync calls first,
	// then Revert calls (Revert set).
	Handlers []HandlerRecord
	// TxnError is the error of the commit (or of merging external
	// configuration into it).
	TxnError error
	// Txn summarizes the committed transaction (nil when nothing was
	// committed): the committer's sequence number of its full record and
	// the executed operations, cut to MaxTxnSummaryBytes. The history keeps
	// no reference to the values of the transaction.
	Txn *TxnSummary
}

// HandlerRecord is the record of one handler call.
type HandlerRecord struct {
	Handler string // EventHandler.String
	Revert  bool   // a Revert call (otherwise Update or Resync)
	Change  string // the change description returned by Update
	Error   error  // the error returned (nil on success)
}

// MarshalJSON encodes the record with errors as strings.
func (r EventRecord) MarshalJSON() ([]byte, error) {
	type handler struct {
		Handler string `json:"handler"`
		Revert  bool   `json:"revert,omitempty"`
		Change  string `json:"change,omitempty"`
		Error   string `json:"error,omitempty"`
	}
	out := struct {
		SeqNum          uint64          `json:"seqNum"`
		ProcessingStart time.Time       `json:"processingStart"`
		ProcessingEnd   time.Time       `json:"processingEnd"`
		IsFollowUp      bool            `json:"isFollowUp,omitempty"`
		FollowUpTo      *uint64         `json:"followUpTo,omitempty"`
		Name            string          `json:"name"`
		Description     string          `json:"description"`
		Method          EventMethodType `json:"method"`
		Handlers        []handler       `json:"handlers,omitempty"`
		TxnError        string          `json:"txnError,omitempty"`
		Txn             *TxnSummary     `json:"txn,omitempty"`
	}{
		SeqNum:          r.SeqNum,
		ProcessingStart: r.ProcessingStart,
		ProcessingEnd:   r.ProcessingEnd,
		IsFollowUp:      r.IsFollowUp,
		Name:            r.Name,
		Description:     r.Description,
		Method:          r.Method,
		Txn:             r.Txn,
	}
	if r.IsFollowUp {
		parent := r.FollowUpTo
		out.FollowUpTo = &parent
	}
	for _, h := range r.Handlers {
		hr := handler{Handler: h.Handler, Revert: h.Revert, Change: h.Change}
		if h.Error != nil {
			hr.Error = h.Error.Error()
		}
		out.Handlers = append(out.Handlers, hr)
	}
	if r.TxnError != nil {
		out.TxnError = r.TxnError.Error()
	}
	return json.Marshal(out)
}

// record is a stored EventRecord. Its description is computed once, when
// the NEW EVENT box is printed or else when the event is finalized, and
// the event is then dropped: the history must not keep events, which can
// carry much more than their description (a Kubernetes resync carries every
// watched object, a change its old and new object) for as long as it keeps
// their records.
type record struct {
	EventRecord
	event Event // until described
}

func (r *record) describe() {
	if r.event == nil {
		return
	}
	ev := r.event
	r.event = nil
	func() {
		defer func() {
			if p := recover(); p != nil {
				r.Description = fmt.Sprintf("<String panicked: %v>", p)
			}
		}()
		r.Description = ev.String()
	}()
}

// newRecord returns a cleared record, reusing the one the history dropped
// last (or the previous one when history is off).
func (l *Loop) newRecord() *record {
	r := l.spare
	l.spare = nil
	if r == nil {
		return &record{}
	}
	hs := r.Handlers
	clear(hs)
	*r = record{EventRecord: EventRecord{Handlers: hs[:0]}}
	return r
}

// History is the bounded, in-memory record of processed events. Records
// whose processing ended more than Config.EventHistoryAgeLimit ago are
// dropped every minute, except the permanently kept records of the first
// Config.PermanentlyRecordedInitPeriod after Start; at most
// Config.EventHistoryMaxRecords are kept (the oldest go first), of which the
// permanent ones take at most half. All methods are safe for concurrent use
// and return copies.
type History struct {
	mu           sync.Mutex
	enabled      bool
	ageLimit     time.Duration
	initPeriod   time.Duration
	max          int
	maxPermanent int
	start        time.Time
	perm         []*record // the init period, never trimmed by age
	permClosed   bool      // no more permanent records
	recent       []*record // recent[head:], oldest first
	head         int
}

func newHistory(cfg Config) *History {
	return &History{
		enabled:      cfg.RecordEventHistory,
		ageLimit:     cfg.EventHistoryAgeLimit.Duration,
		initPeriod:   cfg.PermanentlyRecordedInitPeriod.Duration,
		max:          cfg.EventHistoryMaxRecords,
		maxPermanent: cfg.EventHistoryMaxRecords / 2,
	}
}

func (h *History) setStart(t time.Time) {
	h.mu.Lock()
	h.start = t
	h.mu.Unlock()
}

// Enabled reports whether events are recorded (Config.RecordEventHistory).
func (h *History) Enabled() bool { return h.enabled }

// add stores r and returns a record dropped to respect the count bound (for
// reuse), or nil.
func (h *History) add(r *record) (dropped *record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.permClosed && r.ProcessingStart.Sub(h.start) < h.initPeriod && len(h.perm) < h.maxPermanent {
		h.perm = append(h.perm, r)
	} else {
		h.permClosed = true
		h.recent = append(h.recent, r)
	}
	if len(h.perm)+len(h.recent)-h.head > h.max {
		dropped = h.dropOldestLocked()
	}
	return dropped
}

func (h *History) dropOldestLocked() *record {
	r := h.recent[h.head]
	h.recent[h.head] = nil
	h.head++
	if n := len(h.recent) - h.head; n == 0 {
		h.recent, h.head = h.recent[:0], 0
	} else if h.head > 64 && h.head >= n {
		copy(h.recent, h.recent[h.head:])
		clear(h.recent[n:])
		h.recent, h.head = h.recent[:n], 0
	}
	return r
}

// trim drops records older than the age limit (the permanent ones stay).
func (h *History) trim(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.recent) > h.head && now.Sub(h.recent[h.head].ProcessingEnd) > h.ageLimit {
		h.dropOldestLocked()
	}
}

// Len returns the number of records.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.perm) + len(h.recent) - h.head
}

// collect returns copies of the records (oldest first) for which keep
// returns true, stopping when keep says so.
func (h *History) collect(keep func(r *EventRecord) (take, more bool)) []EventRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.collectLocked(keep)
}

func (h *History) collectLocked(keep func(r *EventRecord) (take, more bool)) []EventRecord {
	out := []EventRecord{}
	visit := func(rs []*record) bool {
		for _, r := range rs {
			take, more := keep(&r.EventRecord)
			if take {
				c := r.EventRecord
				c.Handlers = append([]HandlerRecord(nil), r.Handlers...)
				if c.Txn != nil {
					txn := *c.Txn
					txn.Ops = slices.Clone(txn.Ops)
					c.Txn = &txn
				}
				out = append(out, c)
			}
			if !more {
				return false
			}
		}
		return true
	}
	if visit(h.perm) {
		visit(h.recent[h.head:])
	}
	return out
}

// Records returns every record, oldest first.
func (h *History) Records() []EventRecord {
	return h.collect(func(*EventRecord) (bool, bool) { return true, true })
}

// Get returns the record of the event with sequence number seq.
func (h *History) Get(seq uint64) (EventRecord, bool) {
	rs := h.collect(func(r *EventRecord) (bool, bool) {
		return r.SeqNum == seq, r.SeqNum < seq
	})
	if len(rs) == 0 {
		return EventRecord{}, false
	}
	return rs[0], true
}

// Window returns the records of events processed (at least partly) between
// since and until; a zero time leaves that side open.
func (h *History) Window(since, until time.Time) []EventRecord {
	return h.collect(func(r *EventRecord) (bool, bool) {
		if !until.IsZero() && r.ProcessingStart.After(until) {
			return false, false
		}
		return since.IsZero() || !r.ProcessingEnd.Before(since), true
	})
}

// Range returns the records with sequence numbers from from to to,
// inclusive.
func (h *History) Range(from, to uint64) []EventRecord {
	return h.collect(func(r *EventRecord) (bool, bool) {
		return r.SeqNum >= from && r.SeqNum <= to, r.SeqNum < to
	})
}

// First returns the n oldest records.
func (h *History) First(n int) []EventRecord {
	if n <= 0 {
		return []EventRecord{}
	}
	count := 0
	return h.collect(func(*EventRecord) (bool, bool) {
		count++
		return true, count < n
	})
}

// Last returns the n latest records.
func (h *History) Last(n int) []EventRecord {
	if n <= 0 {
		return []EventRecord{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	skip := len(h.perm) + len(h.recent) - h.head - n
	i := 0
	return h.collectLocked(func(*EventRecord) (bool, bool) {
		i++
		return i > skip, true
	})
}
