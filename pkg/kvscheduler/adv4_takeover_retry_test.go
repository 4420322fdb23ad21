package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// A takeover of a derived key followed by a failed update of the old
// base, then the old base's retry (or a downstream resync scoped to it).
// b/1 = v@1 derives d/1. One transaction requests b/0 = w@1, which
// derives d/1 (free: b/1 is requested further on with v@2, deriving d/2),
// and b/1 = v@2, whose update fails: the southbound holds b/0 = w@1, d/1
// = w@1 (b/0's) and b/1 = v@1. When b/1's update is attempted again and
// succeeds, it deletes d/1 as an obsolete derived value of b/1: b/0 is
// left CONFIGURED without its derived value, nothing reports it, and
// nothing re-creates it (no user action involved: the retry does it).

func adv4TakeoverThenFailedUpdate(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound, retry bool) {
	t.Helper()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	sb.FailNext("update", "b/1", errors.New("boom"))
	txn := s.StartNBTransaction().SetValue("b/0", "w@1").SetValue("b/1", "v@2")
	if retry {
		txn.WithRetry(kvscheduler.RetryOptions{Period: time.Second})
	}
	if _, err := txn.Commit(context.Background()); err == nil {
		t.Fatal("the update of b/1 failed, Commit returned nil")
	}
	sb.ResetOps()
}

func adv4WantBothBasesWithTheirDerived(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound, when string) {
	t.Helper()
	want := map[string]any{"b/0": "w@1", "d/1": "w@1", "b/1": "v@2", "d/2": "v@2"}
	got := sb.Values()
	for k, v := range want {
		if got[k] != v || len(got) != len(want) {
			t.Fatalf("%s: ops %v, southbound %v, want %v; b/0 %s; d/1 %s",
				when, sb.OpStrings(), got, want, advState(s, "b/0"), advState(s, "d/1"))
		}
	}
}

func TestAdv4RetryOfTheOldBaseKeepsTheTakenOverKey(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
		s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
		sb := kvtest.New()
		adv4TakeoverThenFailedUpdate(t, s, sb, true)
		clk.Step(time.Second)
		eventually(t, "b/1's retry", func() bool { return s.GetValueStatus("b/1").State != kvscheduler.Retrying })
		adv4WantBothBasesWithTheirDerived(t, s, sb, "after b/1's retry")
	})
	t.Run("scoped repair", func(t *testing.T) {
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		adv4TakeoverThenFailedUpdate(t, s, sb, false)
		if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/1").Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		adv4WantBothBasesWithTheirDerived(t, s, sb, "after a downstream resync scoped to b/1")
	})
}
