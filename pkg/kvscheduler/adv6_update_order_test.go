package kvscheduler_test

import (
	"context"
	"testing"
)

// TestAdv6UpdateIntoPendingDeletesBeforeItsOrderedDependent: a/3, held
// ordered after a/2 (~a/2), and a/2 are both updated in one transaction to
// values that cannot exist: a/2 to one Requiring d/1 (absent), a/3 to one
// Requiring a/2. Both go (into PENDING) in the same transaction, so the
// delete order (deleteorder.go: a value is deleted after the values that
// depend on it, of either kind, whose delete the transaction has still to
// do) deletes a/3 first; the scheduler deletes a/2 first.
func TestAdv6UpdateIntoPendingDeletesBeforeItsOrderedDependent(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("a/2", "w|", "a/3", "v|~a/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("a/2", "w|d/1", "a/3", "v|a/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if _, ok := x.sb.Values()["a/3"]; ok {
		t.Errorf("a/3 (v|a/2) held without a/2: %v", x.sb.Values())
	}
}
