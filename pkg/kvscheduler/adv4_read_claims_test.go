package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The general form of the takeover defects (adv4_takeover_*): a read of a
// base whose held value derives another base's key lists that key among
// the read base's derived values, although the other base, wanted and
// CONFIGURED, derives it. The read base's next change then deletes it as
// obsolete. b/1 = v@1 derives d/1, b/2 = w@2 derives d/2; b/2 drifts to
// w@1 behind the scheduler's back (a value that would derive d/1).
// - A downstream resync scoped to b/2 (unscoped ones, full or not, are
//   right: ops [update b/2]) runs "delete d/1, update b/2": b/1's derived
//   value is gone, b/1 CONFIGURED without it, Commit nil.
// - Requested with w@2x, b/2's update fails (a timeout); the read-back
//   reads w@1. The next request of b/2 (w@2y) runs "delete d/1, update
//   b/2, create d/2y", Commit nil: the same.

func adv4DriftOntoAnotherBasesKey(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1", "b/2", "w@2")
	sb.Set("b/2", "w@1", false) // drift: as held, b/2 would derive d/1
	sb.ResetOps()
	return s, sb
}

func TestAdv4ReadOfABaseDoesNotClaimAnotherBasesDerivedKey(t *testing.T) {
	t.Run("scoped repair", func(t *testing.T) {
		s, sb := adv4DriftOntoAnotherBasesKey(t)
		_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/2").Commit(context.Background())
		if got := sb.Values()["d/1"]; got != "v@1" {
			t.Errorf("downstream resync scoped to b/2: Commit %v, ops %v, southbound %v: b/1's d/1 is gone (b/1 %s, d/1 %s)",
				err, sb.OpStrings(), sb.Values(), advState(s, "b/1"), advState(s, "d/1"))
		}
	})
	t.Run("read-back after a failed update", func(t *testing.T) {
		s, sb := adv4DriftOntoAnotherBasesKey(t)
		sb.FailNext("update", "b/2", context.DeadlineExceeded)
		if err := set(t, s, "b/2", "w@2x"); err == nil {
			t.Fatal("the update of b/2 failed, Commit returned nil")
		}
		sb.ResetOps()
		err := set(t, s, "b/2", "w@2y")
		if got := sb.Values()["d/1"]; got != "v@1" {
			t.Errorf("b/2 requested again after its failed update: Commit %v, ops %v, southbound %v: b/1's d/1 is gone (b/1 %s, d/1 %s)",
				err, sb.OpStrings(), sb.Values(), advState(s, "b/1"), advState(s, "d/1"))
		}
	})
}
