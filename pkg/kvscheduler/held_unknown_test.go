package kvscheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestHeldUnknownAgreesWithUnknown runs the held tri-state's check
// (CheckHeldUnknown) after every job of a failed read-back and the retry
// that reads it: TestRandomGraphs never fails a Retrieve, so its run of
// the check does not reach an unknown value. The value is unknown after
// the failed read-back (the check saw it so, not vacuously) and known
// again once the retry read it.
func TestHeldUnknownAgreesWithUnknown(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	var mu sync.Mutex
	var bad error
	var unknown []int // held-unknown values after each job
	kvscheduler.AfterJob(s, func() {
		mu.Lock()
		defer mu.Unlock()
		if err := kvscheduler.CheckHeldUnknown(s); err != nil && bad == nil {
			bad = err
		}
		unknown = append(unknown, kvscheduler.HeldUnknownCount(s))
	})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	create := a.Create
	halfDone := true
	a.Create = func(ctx context.Context, k string, v any) (any, error) {
		md, err := create(ctx, k, v)
		if halfDone && err == nil {
			halfDone = false
			return md, errors.New("timeout (after the southbound created it)")
		}
		return md, err
	}
	register(t, s, a)
	sb.FailNext("retrieve", "a", errors.New("read fails"))
	_, err := s.StartNBTransaction().SetValue("a/1", "x").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}).Commit(context.Background())
	if err == nil {
		t.Fatal("Commit returned nil, want the failed read-back's error")
	}
	clk.Step(time.Second)
	// The check runs after the retry returns: wait for it too.
	eventually(t, "the retry and the check after it", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return retries(s) == 1 && len(unknown) >= 3
	})
	wantState(t, s, "a/1", kvscheduler.Configured)
	mu.Lock()
	defer mu.Unlock()
	if bad != nil {
		t.Fatal(bad)
	}
	if len(unknown) < 3 || unknown[1] != 1 || unknown[len(unknown)-1] != 0 {
		t.Fatalf("held-unknown values after each job %v, want 1 after the transaction, 0 after the retry", unknown)
	}
}
