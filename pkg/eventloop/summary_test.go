package eventloop_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// hugeSummary returns a summary whose text is a 1 MiB string, 10,000
// operations whose keys are slices of it, and a weak pointer to its memory.
func hugeSummary(seq uint64) (eventloop.TxnSummary, weak.Pointer[byte]) {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'x'
	}
	text := unsafe.String(&b[0], len(b))
	sum := eventloop.TxnSummary{SeqNum: seq, Text: text, FailedOps: 1}
	for i := range 10000 {
		sum.Ops = append(sum.Ops, eventloop.TxnOp{Operation: "CREATE", Key: text[i : i+40], State: "CONFIGURED"})
	}
	return sum, weak.Make(&b[0])
}

// summaryBytes is what MaxTxnSummaryBytes bounds.
func summaryBytes(s *eventloop.TxnSummary) int {
	n := len(s.Ref) + len(s.Text)
	for _, op := range s.Ops {
		n += 64 + len(op.Operation) + len(op.Key) + len(op.State) + len(op.Error)
	}
	return n
}

// TestHistoryBoundsTxnSummaries: whatever a committer returns, the event
// history keeps at most MaxTxnSummaryBytes of it per event, counts what it
// left out, and shares no memory with it (a short string cut from a large
// one would keep the large one alive).
func TestHistoryBoundsTxnSummaries(t *testing.T) {
	var released []weak.Pointer[byte]
	var seq uint64
	committer := eventloop.CommitterFunc(func(context.Context, eventloop.TxnRequest) (eventloop.TxnSummary, error) {
		seq++
		sum, w := hugeSummary(seq)
		released = append(released, w)
		return sum, nil
	})
	e := newEnv(t, []string{"a"}, func(o *eventloop.Options) { o.Committer = committer })
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		txn.Put("key-"+ev.GetName(), 1)
		return "", nil
	}
	e.startRunning()
	for i := range 3 {
		if err := e.run(el.NewUpdate(fmt.Sprintf("e%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	recs := e.loop.History().Records()
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	for _, r := range recs {
		s := r.Txn
		if s == nil {
			t.Fatalf("event #%d: no transaction summary", r.SeqNum)
		}
		if n := summaryBytes(s); n > eventloop.MaxTxnSummaryBytes {
			t.Errorf("event #%d keeps %d bytes of summary, more than %d", r.SeqNum, n, eventloop.MaxTxnSummaryBytes)
		}
		if s.SeqNum != r.SeqNum+1 || s.FailedOps != 1 || len(s.Ops)+s.OmittedOps != 10000 || len(s.Ops) == 0 ||
			!strings.HasSuffix(s.Text, "…") || len(s.Ops[0].Key) != 40 {
			t.Errorf("event #%d: summary seq %d, failed %d, %d ops kept, %d omitted, text of %d bytes",
				r.SeqNum, s.SeqNum, s.FailedOps, len(s.Ops), s.OmittedOps, len(s.Text))
		}
	}
	runtime.GC()
	runtime.GC()
	for i, w := range released {
		if w.Value() != nil {
			t.Errorf("the committer's summary of transaction %d (1 MiB) is still reachable from the history", i+1)
		}
	}
	runtime.KeepAlive(e.loop)
}

// payloadEvent is an event carrying a large payload, as a Kubernetes
// resync carries the snapshot of every watched object.
type payloadEvent struct {
	*el.Event
	payload []byte
}

// firstPayloadRetained processes three payload events and reports whether
// the first one's payload is still reachable.
func firstPayloadRetained(t *testing.T, recordEventHistory bool) bool {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.RecordEventHistory = recordEventHistory }))
	e.startRunning()
	var first weak.Pointer[byte]
	for i := range 3 {
		ev := &payloadEvent{Event: el.NewUpdate(fmt.Sprintf("e%d", i)), payload: make([]byte, 1<<20)}
		if i == 0 {
			first = weak.Make(&ev.payload[0])
		}
		e.push(ev)
		if err := wait(t, ev.Event); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.KeepAlive(e.loop)
	return first.Value() != nil
}

// TestHistoryDoesNotKeepEvents: a record keeps the event's description,
// not the event, so what an event carries is released once it is
// processed, although its record stays in the history.
func TestHistoryDoesNotKeepEvents(t *testing.T) {
	if firstPayloadRetained(t, false) {
		t.Fatal("without event history, the first event's payload is still reachable: the test measures something else")
	}
	if firstPayloadRetained(t, true) {
		t.Fatal("the event history keeps the first event (and its 1 MiB payload) reachable")
	}
}
