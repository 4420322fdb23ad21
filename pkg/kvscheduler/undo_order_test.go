package kvscheduler_test

import (
	"context"
	"testing"
)

// TestUndoDeletesDependentsFirst (adv5 fuzz seeds 1132 and 1468,
// reduced): a transaction with revert re-creates r/1 to a value ordered
// after b/1, creates b/1 and a/2, ordered after b/1, and then fails on an
// invalid r/2. The undo, last applied first, deleted b/1 before a/2 and
// before r/1's re-create back to its old value, both of which depend on
// b/1 and went later in the same step. The undo keeps the delete order:
// the undos that take away a value depending on b/1 go first.
func TestUndoDeletesDependentsFirst(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/1", "w|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/1", "w|~b/1", "a/2", "v|~b/1", "b/1", "w|", "r/2", "bad|").WithRevert().Commit(ctx); err == nil {
		t.Fatal("the transaction with an invalid r/2 did not fail")
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); len(after) != 1 || after["r/1"] != "w|" {
		t.Errorf("after the undo the southbound holds %v, want only r/1=w|", after)
	}
}
