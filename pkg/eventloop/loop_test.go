package eventloop_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

func TestHeldEventsReplayedAfterStartupResync(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	u1, u2, u3 := el.NewUpdate("u1"), el.NewUpdate("u2"), el.NewUpdate("u3")
	e.push(u1) // before Start
	e.start()
	e.push(u2) // after Start, before the resync
	// Not processed: they wait for the startup resync.
	if done, _ := u1.IsDone(); done {
		t.Fatal("u1 processed before the startup resync")
	}
	resync := el.NewResync("startup")
	e.push(resync)
	e.push(u3)
	if err := wait(t, u3); err != nil {
		t.Fatal(err)
	}
	recs := e.loop.History().Records()
	eq(t, "processing order", names(recs), []string{"startup", "u1", "u2", "u3"})
	if recs[0].SeqNum != 0 || recs[0].Method != eventloop.FullResync {
		t.Fatalf("first record: seq %d method %v, want seq 0 FullResync", recs[0].SeqNum, recs[0].Method)
	}
	for i, r := range recs {
		if r.SeqNum != uint64(i) {
			t.Fatalf("record %d has seq %d", i, r.SeqNum)
		}
	}
	eq(t, "calls of a", opsOf(e.h("a").Calls()), []string{"resync:startup", "update:u1", "update:u2", "update:u3"})
	if s := e.loop.Status(); s.State != eventloop.StateRunning {
		t.Fatalf("state %v, want Running", s.State)
	}
}

func opsOf(calls []el.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Op + ":" + c.Event
	}
	return out
}

func TestDefaultStartupResyncSkipsExternalConfigResync(t *testing.T) {
	e := newEnv(t, []string{"a"})
	e.start()
	ext := &eventloop.ExternalConfigResync{Source: "file"}
	e.push(ext)
	resync := el.NewResync("startup")
	e.push(resync)
	if err := wait(t, resync); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := ext.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, "order", names(e.loop.History().Records()), []string{"startup", "External Config Resync"})
}

func TestFollowUpsOvertakeQueuedEvents(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	var pushErr atomic.Value
	store := func(err error) {
		if err != nil {
			pushErr.Store(err)
		}
	}
	later := el.NewUpdate("later")
	f1, f2, f3 := el.NewUpdate("f1"), el.NewUpdate("f2"), el.NewUpdate("f3")
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		switch ev.GetName() {
		case "parent":
			// "later" is queued while the parent is processed, before its
			// follow-ups; the follow-ups must still run first.
			store(e.loop.PushEvent(later))
			store(txn.PushFollowUp(f1))
			store(txn.PushFollowUp(f2))
		case "f1":
			store(txn.PushFollowUp(f3)) // nested: behind f2 (FIFO)
		}
		return "", nil
	}
	e.startRunning()
	parent := el.NewUpdate("parent")
	e.push(parent)
	if err := wait(t, later); err != nil {
		t.Fatal(err)
	}
	if err := pushErr.Load(); err != nil {
		t.Fatalf("push from handler: %v", err)
	}
	recs := e.loop.History().Records()
	eq(t, "order", names(recs), []string{"startup", "parent", "f1", "f2", "f3", "later"})
	bySeq := map[string]eventloop.EventRecord{}
	for _, r := range recs {
		bySeq[r.Name] = r
	}
	for _, c := range []struct{ child, parent string }{{"f1", "parent"}, {"f2", "parent"}, {"f3", "f1"}} {
		r := bySeq[c.child]
		if !r.IsFollowUp || r.FollowUpTo != bySeq[c.parent].SeqNum {
			t.Errorf("%s: IsFollowUp=%v FollowUpTo=%d, want follow-up to %s (#%d)", c.child, r.IsFollowUp, r.FollowUpTo, c.parent, bySeq[c.parent].SeqNum)
		}
	}
	if r := bySeq["later"]; r.IsFollowUp {
		t.Error("later recorded as a follow-up")
	}
	for _, ev := range []*el.Event{parent, f1, f2, f3, later} {
		if ev.DoneCalls() != 1 {
			t.Errorf("%s: Done called %d times", ev.Name, ev.DoneCalls())
		}
	}
}

func TestHandlerOrder(t *testing.T) {
	e := newEnv(t, []string{"a", "b", "c", "d"})
	e.h("c").Handles = func(ev eventloop.Event) bool { return ev.GetName() != "skip-c" }
	e.startRunning()
	fwd := el.NewUpdate("fwd")
	rev := el.NewUpdate("rev")
	rev.Dir = eventloop.Reverse
	skip := el.NewUpdate("skip-c")
	resync := &el.Event{Name: "up", Kind: eventloop.UpstreamResync}
	for _, ev := range []*el.Event{fwd, rev, skip, resync} {
		if err := e.run(ev); err != nil {
			t.Fatal(err)
		}
	}
	calls := e.calls.Calls()
	eq(t, "forward", callsOf(calls, "fwd"), []string{"update:a", "update:b", "update:c", "update:d"})
	eq(t, "reverse", callsOf(calls, "rev"), []string{"update:d", "update:c", "update:b", "update:a"})
	eq(t, "filtered", callsOf(calls, "skip-c"), []string{"update:a", "update:b", "update:d"})
	eq(t, "resync", callsOf(calls, "up"), []string{"resync:a", "resync:b", "resync:c", "resync:d"})
}

func TestRevertOnFailure(t *testing.T) {
	for _, dir := range []eventloop.UpdateDirectionType{eventloop.Forward, eventloop.Reverse} {
		t.Run(dir.String(), func(t *testing.T) {
			e := newEnv(t, []string{"a", "b", "c", "d"})
			boom := errors.New("boom")
			for _, h := range e.handlers {
				h.OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
					txn.Put("key-"+h.Name, h.Name)
					if h.Name == "b" && dir == eventloop.Reverse || h.Name == "c" && dir == eventloop.Forward {
						return "", boom
					}
					return "did " + h.Name, nil
				}
			}
			e.startRunning()
			commits := len(e.committer.Txns())
			ev := el.NewUpdate("pod")
			ev.Txn, ev.Dir = eventloop.RevertOnFailure, dir
			err := e.run(ev)
			var he *eventloop.HandlerError
			if !errors.Is(err, boom) || !errors.As(err, &he) {
				t.Fatalf("Done error %v, want the handler's error", err)
			}
			want := []string{"update:a", "update:b", "update:c", "revert:b", "revert:a"}
			if dir == eventloop.Reverse {
				want = []string{"update:d", "update:c", "update:b", "revert:c", "revert:d"}
			}
			eq(t, "calls", callsOf(e.calls.Calls(), "pod"), want)
			if n := len(e.committer.Txns()); n != commits {
				t.Fatalf("%d transactions committed for a reverted event", n-commits)
			}
			if due := e.loop.Status().HealingDue; !due.IsZero() {
				t.Fatal("healing scheduled after a clean revert")
			}
			rec, _ := e.loop.History().Get(1)
			var reverted []string
			for _, h := range rec.Handlers {
				if h.Revert {
					reverted = append(reverted, h.Handler)
				}
			}
			eq(t, "recorded reverts", reverted, []string{want[3][len("revert:"):], want[4][len("revert:"):]})
		})
	}
}

func TestRevertOnCommitFailure(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	for _, h := range e.handlers {
		h.OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
			txn.Put("k-"+h.Name, 1)
			return "", nil
		}
	}
	e.startRunning()
	failure := errors.New("southbound down")
	e.committer.FailWith(func(r eventloop.TxnRequest) error {
		if !r.RevertOnFailure {
			return errors.New("RevertOnFailure not passed to the committer")
		}
		return failure
	})
	ev := el.NewUpdate("pod")
	ev.Txn = eventloop.RevertOnFailure
	err := e.run(ev)
	var ce *eventloop.CommitError
	if !errors.Is(err, failure) || !errors.As(err, &ce) {
		t.Fatalf("Done error %v, want the commit error", err)
	}
	eq(t, "calls", callsOf(e.calls.Calls(), "pod"), []string{"update:a", "update:b", "revert:b", "revert:a"})
	if !e.loop.Status().HealingDue.IsZero() {
		t.Fatal("healing scheduled after the committer and handlers reverted")
	}
}

func TestAbortEventError(t *testing.T) {
	e := newEnv(t, []string{"a", "b", "c"})
	stop := errors.New("cannot continue")
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		txn.Put("k", "v")
		return "", nil
	}
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "bad" {
			return "", eventloop.NewAbortEventError(stop)
		}
		return "", nil
	}
	e.startRunning()
	commits := len(e.committer.Txns())
	err := e.run(el.NewUpdate("bad"))
	var ae *eventloop.AbortEventError
	if !errors.As(err, &ae) || !errors.Is(err, stop) {
		t.Fatalf("Done error %v, want the AbortEventError", err)
	}
	eq(t, "calls", callsOf(e.calls.Calls(), "bad"), []string{"update:a", "update:b"})
	if n := len(e.committer.Txns()); n != commits {
		t.Fatal("an aborted event was committed")
	}
	if e.loop.Status().HealingDue.IsZero() {
		t.Fatal("no healing scheduled after an aborted event")
	}
	// The loop goes on.
	if err := e.run(el.NewUpdate("next")); err != nil {
		t.Fatal(err)
	}
	if e.loop.Health() != nil {
		t.Fatal(e.loop.Health())
	}
}

func TestFatalErrorAbortsLoop(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	release := make(chan struct{})
	cause := errors.New("corrupted state")
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "fatal" {
			<-release // so that the events below are queued behind it
			txn.Put("k", "v")
			_ = txn.PushFollowUp(el.NewUpdate("follow-up"))
			return "", eventloop.NewFatalError(cause)
		}
		return "", nil
	}
	e.startRunning()
	commits := len(e.committer.Txns())
	fatal := el.NewUpdate("fatal")
	e.push(fatal)
	queued := []*el.Event{el.NewUpdate("q1"), el.NewUpdate("q2")}
	for _, ev := range queued {
		e.push(ev)
	}
	close(release)
	err := wait(t, fatal)
	var fe *eventloop.FatalError
	if !errors.As(err, &fe) || !errors.Is(err, cause) {
		t.Fatalf("Done error %v, want the FatalError", err)
	}
	for _, ev := range queued {
		if err := wait(t, ev); !errors.Is(err, eventloop.ErrAborted) || !errors.Is(err, cause) {
			t.Fatalf("%s: %v, want ErrAborted with the cause", ev.Name, err)
		}
	}
	if calls := callsOf(e.calls.Calls(), "fatal"); len(calls) != 1 {
		t.Fatalf("handlers after the fatal one were called: %v", calls)
	}
	if n := len(e.committer.Txns()); n != commits {
		t.Fatal("the fatal event was committed")
	}
	if err := e.loop.Health(); !errors.Is(err, eventloop.ErrAborted) || !errors.Is(err, cause) {
		t.Fatalf("Health() = %v", err)
	}
	select {
	case <-e.loop.Unhealthy():
	default:
		t.Fatal("Unhealthy not closed")
	}
	if err := e.loop.PushEvent(el.NewUpdate("late")); !errors.Is(err, eventloop.ErrAborted) {
		t.Fatalf("push after abort: %v", err)
	}
	if s := e.loop.Status(); s.State != eventloop.StateAborted {
		t.Fatalf("state %v", s.State)
	}
	for _, ev := range append(queued, fatal) {
		if ev.DoneCalls() != 1 {
			t.Errorf("%s: Done called %d times", ev.Name, ev.DoneCalls())
		}
	}
}

func TestStartupDeadline(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.StartupResyncDeadline.Duration = 10 * time.Second }))
	held := []*el.Event{el.NewUpdate("h1"), el.NewUpdate("h2")}
	for _, ev := range held {
		e.push(ev)
	}
	e.start()
	e.clock.Step(10*time.Second - 1)
	time.Sleep(10 * time.Millisecond) // give a wrong implementation a chance to fire early
	if err := e.loop.Health(); err != nil {
		t.Fatalf("unhealthy before the deadline: %v", err)
	}
	e.clock.Step(1)
	for _, ev := range held {
		if err := wait(t, ev); !errors.Is(err, eventloop.ErrStartupResyncDeadline) || !errors.Is(err, eventloop.ErrAborted) {
			t.Fatalf("%s: %v, want the startup deadline error", ev.Name, err)
		}
		if ev.DoneCalls() != 1 {
			t.Fatalf("%s: Done called %d times", ev.Name, ev.DoneCalls())
		}
	}
	if err := e.loop.Health(); !errors.Is(err, eventloop.ErrStartupResyncDeadline) {
		t.Fatalf("Health() = %v", err)
	}
	if err := e.loop.PushEvent(el.NewResync("too late")); !errors.Is(err, eventloop.ErrAborted) {
		t.Fatalf("push after the deadline: %v", err)
	}
	if len(e.calls.Calls()) != 0 {
		t.Fatal("handlers were called")
	}
}

func TestQueueFull(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.QueueSize = 2 }))
	// Not started: nothing drains the queue.
	e.push(el.NewUpdate("1"))
	e.push(el.NewUpdate("2"))
	pushed3 := make(chan error, 1)
	go func() { pushed3 <- e.loop.PushEvent(el.NewUpdate("3")) }()
	select {
	case err := <-pushed3:
		if !errors.Is(err, eventloop.ErrQueueFull) {
			t.Fatalf("PushEvent on a full queue: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("PushEvent blocked on a full queue")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := e.loop.PushEventContext(ctx, el.NewUpdate("3")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PushEventContext on a full queue: %v", err)
	}
	// The startup resync still gets in, so a burst cannot lock the loop out.
	e.push(el.NewResync("startup"))

	// A producer waiting for room gets in once the loop drains the queue.
	waiting := el.NewUpdate("waiting")
	pushed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		pushed <- e.loop.PushEventContext(ctx, waiting)
	}()
	e.start()
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	if err := wait(t, waiting); err != nil {
		t.Fatal(err)
	}
}

func TestInvalidEvents(t *testing.T) {
	e := newEnv(t, nil)
	for _, ev := range []eventloop.Event{nil, &el.Event{Name: "bad", Kind: 42}, notUpdateEvent{}} {
		if err := e.loop.PushEvent(ev); !errors.Is(err, eventloop.ErrInvalidEvent) {
			t.Errorf("PushEvent(%v) = %v, want ErrInvalidEvent", ev, err)
		}
	}
}

type notUpdateEvent struct{}

func (notUpdateEvent) GetName() string                   { return "not-update" }
func (notUpdateEvent) String() string                    { return "not-update" }
func (notUpdateEvent) Method() eventloop.EventMethodType { return eventloop.Update }
func (notUpdateEvent) IsBlocking() bool                  { return false }
func (notUpdateEvent) Done(error)                        {}

func TestWaitInsideLoop(t *testing.T) {
	e := newEnv(t, []string{"a"})
	var followUp, pushed *el.Event
	var errFollowUp, errPushed atomic.Value
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() != "parent" {
			return "", nil
		}
		// A blocking follow-up: runs after this event, so waiting here
		// would deadlock.
		followUp = el.NewUpdate("follow-up")
		followUp.Blocking = true
		if err := txn.PushFollowUp(followUp); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		errFollowUp.Store(fmt.Sprint(followUp.Wait(ctx)))
		// An event pushed the normal way, waited for with the
		// transaction's context.
		pushed = el.NewUpdate("pushed")
		pushed.Blocking = true
		if err := e.loop.PushEvent(pushed); err != nil {
			return "", err
		}
		errPushed.Store(fmt.Sprint(pushed.Wait(txn.Context())))
		return "", nil
	}
	e.startRunning()
	parent := el.NewUpdate("parent")
	if err := e.run(parent); err != nil {
		t.Fatal(err)
	}
	want := eventloop.ErrWaitInLoop.Error()
	if got := errFollowUp.Load(); got != want {
		t.Errorf("waiting on a follow-up inside the loop: %v, want %v", got, want)
	}
	if got := errPushed.Load(); got != want {
		t.Errorf("waiting with the transaction context: %v, want %v", got, want)
	}
	// Outside the loop, once the parent is done, waiting works.
	if err := wait(t, followUp); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, pushed); err != nil {
		t.Fatal(err)
	}
}

func TestPushFollowUpAfterEventFinished(t *testing.T) {
	e := newEnv(t, []string{"a"})
	var kept eventloop.UpdateOperations
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		kept = txn
		return "", nil
	}
	e.startRunning()
	if err := e.run(el.NewUpdate("u")); err != nil {
		t.Fatal(err)
	}
	if err := kept.PushFollowUp(el.NewUpdate("late")); !errors.Is(err, eventloop.ErrTxnFinished) {
		t.Fatalf("PushFollowUp on a finished transaction: %v", err)
	}
}

func TestHandlerPanicIsHandlerError(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "u" {
			panic("handler bug")
		}
		return "", nil
	}
	e.h("b").Handles = func(ev eventloop.Event) bool {
		if ev.GetName() == "panic-in-handles" {
			panic("filter bug")
		}
		return true
	}
	e.startRunning()
	err := e.run(el.NewUpdate("u"))
	var pe *eventloop.PanicError
	var he *eventloop.HandlerError
	if !errors.As(err, &pe) || !errors.As(err, &he) || he.Handler != "a" {
		t.Fatalf("Done error %v, want a PanicError of handler a", err)
	}
	// Best effort: b still ran.
	eq(t, "calls", callsOf(e.calls.Calls(), "u"), []string{"update:a", "update:b"})
	if e.loop.Status().HealingDue.IsZero() {
		t.Fatal("no healing scheduled after a panic")
	}
	err = e.run(el.NewUpdate("panic-in-handles"))
	if !errors.As(err, &pe) || !errors.As(err, &he) || he.Handler != "b" {
		t.Fatalf("Done error %v, want a PanicError of b's HandlesEvent", err)
	}
}

func TestTransactions(t *testing.T) {
	e := newEnv(t, []string{"a", "b"}, withConfig(func(c *eventloop.Config) {
		c.DelayRetry.Duration = 7 * time.Second
		c.MaxRetryAttempts = 9
	}))
	var seen atomic.Value
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "noop" {
			return "", nil
		}
		txn.Put("x", 1)
		txn.Put("y", 2)
		txn.Delete("z")
		return "put x and y", nil
	}
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "noop" {
			return "", nil
		}
		seen.Store(fmt.Sprint(txn.Get("x"), txn.Get("z"), txn.Get("none")))
		txn.Put("x", 10) // overrides a's value
		return "", nil
	}
	var resyncCounts []int
	e.h("a").OnResync = func(ev eventloop.Event, state any, n int, txn eventloop.ResyncOperations) error {
		resyncCounts = append(resyncCounts, n)
		if ev.GetName() == "startup" {
			txn.Put("r", "resynced")
		}
		return nil
	}
	e.startRunning()
	if err := e.run(el.NewUpdate("change")); err != nil {
		t.Fatal(err)
	}
	if got := seen.Load(); got != "1 <nil> <nil>" {
		t.Fatalf("b saw %v", got)
	}
	n := len(e.committer.Txns())
	if err := e.run(el.NewUpdate("noop")); err != nil {
		t.Fatal(err)
	}
	if len(e.committer.Txns()) != n {
		t.Fatal("an empty update transaction was committed")
	}
	// An empty resync is committed: it removes everything.
	if err := e.run(el.NewResync("empty")); err != nil {
		t.Fatal(err)
	}
	txns := e.committer.Txns()
	if len(txns) != 3 {
		t.Fatalf("%d transactions, want 3", len(txns))
	}
	startup, change, empty := txns[0], txns[1], txns[2]
	if startup.Method != eventloop.FullResync || !startup.IsResync() || len(startup.Values) != 1 {
		t.Fatalf("startup txn %+v", startup)
	}
	eqStr(t, "update values", fmt.Sprint(change.Values), "[{x 10} {y 2} {z <nil>}]")
	if change.SeqNum != 1 || change.Method != eventloop.Update || change.Description != "change\n* a: put x and y" {
		t.Fatalf("update txn %+v", change)
	}
	want := eventloop.RetryOptions{Enabled: true, Delay: 7 * time.Second, MaxAttempts: 9, ExpBackoff: true}
	if change.Retry != want {
		t.Fatalf("retry %+v, want %+v", change.Retry, want)
	}
	if empty.Method != eventloop.FullResync || len(empty.Values) != 0 {
		t.Fatalf("empty resync txn %+v", empty)
	}
	if len(e.committer.State()) != 0 {
		t.Fatalf("state after the empty resync: %v", e.committer.State())
	}
	eq(t, "resync counts", resyncCounts, []int{1, 2})
	rec, _ := e.loop.History().Get(1)
	if rec.Txn == nil || rec.TxnError != nil {
		t.Fatalf("history of the update: txn %v, error %v", rec.Txn, rec.TxnError)
	}
}

func eqStr(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func TestInputState(t *testing.T) {
	e := newEnv(t, []string{"a"})
	var states []any
	e.h("a").OnResync = func(ev eventloop.Event, state any, n int, txn eventloop.ResyncOperations) error {
		states = append(states, fmt.Sprint(state))
		return nil
	}
	e.start()
	snapshot := &el.StateEvent{Event: el.Event{Name: "snapshot", Kind: eventloop.FullResync}, State: map[string]int{"pods": 1}}
	e.push(snapshot)
	change := &el.StateEvent{Event: el.Event{Name: "change", Kind: eventloop.Update}, Apply: func(prev any) any {
		m := prev.(map[string]int)
		m["pods"]++
		return m
	}}
	e.push(change)
	resync := el.NewResync("resync")
	e.push(resync)
	if err := wait(t, resync); err != nil {
		t.Fatal(err)
	}
	eq(t, "states seen by Resync", states, []any{"map[pods:1]", "map[pods:2]"})
}

func TestRefreshStateOnResyncsWithoutState(t *testing.T) {
	source := map[string]int{"pods": 1}
	refreshErr := error(nil)
	e := newEnv(t, []string{"a"}, func(o *eventloop.Options) {
		o.RefreshState = func() (any, error) {
			if refreshErr != nil {
				return nil, refreshErr
			}
			return fmt.Sprint(source), nil
		}
	})
	var states []any
	e.h("a").OnResync = func(ev eventloop.Event, state any, n int, txn eventloop.ResyncOperations) error {
		states = append(states, state)
		return nil
	}
	e.start()
	startup := el.NewResync("startup")
	e.push(startup)
	if err := wait(t, startup); err != nil {
		t.Fatal(err)
	}
	source["pods"] = 2 // the source moves on
	resync := el.NewResync("requested")
	e.push(resync)
	if err := wait(t, resync); err != nil {
		t.Fatal(err)
	}
	refreshErr = errors.New("cache gone")
	failed := el.NewResync("fails")
	e.push(failed)
	if err := wait(t, failed); err == nil || !strings.Contains(err.Error(), "cache gone") {
		t.Fatalf("a failed refresh must fail the resync, got %v", err)
	}
	// Each resync without state of its own re-reads the source; a failed
	// refresh keeps the last good state (the handlers still run).
	eq(t, "states seen by Resync", states, []any{"map[pods:1]", "map[pods:2]", "map[pods:2]"})
}

func TestStop(t *testing.T) {
	e := newEnv(t, []string{"a", "b"})
	e.h("a").OnResync = func(ev eventloop.Event, state any, n int, txn eventloop.ResyncOperations) error {
		txn.Put("route", "r1")
		txn.Put("iface", "i1")
		return nil
	}
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if _, ok := ev.(*eventloop.Shutdown); ok {
			txn.Delete("route")
			return "cleaned up", nil
		}
		return "", nil
	}
	e.startRunning()
	before := el.NewUpdate("before")
	e.push(before)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.loop.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, before); err != nil {
		t.Fatalf("event queued before Stop: %v", err)
	}
	eq(t, "shutdown calls", callsOf(e.calls.Calls(), "Shutdown"), []string{"update:a", "update:b"})
	if st := e.committer.State(); fmt.Sprint(st) != "map[iface:i1]" {
		t.Fatalf("state after shutdown: %v", st)
	}
	if err := e.loop.PushEvent(el.NewUpdate("after")); !errors.Is(err, eventloop.ErrClosed) {
		t.Fatalf("push after Stop: %v", err)
	}
	if err := e.loop.Health(); !errors.Is(err, eventloop.ErrClosed) {
		t.Fatalf("Health after Stop: %v", err)
	}
	select {
	case <-e.loop.Exited():
	default:
		t.Fatal("loop goroutine still running after Stop")
	}
}

func TestShutdownEventStopsLoop(t *testing.T) {
	e := newEnv(t, []string{"a"})
	release := make(chan struct{})
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "slow" {
			<-release
			_ = txn.PushFollowUp(el.NewUpdate("follow-up")) // overtakes the Shutdown
		}
		return "", nil
	}
	e.startRunning()
	slow := el.NewUpdate("slow")
	e.push(slow)
	shutdown := &eventloop.Shutdown{}
	e.push(shutdown)
	if err := e.loop.PushEvent(el.NewUpdate("behind")); !errors.Is(err, eventloop.ErrClosed) {
		t.Fatalf("push behind a Shutdown: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	// Stop with a Shutdown already queued waits for it instead of cutting
	// the queue short.
	stopped := make(chan error, 1)
	go func() { stopped <- e.loop.Stop(ctx) }()
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if err := shutdown.Wait(ctx); err != nil {
		t.Fatalf("queued Shutdown: %v", err)
	}
	select {
	case <-e.loop.Exited():
	case <-ctx.Done():
		t.Fatal("loop did not exit after Shutdown")
	}
	eq(t, "order", names(e.loop.History().Records()), []string{"startup", "slow", "follow-up", "Shutdown"})
}

// TestDoneExactlyOnce drives events through every path that completes them
// and checks each one's Done count.
func TestDoneExactlyOnce(t *testing.T) {
	t.Run("close with queued events and follow-ups", func(t *testing.T) {
		e := newEnv(t, []string{"a"})
		inHandler := make(chan struct{})
		var fu *el.Event
		e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
			if ev.GetName() == "slow" {
				fu = el.NewUpdate("fu")
				_ = txn.PushFollowUp(fu)
				close(inHandler)
				select {
				case <-txn.Context().Done():
				case <-time.After(patience):
					return "", errors.New("transaction context not cancelled by Close")
				}
			}
			return "", nil
		}
		e.startRunning()
		slow := el.NewUpdate("slow")
		e.push(slow)
		<-inHandler
		queued := []*el.Event{el.NewUpdate("q1"), el.NewUpdate("q2")}
		for _, ev := range queued {
			e.push(ev)
		}
		_ = e.loop.Close()
		if err := wait(t, slow); err != nil {
			t.Fatalf("the event being processed: %v", err)
		}
		for _, ev := range append(queued, fu) {
			if err := wait(t, ev); !errors.Is(err, eventloop.ErrClosed) {
				t.Fatalf("%s: %v, want ErrClosed", ev.Name, err)
			}
		}
		for _, ev := range append(queued, fu, slow) {
			if ev.DoneCalls() != 1 {
				t.Errorf("%s: Done called %d times", ev.Name, ev.DoneCalls())
			}
		}
		if s := e.loop.Status().State; s != eventloop.StateStopped {
			t.Fatalf("state %v after Close", s)
		}
	})
	t.Run("close before start", func(t *testing.T) {
		e := newEnv(t, []string{"a"})
		evs := []*el.Event{el.NewUpdate("1"), el.NewResync("2")}
		for _, ev := range evs {
			e.push(ev)
		}
		_ = e.loop.Close()
		_ = e.loop.Close()
		for _, ev := range evs {
			if err := wait(t, ev); !errors.Is(err, eventloop.ErrClosed) || ev.DoneCalls() != 1 {
				t.Fatalf("%s: %v, %d calls", ev.Name, err, ev.DoneCalls())
			}
		}
		if err := e.loop.Start(context.Background()); !errors.Is(err, eventloop.ErrClosed) {
			t.Fatalf("Start after Close: %v", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		e := newEnv(t, []string{"a"})
		ctx, cancel := context.WithCancel(context.Background())
		if err := e.loop.Start(ctx); err != nil {
			t.Fatal(err)
		}
		held := el.NewUpdate("held")
		e.push(held)
		cancel()
		if err := wait(t, held); !errors.Is(err, eventloop.ErrClosed) || held.DoneCalls() != 1 {
			t.Fatalf("held: %v, %d calls", err, held.DoneCalls())
		}
	})
	t.Run("every outcome", func(t *testing.T) {
		e := newEnv(t, []string{"a"})
		e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
			switch ev.GetName() {
			case "error":
				return "", errors.New("x")
			case "abort":
				return "", eventloop.NewAbortEventError(errors.New("x"))
			case "panic":
				panic("x")
			}
			return "", nil
		}
		e.startRunning()
		var evs []*el.Event
		for _, n := range []string{"ok", "error", "abort", "panic", "revert"} {
			ev := el.NewUpdate(n)
			if n == "revert" {
				ev.Txn = eventloop.RevertOnFailure
			}
			evs = append(evs, ev)
			e.push(ev)
		}
		for _, ev := range evs {
			_ = wait(t, ev)
		}
		_ = e.loop.Close()
		for _, ev := range evs {
			if ev.DoneCalls() != 1 {
				t.Errorf("%s: Done called %d times", ev.Name, ev.DoneCalls())
			}
		}
	})
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.EnablePeriodicHealing = true }))
		e.startRunning()
		e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
			return "", errors.New("schedules a healing timer")
		}
		_ = e.run(el.NewUpdate("fail"))
		waiting := make(chan error, 1)
		go func() { waiting <- e.loop.PushEventContext(context.Background(), el.NewUpdate("x")) }()
		<-waiting
		_ = e.loop.Close()
	}
	// A goroutine that closed Exited may still be returning: poll.
	deadline := time.Now().Add(patience)
	for (runtime.NumGoroutine() > before || len(loopGoroutines()) > 0) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after closing the loops:\n%v", before, n, loopGoroutines())
	}
	if left := loopGoroutines(); len(left) > 0 {
		t.Fatalf("loop goroutines left: %v", left)
	}
}

func TestStartTwiceAndNilContexts(t *testing.T) {
	e := newEnv(t, nil)
	//nolint:staticcheck // a nil context is the bad input under test
	if err := e.loop.Start(nil); err == nil {
		t.Fatal("Start(nil) succeeded")
	}
	e.start()
	if err := e.loop.Start(context.Background()); !errors.Is(err, eventloop.ErrAlreadyStarted) {
		t.Fatalf("second Start: %v", err)
	}
	ev := el.NewUpdate("x")
	//nolint:staticcheck // a nil context is the bad input under test
	if err := ev.Wait(nil); err == nil {
		t.Fatal("Wait(nil) succeeded")
	}
}

// A startup resync held back for a known reason (a bridge waiting for a kind
// to sync) does not abort the loop at the deadline: health names the reason,
// held events wait, and the resync is processed when it comes.
func TestStartupDeadlineWhileWaitingForInput(t *testing.T) {
	waiting := []string{"v1/Secret"}
	var mu sync.Mutex
	e := newEnv(t, []string{"a"},
		withConfig(func(c *eventloop.Config) { c.StartupResyncDeadline.Duration = 10 * time.Second }),
		func(o *eventloop.Options) {
			o.StartupWaitingFor = func() []string { mu.Lock(); defer mu.Unlock(); return waiting }
		})
	held := el.NewUpdate("held")
	e.push(held)
	e.start()
	e.clock.Step(10 * time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		err := e.loop.Health()
		if errors.Is(err, eventloop.ErrStartupResyncDeadline) && strings.Contains(fmt.Sprint(err), "v1/Secret") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health %v, want the startup deadline naming v1/Secret", err)
		}
	}
	if s := e.loop.Status(); s.State != eventloop.StateStarting {
		t.Fatalf("state %v, want still starting", s.State)
	}
	mu.Lock()
	waiting = nil
	mu.Unlock()
	startup := el.NewResync("startup")
	e.push(startup)
	if err := wait(t, startup); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, held); err != nil {
		t.Fatalf("held event: %v", err)
	}
	if err := e.loop.Health(); err != nil {
		t.Fatalf("health after the startup resync: %v", err)
	}
}
