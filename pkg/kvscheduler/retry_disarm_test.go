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

// TestRetrySupersededIsDisarmed: the timer of a retry is stopped once no
// value it would retry still needs it (they were changed, deleted or
// applied since), and only then; a retry superseded in part still runs for
// the rest.
func TestRetrySupersededIsDisarmed(t *testing.T) {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	ctx := context.Background()
	retry := kvscheduler.RetryOptions{Period: time.Second}
	sb.FailNext("create", "a/1", errors.New("e1"))
	sb.FailNext("create", "a/2", errors.New("e2"))
	sb.FailNext("create", "a/3", errors.New("e3"))
	// a/1 and a/2 fail together: one timer for both; a/3 alone.
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "x").WithRetry(retry).Commit(ctx); err == nil {
		t.Fatal("no error")
	}
	if _, err := s.StartNBTransaction().SetValue("a/3", "x").WithRetry(retry).Commit(ctx); err == nil {
		t.Fatal("no error")
	}
	if n := clk.pending(); n != 2 {
		t.Fatalf("%d retry timers armed, want 2", n)
	}
	// a/3 is deleted: its retry has nothing left to do.
	mustSet(t, s, "a/3", nil)
	if n := clk.pending(); n != 1 {
		t.Fatalf("after a/3 was deleted: %d retry timers armed, want 1", n)
	}
	// a/1 is changed (and created): the timer stays for a/2.
	mustSet(t, s, "a/1", "y")
	if n := clk.pending(); n != 1 {
		t.Fatalf("after a/1 was changed: %d retry timers armed, want 1 (for a/2)", n)
	}
	clk.Step(time.Second)
	barrier(t, s)
	if n := retries(s); n != 1 {
		t.Fatalf("%d retries, want 1", n)
	}
	wantState(t, s, "a/2", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"a/1": "y", "a/2": "x"})
	if n := clk.pending(); n != 0 {
		t.Fatalf("%d retry timers armed at the end, want 0", n)
	}
}

// TestHeldRetriesRunOnceReleased: a retry that comes due while retries
// are held does not run (transactions do), and runs once every hold is
// released.
func TestHeldRetriesRunOnceReleased(t *testing.T) {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.FailNext("create", "a/1", errors.New("e1"))
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(context.Background()); err == nil {
		t.Fatal("no error")
	}
	first, second := s.HoldRetries(), s.HoldRetries()
	clk.Step(time.Second)
	mustSet(t, s, "a/2", "x") // a transaction runs while retries are held
	barrier(t, s)
	if n := retries(s); n != 0 {
		t.Fatalf("%d retries ran while held", n)
	}
	wantSB(t, sb, map[string]any{"a/2": "x"})
	first()
	first() // a second call releases nothing more
	barrier(t, s)
	if n := retries(s); n != 0 {
		t.Fatalf("%d retries ran while one hold was left", n)
	}
	second()
	eventually(t, "the held retry run once released", func() bool { barrier(t, s); return retries(s) == 1 })
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"a/1": "x", "a/2": "x"})
}
