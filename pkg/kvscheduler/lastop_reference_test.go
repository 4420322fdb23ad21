package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A value's last operation is the one the transaction that last applied
// it chose, as the reference's (its LastUpdateFlag's txnOp): a value
// requested again as the southbound holds it, and so its derived values,
// have last operation UPDATE, although nothing ran and nothing is
// recorded; also when the walk skips them as in sync (insync.go).
func TestRequestedAgainInSyncLastOpIsUpdate(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, refDescriptor(sb, "descriptor1", "A/"))
	mustSet(t, s, "A/base1", "item1")
	wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpCreate)
	wantStatus(t, s, "A/base1/item1", kvscheduler.Configured, kvscheduler.OpCreate)
	sb.ResetOps()

	for _, resync := range []kvscheduler.ResyncType{kvscheduler.NoResync, kvscheduler.FullResync} {
		txn := s.StartNBTransaction().SetValue("A/base1", "item1")
		if resync != kvscheduler.NoResync {
			txn.WithResync(resync)
		}
		rec, err := txn.Commit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, sb)
		wantRefRecord(t, rec)
		wantStatus(t, s, "A/base1", kvscheduler.Configured, kvscheduler.OpUpdate)
		wantStatus(t, s, "A/base1/item1", kvscheduler.Configured, kvscheduler.OpUpdate)
	}
}

// A value updated with a value whose dependencies are not met is deleted
// into PENDING: its last operation is the UPDATE chosen for it, as the
// reference's, not the delete that ran.
func TestUpdatedIntoPendingLastOpIsUpdate(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")))
	mustSet(t, s, "a/1", "x")
	mustSet(t, s, "a/1", "y|dep/1")
	wantOps(t, sb, "create a/1", "delete a/1")
	wantStatus(t, s, "a/1", kvscheduler.Pending, kvscheduler.OpUpdate, "dep/1")
}
