package kvscheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// A value a user made by hand, which the southbound reports as its own
// (Origin FromSB), under a key the northbound then requests: the create
// fails ("already exists"), rightly, and the read-back finds the user's
// value. The retry then "succeeds" without calling the descriptor: it is
// recorded as an UPDATE from RETRYING to OBTAINED, the request is gone
// without an error, and the scheduler reports the requested value as
// what the southbound holds, while the southbound keeps the user's.
// Found by a fuzz comparing records with the southbound.

func TestAdv5RetryOfARequestForAValueMadeByHandIsNotReportedDone(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.Set("a/1", "by hand", true)
	_, err := s.StartNBTransaction().SetValue("a/1", "nb").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(context.Background())
	if err == nil {
		t.Fatal("the create of a/1 failed (it exists), Commit returned nil")
	}
	wantState(t, s, "a/1", kvscheduler.Retrying)
	clk.Step(time.Second)
	eventually(t, "a/1's retry", func() bool { return s.GetValueStatus("a/1").State != kvscheduler.Retrying })
	advWantAgree(t, s, sb, "after a/1's retry", "a/")
	if st := s.GetValueStatus("a/1"); st.Error == nil && sb.Values()["a/1"] != "nb" {
		t.Errorf("a/1 is requested as nb and the southbound holds %v, yet its status says nothing is wrong: %s; ops %v",
			sb.Values()["a/1"], advState(s, "a/1"), sb.OpStrings())
	}
}
