package kvscheduler_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Scoped repairs are "a downstream resync limited to some keys", and the
// scoped and the full (unscoped) resync agree on a key
// (TestAdvScopedAndFullResyncAgreeOnLostDerivedValue). A value of a
// northbound-managed descriptor that nothing requested, put into the
// southbound behind the scheduler's back, is deleted by a downstream
// resync (drift repaired); a downstream resync scoped to its very key
// reads it, reports it DISCOVERED and leaves it in the southbound.

func TestAdv3ScopedAndDownstreamResyncAgreeOnAStrayValue(t *testing.T) {
	ctx := context.Background()
	run := func(scoped bool) ([]string, map[string]any, string) {
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		register(t, s, sb.Descriptor("a", "a/"))
		mustSet(t, s, "a/1", "v")
		sb.Set("a/6", "z", false) // drift: nobody requested it
		sb.ResetOps()
		txn := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)
		if scoped {
			txn.WithResyncKeys("a/6")
		}
		if _, err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return sb.OpStrings(), sb.Values(), advState(s, "a/6")
	}
	fullOps, fullSB, fullSt := run(false)
	scopedOps, scopedSB, scopedSt := run(true)
	if !reflect.DeepEqual(fullOps, scopedOps) {
		t.Fatalf("downstream resync ran %v (southbound %v, a/6 %s); scoped to a/6 it ran %v (southbound %v, a/6 %s)",
			fullOps, fullSB, fullSt, scopedOps, scopedSB, scopedSt)
	}
}
