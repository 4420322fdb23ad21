package eventloop_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// observer is a recording handler that is also a TxnObserver: it logs
// "done:<event>:<committed>" in the shared call log.
type observer struct {
	*el.Handler
	mu    sync.Mutex
	told  []string
	panic bool
}

func (o *observer) TxnDone(ev eventloop.Event, committed bool) {
	o.mu.Lock()
	o.told = append(o.told, fmt.Sprintf("%s:%v", ev.GetName(), committed))
	o.mu.Unlock()
	if o.panic {
		panic("observer broke")
	}
}

func (o *observer) toldOf(event string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, s := range o.told {
		if len(s) > len(event) && s[:len(event)+1] == event+":" {
			out = append(out, s)
		}
	}
	return out
}

// withObservers makes every handler of the env a TxnObserver.
func withObservers(obs map[string]*observer) envOption {
	return func(o *eventloop.Options) {
		for i, h := range o.Handlers {
			eh := h.(*el.Handler)
			ob := &observer{Handler: eh}
			obs[eh.Name] = ob
			o.Handlers[i] = ob
		}
	}
}

// TestTxnObserverIsToldWhetherItsTransactionWasCommitted: a handler that
// keeps a picture of what it put learns, for every event it was called
// for, whether the values became the desired state: not when a later
// handler aborted the event (Revert is not called for a BestEffort
// event), not when a RevertOnFailure commit failed, yes when a BestEffort
// commit failed (its values are retried), and not for an aborted resync;
// a handler after the one that aborted is never called, and is told too,
// so that it knows it missed the event.
func TestTxnObserverIsToldWhetherItsTransactionWasCommitted(t *testing.T) {
	obs := map[string]*observer{}
	e := newEnv(t, []string{"a", "b", "c"}, withObservers(obs))
	stop := errors.New("cannot continue")
	put := func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		txn.Put("k-"+ev.GetName(), 1)
		return "", nil
	}
	e.h("a").OnUpdate = put
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "abort" {
			return "", eventloop.NewAbortEventError(stop)
		}
		return put(ev, txn)
	}
	e.h("b").OnResync = func(ev eventloop.Event, _ any, _ int, _ eventloop.ResyncOperations) error {
		if ev.GetName() == "bad-resync" {
			return eventloop.NewAbortEventError(stop)
		}
		return nil
	}
	e.startRunning()

	_ = e.run(el.NewUpdate("ok"))
	eq(t, "a told of ok", obs["a"].toldOf("ok"), []string{"ok:true"})

	_ = e.run(el.NewUpdate("abort"))
	eq(t, "a told of abort", obs["a"].toldOf("abort"), []string{"abort:false"})
	eq(t, "b told of abort", obs["b"].toldOf("abort"), []string{"abort:false"})
	eq(t, "c, never called as b aborted, told of abort", obs["c"].toldOf("abort"), []string{"abort:false"})

	e.committer.FailWith(func(eventloop.TxnRequest) error { return errors.New("southbound down") })
	_ = e.run(el.NewUpdate("besteffort"))
	eq(t, "a told of a failed BestEffort commit", obs["a"].toldOf("besteffort"), []string{"besteffort:true"})
	ev := el.NewUpdate("revert")
	ev.Txn = eventloop.RevertOnFailure
	_ = e.run(ev)
	eq(t, "a told of a failed RevertOnFailure commit", obs["a"].toldOf("revert"), []string{"revert:false"})
	e.committer.FailWith(nil)

	_ = e.run(el.NewResync("bad-resync"))
	eq(t, "a told of an aborted resync", obs["a"].toldOf("bad-resync"), []string{"bad-resync:false"})
}

// TestTxnObserverPanicFailsTheEventAndTellsTheOthers: a TxnDone that
// panics is the event's error (so the loop heals), and the handlers after
// it are still told.
func TestTxnObserverPanicFailsTheEventAndTellsTheOthers(t *testing.T) {
	obs := map[string]*observer{}
	e := newEnv(t, []string{"a", "b"}, withObservers(obs))
	e.startRunning()
	obs["a"].panic = true
	err := e.run(el.NewUpdate("x"))
	var pe *eventloop.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Done error %v, want the TxnDone panic", err)
	}
	eq(t, "b told", obs["b"].toldOf("x"), []string{"x:true"})
	if e.loop.Status().HealingDue.IsZero() {
		t.Fatal("no healing scheduled after a TxnDone panic")
	}
}
