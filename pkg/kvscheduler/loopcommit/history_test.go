package loopcommit_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// blob is a large desired value, as a resync of a big operator carries
// (every desired object).
type blob struct{ data []byte }

// bigResync desires objects fresh values at every resync and remembers weak
// pointers to the values of the first one.
type bigResync struct {
	objects int
	resyncs int
	first   []weak.Pointer[blob]
}

func (h *bigResync) String() string                    { return "big" }
func (h *bigResync) HandlesEvent(eventloop.Event) bool { return true }
func (h *bigResync) Revert(eventloop.Event) error      { return nil }
func (h *bigResync) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	return "", nil
}

func (h *bigResync) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	h.resyncs++
	for i := range h.objects {
		v := &blob{data: make([]byte, 64<<10)}
		v.data[0] = byte(h.resyncs) // not equivalent to the previous value: the scheduler replaces it
		if h.resyncs == 1 {
			h.first = append(h.first, weak.Make(v))
		}
		txn.Put(fmt.Sprintf("big/%d", i), v)
	}
	return nil
}

// retainedAfterResyncs runs a loop committing into a scheduler that keeps
// two transaction records, pushes resyncs, and returns how many values of
// the first resync are still reachable once both histories have moved on.
func retainedAfterResyncs(t *testing.T, recordEventHistory bool) int {
	t.Helper()
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{HistoryMaxCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noop := func(context.Context, string, *blob) (any, error) { return nil, nil }
	d := kvscheduler.TypedDescriptor[*blob]{
		Name:        "big",
		NBKeyPrefix: "big/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "big/") },
		Create:      noop,
		Delete:      func(context.Context, string, *blob, any) error { return nil },
	}.Build()
	if err := s.RegisterDescriptor(ctx, d); err != nil {
		t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	cfg := eventloop.DefaultConfig()
	cfg.RecordEventHistory = recordEventHistory
	h := &bigResync{objects: 20}
	loop, err := eventloop.New(eventloop.Options{
		Config:    &cfg,
		Handlers:  []eventloop.EventHandler{h},
		Committer: loopcommit.New(s),
		Logger:    logrus.NewEntry(quiet),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	for i := range 10 {
		ev := eventlooptest.NewResync(fmt.Sprintf("resync %d", i))
		ev.Blocking = true
		if err := loop.PushEvent(ev); err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if recordEventHistory && loop.History().Len() != 10 {
		t.Fatalf("event history holds %d records, want 10", loop.History().Len())
	}
	runtime.GC()
	runtime.GC()
	retained := 0
	for _, w := range h.first {
		if w.Value() != nil {
			retained++
		}
	}
	runtime.KeepAlive(loop)
	runtime.KeepAlive(s)
	return retained
}

// TestEventHistoryDoesNotRetainValues: the event history keeps a summary of
// each transaction and the scheduler's sequence number, not the scheduler's
// record, so the values of a resync are released once the scheduler's own
// history (here two records) and the current desired state no longer hold
// them, although the event history still has the resync's record.
func TestEventHistoryDoesNotRetainValues(t *testing.T) {
	if n := retainedAfterResyncs(t, false); n != 0 {
		t.Fatalf("without event history, %d values of the first resync are still reachable: the test measures something else", n)
	}
	if n := retainedAfterResyncs(t, true); n != 0 {
		t.Fatalf("the event history keeps %d of the first resync's 20 values (64 KiB each) reachable", n)
	}
}
