package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestCanceledDeleteLeavesItsValueAvailable: a transaction whose context
// ends after a value's dependents went but before the value itself leaves
// the value as it is in the southbound: available to what depends on it,
// so that the next transaction creates a new dependent at once and takes
// back the dependent the stopped delete took down (PENDING on a value that
// exists), while the delete itself waits for a request or a resync.
func TestCanceledDeleteLeavesItsValueAvailable(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b := withDeps(sb.Descriptor("b", "b/"))
	ctx, cancel := context.WithCancel(context.Background())
	del := b.Delete
	b.Delete = func(ctx context.Context, k string, v, md any) error {
		cancel() // the caller gives up while the first dependent goes
		return del(ctx, k, v, md)
	}
	register(t, s, sb.Descriptor("a", "a/"), b)
	mustSet(t, s, "a/1", "x", "b/1", "y|a/1", "b/2", "y|a/1")
	_, err := s.StartNBTransaction().SetValue("a/1", nil).Commit(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	// Commit returned when ctx ended; the transaction ends at its next
	// operation.
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	wantSB(t, sb, map[string]any{"a/1": "x", "b/2": "y|a/1"})
	mustSet(t, s, "b/3", "y|a/1")
	wantSB(t, sb, map[string]any{"a/1": "x", "b/1": "y|a/1", "b/2": "y|a/1", "b/3": "y|a/1"})
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "b/1", kvscheduler.Configured)
}

// TestCanceledCreateLeavesItsDependentsToTheNextTransaction: a dependent
// that a create made ready, and that the transaction (stopped by its
// context right after that create) did not create, is created by the next
// transaction, whatever that transaction sets: it waits no longer.
func TestCanceledCreateLeavesItsDependentsToTheNextTransaction(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	ctx, cancel := context.WithCancel(context.Background())
	create := a.Create
	a.Create = func(ctx context.Context, k string, v any) (any, error) {
		if k == "a/1" {
			cancel()
		}
		return create(ctx, k, v)
	}
	register(t, s, a, withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/9", "w|a/1")
	_, err := s.StartNBTransaction().SetValue("a/1", "x").Commit(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	wantSB(t, sb, map[string]any{"a/1": "x"})
	wantState(t, s, "b/9", kvscheduler.Pending)
	mustSet(t, s, "a/2", "z")
	wantSB(t, sb, map[string]any{"a/1": "x", "a/2": "z", "b/9": "w|a/1"})
	wantState(t, s, "b/9", kvscheduler.Configured)
}
