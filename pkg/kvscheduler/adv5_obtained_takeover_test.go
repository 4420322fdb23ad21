package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 8 and the Retrieve contract: a retrieved value that belongs to the
// southbound (OBTAINED) "is left alone"; a derived key "one the southbound
// notified as its own" makes its base INVALID, since the scheduler never
// takes the southbound's values over (nor deletes them with a base). The
// clash check (derivationErr, derivedByOther) knows the southbound's own
// values only by a notification's request (last): the same value found by
// a read has none, and is taken over.
//
// The southbound holds d/1 as its own; a full resync reads it (OBTAINED).
// b/1 = v@1, which derives d/1, is requested: b/1's derivation takes d/1
// over, updates it (the southbound's value overwritten) and deleting b/1
// deletes it. Notified instead of read, d/1 makes b/1 INVALID and stays.

func TestAdv5ObtainedValueIsNotTakenOverByADerivation(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	sb.Set("d/1", "sb's own", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "d/1", kvscheduler.Obtained)
	sb.ResetOps()
	err := set(t, s, "b/1", "v@1")
	if got := sb.Values()["d/1"]; got != "sb's own" {
		t.Errorf("requesting b/1, which derives d/1, changed the southbound's own value d/1 (OBTAINED) to %v: Commit %v, ops %v; b/1 %s; d/1 %s",
			got, err, sb.OpStrings(), advState(s, "b/1"), advState(s, "d/1"))
	}
	sb.ResetOps()
	err = set(t, s, "b/1", nil)
	if _, ok := sb.Values()["d/1"]; !ok {
		t.Errorf("deleting b/1 deleted the southbound's own value d/1: Commit %v, ops %v; d/1 %s",
			err, sb.OpStrings(), advState(s, "d/1"))
	}
}
