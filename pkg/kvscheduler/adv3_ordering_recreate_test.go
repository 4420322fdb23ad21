package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// safety.md: "An ordering-only dependency never deletes: when what it
// names goes or stops being ready, the dependent stays, is updated in
// place". A dependent whose descriptor applies changes by re-creation
// (UpdateWithRecreate) is deleted when changed while what it is ordered
// after is gone: the delete half runs, the create half waits for the
// ordering-only dependency (as for a value that does not exist), and the
// wanted value is left PENDING, gone from the southbound, with Commit nil.

func TestAdv3OrderingOnlyDependentRecreatedIsNotDeleted(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	x := withKindDeps(sb.Descriptor("x", "x/"))
	x.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	register(t, s, sb.Descriptor("a", "a/"), x)
	mustSet(t, s, "a/1", "v", "x/1", "v|~a/1")
	mustSet(t, s, "a/1", nil)
	wantState(t, s, "x/1", kvscheduler.Configured) // stays, as promised
	sb.ResetOps()
	err := set(t, s, "x/1", "w|~a/1")
	if got := sb.Values()["x/1"]; got != "w|~a/1" {
		t.Fatalf("x/1 changed: Commit %v, ops %v, the southbound holds %v for x/1 (%s); want it re-created with the new value, not deleted",
			err, sb.OpStrings(), got, advState(s, "x/1"))
	}
}
