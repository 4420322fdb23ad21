package eventloop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

func TestLargeTransaction(t *testing.T) {
	// Enough keys for the transaction to switch from scanning to indexing.
	const n = 100
	e := newEnv(t, []string{"a", "b"})
	var mismatches int
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		for i := 0; i < n; i++ {
			txn.Put(fmt.Sprint("k", i), i)
		}
		return "", nil
	}
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		for i := 0; i < n; i++ {
			if txn.Get(fmt.Sprint("k", i)) != i {
				mismatches++
			}
			if i%2 == 0 {
				txn.Delete(fmt.Sprint("k", i))
			} else {
				txn.Put(fmt.Sprint("k", i), -i)
			}
		}
		return "", nil
	}
	e.startRunning()
	if err := e.run(el.NewUpdate("big")); err != nil {
		t.Fatal(err)
	}
	if mismatches != 0 {
		t.Fatalf("%d values not seen by the next handler", mismatches)
	}
	last, _ := e.committer.Last()
	if len(last.Values) != n {
		t.Fatalf("%d values committed, want %d (one per key)", len(last.Values), n)
	}
	for i, kv := range last.Values {
		want := any(-i)
		if i%2 == 0 {
			want = nil
		}
		if kv.Key != fmt.Sprint("k", i) || kv.Value != want {
			t.Fatalf("value %d: %v=%v, want %v", i, kv.Key, kv.Value, want)
		}
	}
}

func TestFollowUpQueueBound(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.QueueSize = 2 }))
	var errs []error
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "parent" {
			for i := 0; i < 3; i++ {
				errs = append(errs, txn.PushFollowUp(el.NewUpdate("child")))
			}
			errs = append(errs, txn.PushFollowUp(nil))
		}
		return "", nil
	}
	e.startRunning()
	if err := e.run(el.NewUpdate("parent")); err != nil {
		t.Fatal(err)
	}
	e.waitProcessed(4)
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], eventloop.ErrQueueFull) || !errors.Is(errs[3], eventloop.ErrInvalidEvent) {
		t.Fatalf("PushFollowUp errors %v, want nil, nil, ErrQueueFull, ErrInvalidEvent", errs)
	}
}

func TestShutdownBeforeStartupResync(t *testing.T) {
	e := newEnv(t, []string{"a"})
	held := el.NewUpdate("held")
	e.push(held)
	shutdown := &eventloop.Shutdown{}
	e.push(shutdown)
	e.start()
	if err := wait(t, held); !errors.Is(err, eventloop.ErrClosed) {
		t.Fatalf("held event: %v, want ErrClosed", err)
	}
	if done, err := shutdown.IsDone(); !done || err != nil {
		t.Fatalf("Shutdown: done %v, %v", done, err)
	}
	if calls := e.calls.Calls(); len(calls) != 0 {
		t.Fatalf("handlers that never resynced were called: %v", calls)
	}
}

// panickyEvent panics in Direction, which only the loop goroutine calls.
type panickyEvent struct{ el.Event }

func (*panickyEvent) Direction() eventloop.UpdateDirectionType { panic("broken event") }

func TestPanickingEventMethod(t *testing.T) {
	e := newEnv(t, []string{"a"})
	e.startRunning()
	ev := &panickyEvent{Event: el.Event{Name: "panicky"}}
	e.push(ev)
	err := wait(t, &ev.Event)
	var pe *eventloop.PanicError
	if !errors.As(err, &pe) || ev.DoneCalls() != 1 {
		t.Fatalf("Done(%v) called %d times, want one PanicError", err, ev.DoneCalls())
	}
	if err := e.run(el.NewUpdate("next")); err != nil {
		t.Fatalf("loop broken by a panicking event: %v", err)
	}
	if recs := e.loop.History().Records(); len(recs) != 3 || recs[1].Name != "panicky" {
		t.Fatalf("history %v", names(recs))
	}
}

func TestEnumsText(t *testing.T) {
	for m := eventloop.Update; m <= eventloop.DownstreamResync; m++ {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back eventloop.EventMethodType
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Fatalf("%s: round trip gave %v, %v", b, back, err)
		}
	}
	var m eventloop.EventMethodType
	if err := json.Unmarshal([]byte(`"Sideways"`), &m); err == nil {
		t.Fatal("unknown method accepted")
	}
	if _, err := json.Marshal(eventloop.EventMethodType(9)); err == nil {
		t.Fatal("invalid method marshalled")
	}
	for _, s := range []fmt.Stringer{eventloop.BestEffortIgnoreErrors, eventloop.Reverse, eventloop.AfterError, eventloop.StateAborted} {
		if s.String() == "" {
			t.Fatalf("%T has no name", s)
		}
	}
}
