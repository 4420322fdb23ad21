package kvscheduler_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv39ResyncAfterARevertedFailedDeleteKeepsTheDeleteOrder: r/1's
// re-create, in a transaction with revert, takes a/2 = v|r/1 and a/1 =
// v|a/2,~r/2 down (r/1's new value Requires d/1, absent); a/1's delete
// fails, and the revert, which does not run that delete again
// (undoRestores), leaves a/1 FAILED. The southbound holds r/2 = v| of its
// own while the northbound wants r/2 = w|a/3 (PENDING). The downstream
// resync that follows deletes r/2 and then a/1, which is ordered after
// r/2: a delete before one of its dependents in the same step. It passes
// at 7627b21 and with undoRestores returning false (h25y's reduction of
// adv5 seed 33009727, TestAdv39DeleteOrderSeed33009727).
func TestAdv39ResyncAfterARevertedFailedDeleteKeepsTheDeleteOrder(t *testing.T) {
	h := newAdv28HarnessWith(t, true, true, true)
	h.sb.Set("r/2", "v|", false)
	for _, kvs := range [][]string{
		{"r/1", "v|", "r/2", "w|a/3"},
		{"a/2", "v|r/1"},
		{"a/1", "w|"},
		{"a/1", "v|a/2,~r/2"},
	} {
		if err := h.commit(true, kvs...); err != nil {
			t.Fatal(err)
		}
	}
	h.sb.ResetOps()
	h.sb.FailNext("delete", "a/1", errors.New("injected"))
	if err := h.commit(true, "a/3", "v|d/*", "r/1", "v|a/*,d/1"); err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", h.sb.OpStrings())
	}
	txnOps := h.sb.OpStrings()
	h.sb.ResetOps()
	_, err := h.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
	ops := h.sb.OpStrings()
	ir, ia := slices.Index(ops, "delete r/2"), slices.Index(ops, "delete a/1")
	if ir >= 0 && ia > ir {
		t.Fatalf("the resync (err %v) deleted r/2 before a/1 (v|a/2,~r/2), which is ordered after it: ops %v (the reverted transaction's ops %v)",
			err, ops, txnOps)
	}
}
