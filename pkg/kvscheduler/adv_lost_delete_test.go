package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The northbound deletes a value the southbound already lost behind the
// scheduler's back: the descriptor's Delete fails ("does not exist") and
// the value is FAILED. The failure is read back (the value is gone); it
// used to stay FAILED for good: full resyncs, which read it absent,
// converged to a desired state without it and returned no error, yet left
// it FAILED with the stale error. A resync attempts failed values again,
// this one too: its delete finds nothing to do and settles it.

func TestAdvResyncSettlesTheFailedDeleteOfAValueAlreadyGone(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, sb.Descriptor("x", "x/"))
	mustSet(t, s, "x/1", "a")
	sb.Remove("x/1") // lost behind the scheduler's back
	if err := set(t, s, "x/1", nil); err == nil {
		t.Fatal("the delete of a value the southbound lost did not fail")
	}
	for i := 0; i < 2; i++ {
		if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
			t.Fatalf("full resync: %v", err)
		}
	}
	if st := s.GetValueStatus("x/1"); st.State == kvscheduler.Failed || st.State == kvscheduler.Retrying {
		t.Errorf("after two full resyncs returned nil, x/1 (absent, not desired) is still %s with %v", st.State, st.Error)
	}
}
