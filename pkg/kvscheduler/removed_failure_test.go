package kvscheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// Issue 25, step 4 (rule 4: a value found gone keeps its request, and is
// dropped if that request is a delete). a/1 is lost behind the
// scheduler's back, then the northbound deletes it: the Delete fails (the
// southbound no longer has it) and the read-back after the failure finds
// it gone. Its request is a delete and the southbound is as requested:
// the value is REMOVED, and nothing of its failure may stay (no error in
// its status, no retry armed to delete it again).

func TestDeleteOfValueFoundGoneDropsItsFailure(t *testing.T) {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "x")
	sb.Remove("a/1")
	retry := kvscheduler.RetryOptions{Period: time.Second}
	_, err := s.StartNBTransaction().SetValue("a/1", nil).WithRetry(retry).Commit(context.Background())
	st := s.GetValueStatus("a/1")
	if st.State != kvscheduler.Removed && st.State != kvscheduler.NonExistent || st.Error != nil {
		t.Errorf("a/1, deleted as requested, is %s with error %v (Commit %v, ops %v)", st.State, st.Error, err, sb.OpStrings())
	}
	if n := clk.pending(); n != 0 {
		t.Errorf("%d retry timers armed for a value deleted as requested, want 0 (a/1 %s)", n, advState(s, "a/1"))
	}
	wantSB(t, sb, map[string]any{})
}
