package kvscheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

func retries(s *kvscheduler.Scheduler) int {
	n := 0
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type == kvscheduler.RetryFailedOps {
			n++
		}
	}
	return n
}

func creates(sb *kvtest.Southbound) int {
	n := 0
	for _, o := range sb.Ops(false) {
		if o.Operation == "create" {
			n++
		}
	}
	return n
}

func TestRetryWithBackoffUntilSuccess(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	sb.FailNext("create", "a/1", errors.New("e1"), errors.New("e2"))
	_, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("b/1", "x|a/1").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3, ExpBackoff: true}).Commit(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	wantState(t, s, "a/1", kvscheduler.Retrying)
	wantState(t, s, "b/1", kvscheduler.Pending)
	clk.Step(time.Second)
	eventually(t, "first retry", func() bool { return retries(s) == 1 })
	wantState(t, s, "a/1", kvscheduler.Retrying)
	// The second delay is doubled.
	clk.Step(time.Second)
	barrier(t, s)
	if retries(s) != 1 {
		t.Fatal("retried before the backoff delay")
	}
	clk.Step(time.Second)
	eventually(t, "second retry", func() bool { return retries(s) == 2 })
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "b/1", kvscheduler.Configured)
	if n := creates(sb); n != 4 {
		t.Fatalf("%d creates, want 4", n)
	}
}

func TestRetryUntilExhaustion(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	boom := errors.New("boom")
	sb.FailNext("create", "a/1", boom, boom, boom)
	_, err := s.StartNBTransaction().SetValue("a/1", "x").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 2}).Commit(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	for i := 1; i <= 2; i++ {
		clk.Step(time.Second)
		eventually(t, "retry", func() bool { return retries(s) == i })
	}
	st := wantState(t, s, "a/1", kvscheduler.Failed)
	if !errors.Is(st.Error, boom) {
		t.Fatalf("status error %v", st.Error)
	}
	clk.Step(10 * time.Minute)
	barrier(t, s)
	if n := creates(sb); n != 3 || retries(s) != 2 {
		t.Fatalf("%d creates, %d retries", n, retries(s))
	}
	// Requested again, even with the value it failed with, it is
	// attempted again (as in the reference).
	mustSet(t, s, "a/1", "x")
	wantState(t, s, "a/1", kvscheduler.Configured)
	if n := creates(sb); n != 4 {
		t.Fatalf("%d creates, want 4", n)
	}
}

func TestNonRetriableFailure(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.IsRetriableFailure = func(error) bool { return false }
	register(t, s, a)
	sb.FailNext("create", "a/1", errors.New("fatal"))
	_, _ = s.StartNBTransaction().SetValue("a/1", "x").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(context.Background())
	wantState(t, s, "a/1", kvscheduler.Failed)
}

// TestRetryDueBeforeACommitRunsFirst: a retry whose time the clock passed
// before a transaction was committed is processed before that transaction,
// even when the clock passes it (and the transaction is queued) while the
// scheduler's goroutine is between its check for due retries and taking
// the next job. The property test's settle loop relies on it (a commit after
// stepping the clock sees the retries done); under load, that interleaving
// made it check a retry still running, and fail once in a while.
func TestRetryDueBeforeACommitRunsFirst(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.FailNext("create", "a/1", errors.New("e1"))
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(ctx); err == nil {
		t.Fatal("no error")
	}
	var armed atomic.Bool
	armed.Store(true)
	done := make(chan struct{})
	kvscheduler.BeforeDequeue(s, func() {
		// On the scheduler's goroutine, once it found no retry due and
		// nothing queued: the clock passes the retry's time, then a
		// transaction is committed.
		if kvscheduler.QueueLen(s) == 0 && armed.CompareAndSwap(true, false) {
			clk.Step(time.Second)
			if _, err := s.StartNBTransaction().WithDescription("after the retry's time").NonBlocking().Commit(ctx); err != nil {
				t.Error(err)
			}
			close(done)
		}
	})
	// Each barrier takes the scheduler's goroutine through its check again
	// (it wakes it if it is idle), until the hook has run to its end: it
	// may run after the barrier's own transaction, once that returned.
	eventually(t, "the hook", func() bool {
		barrier(t, s)
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	barrier(t, s) // queued after the hook's transaction
	var order []string
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type == kvscheduler.RetryFailedOps || r.Description != "" {
			order = append(order, r.Type.String()+" "+r.Description)
		}
	}
	if len(order) != 2 || order[0] != kvscheduler.RetryFailedOps.String()+" " {
		t.Fatalf("records in order %q, want the retry first", order)
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
}
