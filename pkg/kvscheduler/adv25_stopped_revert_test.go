package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv25StoppedRemovalWithRevertLeavesItsValue is
// TestCanceledDeleteLeavesItsValueAvailable in a transaction with revert:
// the context ends while a/1's dependents go, before a/1's own delete ran.
// docs/kvscheduler.md (stopped transactions): "a value whose northbound
// removal's delete did not run stays as it is", and a transaction with
// revert does not undo what it applied then. The revert flag changes
// neither: the next transaction, which sets b/3 on a/1, leaves a/1 in the
// southbound, creates b/3 at once and takes back b/1. (Before the fix the
// resume took every request of a transaction with revert for an undo's
// and finished a/1's removal: a/1 and b/2 deleted, b/3 PENDING.)
func TestAdv25StoppedRemovalWithRevertLeavesItsValue(t *testing.T) {
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
	_, err := s.StartNBTransaction().WithRevert().SetValue("a/1", nil).Commit(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	wantSB(t, sb, map[string]any{"a/1": "x", "b/2": "y|a/1"})
	mustSet(t, s, "b/3", "y|a/1")
	wantSB(t, sb, map[string]any{"a/1": "x", "b/1": "y|a/1", "b/2": "y|a/1", "b/3": "y|a/1"})
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "b/1", kvscheduler.Configured)
	wantState(t, s, "b/3", kvscheduler.Configured)
}
