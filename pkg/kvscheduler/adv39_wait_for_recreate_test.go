package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv39NewDependentOfAReCreateWhoseBaseUpdateFailedIsCreated: a/2 =
// w|d/1 is new, and b/1's update in the same transaction (no revert)
// would re-create d/1 (d/ updates by re-creation), so a/2 waits for that
// re-create (waitsForReCreate). b/1's update fails: the re-create never
// comes, d/1 keeps its old value, available, and a/2, whose only
// dependency is met, must be created, as it is at 7627b21. It stays
// PENDING with its dependency reported met, through a later unrelated
// transaction too, until a resync.
func TestAdv39NewDependentOfAReCreateWhoseBaseUpdateFailedIsCreated(t *testing.T) {
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/1", "v@1"); err != nil {
		t.Fatal(err)
	}
	h.sb.ResetOps()
	h.sb.FailNext("update", "b/1", errors.New("injected"))
	err := h.commit(false, "a/2", "w|d/1", "b/1", "x@1")
	ops := h.sb.OpStrings()
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", ops)
	}
	h.sb.ResetOps()
	if err := h.commit(false, "a/9", "z"); err != nil {
		t.Fatal(err)
	}
	ops = append(ops, h.sb.OpStrings()...)
	st := h.s.GetValueStatus("a/2")
	if _, held := h.sb.Values()["a/2"]; !held || st.State != kvscheduler.Configured {
		t.Fatalf("a/2 is %v (dependencies %v), held %v, with d/1 = %v in the southbound (ops %v)",
			st.State, st.Dependencies, held, h.sb.Values()["d/1"], ops)
	}
}

// TestAdv39NewDependentOfAReCreateWhoseTransactionStoppedIsCreated: as
// TestAdv39NewDependentOfAReCreateWhoseBaseUpdateFailedIsCreated, but the
// transaction is stopped (its context cancelled) during b/1's update: a/2
// waited for d/1's re-create, which never comes, and stays PENDING with
// no unmet dependency; at 7627b21 it is created on d/1 before b/1's
// update.
func TestAdv39NewDependentOfAReCreateWhoseTransactionStoppedIsCreated(t *testing.T) {
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/1", "v@1"); err != nil {
		t.Fatal(err)
	}
	h.sb.ResetOps()
	blk := h.sb.BlockNext("update", "b/1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-blk.Entered(); cancel() }()
	txn := h.s.StartNBTransaction()
	txn.SetValue("a/2", "w|d/1")
	txn.SetValue("b/1", "x@1")
	_, err := txn.Commit(ctx)
	blk.Release()
	if err == nil {
		t.Fatal("the transaction was not stopped")
	}
	if err := h.commit(false, "a/9", "z"); err != nil {
		t.Fatal(err)
	}
	st := h.s.GetValueStatus("a/2")
	if _, held := h.sb.Values()["a/2"]; !held || st.State != kvscheduler.Configured {
		t.Fatalf("a/2 is %v (unmet %v), held %v, with d/1 = %v in the southbound (ops %v, stopped: %v)",
			st.State, st.UnmetDependencies, held, h.sb.Values()["d/1"], h.sb.OpStrings(), err)
	}
}
