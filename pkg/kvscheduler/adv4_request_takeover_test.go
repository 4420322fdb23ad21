package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A northbound request takes a derived key over, and the update of the
// old base fails. z/1 = v@1 derives d/1. One transaction requests d/1 =
// "mine" (free: z/1 is requested further on with v@2, which derives d/2)
// and z/1 = v@2, whose update fails: the southbound holds d/1 = "mine"
// (the northbound's, CONFIGURED) and z/1 = v@1 (FAILED). Withdrawing
// z/1 then deletes d/1 with it, Commit nil: the northbound's value, still
// requested, is gone, reported NONEXISTENT, and a downstream resync ("re-
// apply the last desired values") does not create it again: the request
// is lost. The read-back after the failed update seems to list d/1 among
// z/1's derived values again (z/1's held value v@1 derives it).

func TestAdv4RequestedKeyIsNotDeletedWithTheBaseItWasTakenFrom(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	z := sb.Descriptor("z", "z/")
	b, _ := adv3AtDerived(sb)
	z.DerivedValues = b.DerivedValues
	register(t, s, z, sb.Descriptor("d", "d/"))
	mustSet(t, s, "z/1", "v@1")
	sb.FailNext("update", "z/1", errors.New("boom"))
	if err := set(t, s, "d/1", "mine", "z/1", "v@2"); err == nil {
		t.Fatal("the update of z/1 failed, Commit returned nil")
	}
	if got := sb.Values()["d/1"]; got != "mine" {
		t.Fatalf("d/1 requested: the southbound holds %v for it (%s)", got, advState(s, "d/1"))
	}
	sb.ResetOps()
	err := set(t, s, "z/1", nil)
	if got := sb.Values()["d/1"]; got != "mine" {
		_, rerr := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
		t.Fatalf("z/1 withdrawn (Commit %v, ops %v): d/1, requested by the northbound, is gone (%s); "+
			"a downstream resync (%v) leaves the southbound %v",
			err, sb.OpStrings(), advState(s, "d/1"), rerr, sb.Values())
	}
}
