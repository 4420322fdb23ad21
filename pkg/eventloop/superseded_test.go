package eventloop_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// supersedable is a StateCarrier event that finds, when applied, whether
// the input state is already newer than it (the state's "at" is past its).
type supersedable struct {
	el.StateEvent
	at         int
	superseded bool
}

func (e *supersedable) ApplyState(prev any) any {
	if prev.(int) > e.at {
		e.superseded = true
		return prev
	}
	return e.at
}

func (e *supersedable) Superseded() bool { return e.superseded }

// TestSupersededUpdateReachesNoHandler: an update whose state the loop's
// input state has already overtaken changes nothing: no handler call, no
// transaction; it is recorded and done like any event. A resync that says
// so still reaches the handlers, since a resync without their values would
// remove them all.
func TestSupersededUpdateReachesNoHandler(t *testing.T) {
	e := newEnv(t, []string{"a"})
	var states []any
	e.h("a").OnResync = func(ev eventloop.Event, state any, n int, txn eventloop.ResyncOperations) error {
		states = append(states, state)
		txn.Put("k", state)
		return nil
	}
	e.start()
	snapshot := &el.StateEvent{Event: el.Event{Name: "snapshot", Kind: eventloop.FullResync}, State: 5}
	e.push(snapshot)
	if err := wait(t, &snapshot.Event); err != nil {
		t.Fatal(err)
	}
	old := &supersedable{StateEvent: el.StateEvent{Event: el.Event{Name: "old", Kind: eventloop.Update}}, at: 3}
	newer := &supersedable{StateEvent: el.StateEvent{Event: el.Event{Name: "newer", Kind: eventloop.Update}}, at: 6}
	oldResync := &supersedable{StateEvent: el.StateEvent{Event: el.Event{Name: "old resync", Kind: eventloop.FullResync}}, at: 4}
	for _, ev := range []*supersedable{old, newer, oldResync} {
		e.push(ev)
		if err := wait(t, &ev.Event); err != nil {
			t.Fatalf("%s: %v", ev.Name, err)
		}
	}
	if !old.superseded || newer.superseded || !oldResync.superseded {
		t.Fatalf("superseded: old %v, newer %v, old resync %v", old.superseded, newer.superseded, oldResync.superseded)
	}
	eq(t, "handler calls", callsOf(e.calls.Calls(), "old"), nil)
	eq(t, "handler calls", callsOf(e.calls.Calls(), "newer"), []string{"update:a"})
	eq(t, "handler calls", callsOf(e.calls.Calls(), "old resync"), []string{"resync:a"})
	eq(t, "states seen by Resync", states, []any{5, 6})
	var seqs []uint64
	for _, txn := range e.committer.Txns() {
		seqs = append(seqs, txn.SeqNum)
	}
	recs := e.loop.History().Records()
	eq(t, "history", names(recs), []string{"snapshot", "old", "newer", "old resync"})
	eq(t, "committed events", seqs, []uint64{recs[0].SeqNum, recs[3].SeqNum})
	for _, ev := range []*supersedable{old, newer, oldResync} {
		if ev.DoneCalls() != 1 {
			t.Errorf("%s: Done called %d times", ev.Name, ev.DoneCalls())
		}
	}
}
