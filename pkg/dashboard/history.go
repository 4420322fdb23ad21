package dashboard

import (
	"net/http"
	"time"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Txn is a scheduler transaction as the page lists it. Values are left
// out: the operations say what happened without showing any object.
type Txn struct {
	Seq         uint64    `json:"seq"`
	Type        string    `json:"type"`
	Resync      string    `json:"resync,omitempty"`
	Description string    `json:"description,omitempty"`
	Start       time.Time `json:"start"`
	Stop        time.Time `json:"stop"`
	Ops         []Op      `json:"ops,omitempty"`
	Errors      []string  `json:"errors,omitempty"`
}

// Op is one executed operation of a transaction.
type Op struct {
	Operation string `json:"op"`
	Key       string `json:"key"`
	PrevState string `json:"prev,omitempty"`
	NewState  string `json:"new,omitempty"`
	Error     string `json:"error,omitempty"`
	NOOP      bool   `json:"noop,omitempty"`
	Retry     bool   `json:"retry,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	Revert    bool   `json:"revert,omitempty"`
}

// Event is an event of the loop as the page lists it.
type Event struct {
	Seq         uint64    `json:"seq"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Method      string    `json:"method"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	FollowUpTo  *uint64   `json:"followUpTo,omitempty"`
	Handlers    []Change  `json:"handlers,omitempty"`
	TxnError    string    `json:"txnError,omitempty"`
	// TxnSeq is the scheduler transaction the event committed, if any.
	TxnSeq *uint64 `json:"txnSeq,omitempty"`
}

// Change is what one handler did for an event.
type Change struct {
	Handler string `json:"handler"`
	Change  string `json:"change,omitempty"`
	Error   string `json:"error,omitempty"`
	Revert  bool   `json:"revert,omitempty"`
}

func (d *Dashboard) encodeTxn(r *kvscheduler.TxnRecord) Txn {
	t := Txn{Seq: r.SeqNum, Type: r.Type.String(), Description: r.Description, Start: r.Start, Stop: r.Stop}
	if r.Resync != kvscheduler.NoResync {
		t.Resync = r.Resync.String()
	}
	for _, o := range r.Executed {
		t.Ops = append(t.Ops, d.encodeOp(o))
	}
	for _, e := range r.Errors {
		t.Errors = append(t.Errors, d.errText("", e))
	}
	return t
}

func (d *Dashboard) encodeOp(o kvscheduler.RecordedOp) Op {
	op := Op{Operation: o.Operation.String(), Key: o.Key, PrevState: o.PrevState.String(), NewState: o.NewState.String(),
		NOOP: o.NOOP, Retry: o.Retry, Attempt: o.Attempt, Revert: o.Revert}
	op.Error = d.errText(o.Key, o.Err)
	return op
}

func (d *Dashboard) encodeEvent(r eventloop.EventRecord) Event {
	e := Event{Seq: r.SeqNum, Name: r.Name, Description: r.Description, Method: r.Method.String(),
		Start: r.ProcessingStart, End: r.ProcessingEnd}
	if r.IsFollowUp {
		parent := r.FollowUpTo
		e.FollowUpTo = &parent
	}
	for _, h := range r.Handlers {
		c := Change{Handler: h.Handler, Change: h.Change, Revert: h.Revert}
		c.Error = d.errText("", h.Error)
		e.Handlers = append(e.Handlers, c)
	}
	e.TxnError = d.errText("", r.TxnError)
	if r.Txn != nil && r.Txn.Ref != "" {
		seq := r.Txn.SeqNum
		e.TxnSeq = &seq
	}
	return e
}

// lastTxns returns the n newest recorded transactions, oldest first.
func (d *Dashboard) lastTxns(n int) []Txn {
	recs := d.opts.Scheduler.TransactionHistory(time.Time{}, time.Time{})
	recs = recs[max(0, len(recs)-n):]
	out := make([]Txn, 0, len(recs))
	for _, r := range recs {
		out = append(out, d.encodeTxn(r))
	}
	return out
}

// serveTxns answers GET /ui/api/txns?last=N (default 200).
func (d *Dashboard) serveTxns(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, d.lastTxns(intParam(r, "last", 200, 10000)))
}

// serveEvents answers GET /ui/api/events?last=N (default 200).
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	out := []Event{}
	if d.opts.Loop != nil {
		for _, rec := range d.opts.Loop.History().Last(intParam(r, "last", 200, 10000)) {
			out = append(out, d.encodeEvent(rec))
		}
	}
	writeJSON(w, out)
}
