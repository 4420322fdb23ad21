package eventloop_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// failingOn makes handler h fail every update event named name.
func failingOn(h *el.Handler, name string) {
	h.OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == name {
			return "", errors.New(name + " failed")
		}
		return "", nil
	}
}

func countHealings(h *el.Handler) *atomic.Int32 {
	var n atomic.Int32
	h.OnResync = func(ev eventloop.Event, state any, count int, txn eventloop.ResyncOperations) error {
		if hr, ok := ev.(*eventloop.HealingResync); ok && hr.Type == eventloop.AfterError {
			n.Add(1)
		}
		return nil
	}
	return &n
}

func TestAfterErrorHealingBackoff(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) {
		c.DelayAfterErrorHealing.Duration = 5 * time.Second
		c.MaxAfterErrorHealingDelay.Duration = 30 * time.Second
	}))
	failingOn(e.h("a"), "fail")
	healings := countHealings(e.h("a"))
	e.startRunning()
	processed := uint64(1)

	fail := func() {
		t.Helper()
		if err := e.run(el.NewUpdate("fail")); err == nil {
			t.Fatal("failing event succeeded")
		}
		processed++
	}
	// expectHealingIn checks the pending healing's delay, checks that it
	// does not run a nanosecond early, then runs it.
	expectHealingIn := func(delay time.Duration) {
		t.Helper()
		due := e.loop.Status().HealingDue
		if want := e.clock.Now().Add(delay); !due.Equal(want) {
			t.Fatalf("healing due in %v, want %v", due.Sub(e.clock.Now()), delay)
		}
		before := healings.Load()
		e.clock.Step(delay - 1)
		if err := e.run(el.NewUpdate("probe")); err != nil { // a full loop iteration
			t.Fatal(err)
		}
		processed++
		if healings.Load() != before {
			t.Fatal("healing ran before its delay")
		}
		e.clock.Step(1)
		processed++
		e.waitProcessed(processed)
		if healings.Load() != before+1 {
			t.Fatalf("%d healings, want %d", healings.Load(), before+1)
		}
		if !e.loop.Status().HealingDue.IsZero() {
			t.Fatal("healing still pending after it ran")
		}
	}

	fail()
	due := e.loop.Status().HealingDue
	fail() // a second error while one healing is pending schedules no other
	if got := e.loop.Status().HealingDue; !got.Equal(due) {
		t.Fatalf("second error moved the pending healing from %v to %v", due, got)
	}
	expectHealingIn(5 * time.Second)
	for _, d := range []time.Duration{10, 20, 30, 30} { // doubling, capped
		fail()
		expectHealingIn(d * time.Second)
	}
	// After a quiet period longer than the cap, the backoff starts over.
	e.clock.Step(31 * time.Second)
	fail()
	expectHealingIn(5 * time.Second)
	if err := e.loop.Health(); err != nil {
		t.Fatal(err)
	}
	recs := e.loop.History().Records()
	var healingRecs int
	for _, r := range recs {
		if r.Name == "Healing Resync" {
			healingRecs++
			if r.Method != eventloop.FullResync {
				t.Fatalf("after-error healing has method %v", r.Method)
			}
		}
	}
	if healingRecs != 6 {
		t.Fatalf("%d healing records, want 6", healingRecs)
	}
}

// TestFailedHealingsBackOffBeforeTheyAreFatal: a failed after-error healing
// schedules the next one with a longer delay and is counted; only
// MaxFailedHealings failures in a row abort the loop, and a healing that
// works resets the count.
func TestFailedHealingsBackOffBeforeTheyAreFatal(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.MaxFailedHealings = 3 }))
	failingOn(e.h("a"), "fail")
	broken := errors.New("still broken")
	var healingWorks atomic.Bool
	e.h("a").OnResync = func(ev eventloop.Event, state any, count int, txn eventloop.ResyncOperations) error {
		if _, ok := ev.(*eventloop.HealingResync); ok && !healingWorks.Load() {
			return broken
		}
		return nil
	}
	e.startRunning()
	cfg := eventloop.DefaultConfig()
	runFailingHealings := func(n int) {
		t.Helper()
		delay := cfg.DelayAfterErrorHealing.Duration
		for i := 1; i <= n; i++ {
			waitFor(t, "the next healing to be scheduled", func() bool { return !e.loop.Status().HealingDue.IsZero() })
			due := e.loop.Status().HealingDue
			if got := due.Sub(e.clock.Now()); got != delay {
				t.Fatalf("healing %d due in %v, want %v", i, got, delay)
			}
			e.clock.Step(delay)
			waitFor(t, "the failed healing to be counted", func() bool { return e.loop.Status().FailedHealings == i })
			delay = min(2*delay, cfg.MaxAfterErrorHealingDelay.Duration)
		}
	}

	if err := e.run(el.NewUpdate("fail")); err == nil {
		t.Fatal("failing event succeeded")
	}
	runFailingHealings(2)
	if err := e.loop.Health(); err != nil {
		t.Fatalf("aborted after 2 failed healings of 3 allowed: %v", err)
	}
	// A healing that works resets the count. The next healing is
	// scheduled after the failed one is counted: wait for it, or the step
	// below may come first and fire nothing (seen under load).
	healingWorks.Store(true)
	waitFor(t, "the next healing to be scheduled", func() bool { return !e.loop.Status().HealingDue.IsZero() })
	e.clock.Step(e.loop.Status().HealingDue.Sub(e.clock.Now()))
	waitFor(t, "the count to reset", func() bool { return e.loop.Status().FailedHealings == 0 && e.loop.Status().HealingDue.IsZero() })

	healingWorks.Store(false)
	e.clock.Step(cfg.MaxAfterErrorHealingDelay.Duration + time.Second) // a quiet period: the delay starts again
	if err := e.run(el.NewUpdate("fail")); err == nil {
		t.Fatal("failing event succeeded")
	}
	runFailingHealings(3)
	waitFor(t, "abort", func() bool { return e.loop.Health() != nil })
	err := e.loop.Health()
	var fe *eventloop.FatalError
	if !errors.Is(err, eventloop.ErrAborted) || !errors.As(err, &fe) || !errors.Is(err, broken) || !strings.Contains(err.Error(), "3 times") {
		t.Fatalf("Health() = %v, want a fatal abort after 3 failed healings caused by the healing error", err)
	}
	if err := e.loop.PushEvent(el.NewUpdate("late")); !errors.Is(err, eventloop.ErrAborted) {
		t.Fatalf("push after abort: %v", err)
	}
}

func TestFailuresThatScheduleHealing(t *testing.T) {
	cases := map[string]struct {
		setup   func(e *env)
		event   *el.Event
		healing bool
	}{
		"failed resync": {
			setup: func(e *env) {
				e.h("a").OnResync = func(ev eventloop.Event, _ any, _ int, _ eventloop.ResyncOperations) error {
					if ev.GetName() == "x" {
						return errors.New("resync failed")
					}
					return nil
				}
			},
			event:   el.NewResync("x"),
			healing: true,
		},
		"failed commit": {
			setup: func(e *env) {
				e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
					txn.Put("k", "v")
					if ev.GetName() == "x" {
						e.committer.FailWith(func(eventloop.TxnRequest) error { return errors.New("commit failed") })
					}
					return "", nil
				}
			},
			event:   el.NewUpdate("x"),
			healing: true,
		},
		"best effort, ignore errors": {
			setup: func(e *env) { failingOn(e.h("a"), "x") },
			event: &el.Event{Name: "x", Txn: eventloop.BestEffortIgnoreErrors},
		},
		"revert failed": {
			setup: func(e *env) {
				failingOn(e.h("b"), "x")
				e.h("a").OnRevert = func(eventloop.Event) error { return errors.New("revert failed") }
			},
			event:   &el.Event{Name: "x", Txn: eventloop.RevertOnFailure},
			healing: true,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []string{"a", "b"})
			c.setup(e)
			e.startRunning()
			if err := e.run(c.event); err == nil {
				t.Fatal("event succeeded")
			}
			if got := !e.loop.Status().HealingDue.IsZero(); got != c.healing {
				t.Fatalf("healing scheduled: %v, want %v", got, c.healing)
			}
		})
	}
}

func TestPeriodicHealing(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) {
		c.EnablePeriodicHealing = true
		c.PeriodicHealingInterval.Duration = time.Minute
	}))
	e.h("a").OnResync = func(ev eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
		txn.Put("k", "v")
		return nil
	}
	e.startRunning()
	for i := 1; i <= 2; i++ {
		e.clock.Step(time.Minute)
		e.waitProcessed(uint64(1 + i))
	}
	txns := e.committer.Txns()
	if len(txns) != 3 {
		t.Fatalf("%d transactions, want the startup resync and two periodic healings", len(txns))
	}
	for _, txn := range txns[1:] {
		if txn.Method != eventloop.DownstreamResync || len(txn.Values) != 0 {
			t.Fatalf("periodic healing txn %+v, want an empty DownstreamResync", txn)
		}
	}
	if calls := callsOf(e.calls.Calls(), "Healing Resync"); len(calls) != 0 {
		t.Fatalf("handlers called for a downstream resync: %v", calls)
	}
	if st := e.committer.State(); st["k"] != "v" {
		t.Fatalf("state after downstream resync: %v", st)
	}
}
