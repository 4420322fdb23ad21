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

// TestUndoOfATakeoverDeletesDerivedValuesOrderedAfterABaseDeletedForAClash
// (adv5 fuzz seed 2082, reduced): b/1=w@2| derives d/2. A transaction with
// revert creates b/2=w@1@2|~b/1, whose derived values carry its ordering
// after b/1, and takes d/2 on the strength of b/1's request further on
// (w@1|, no longer deriving d/2); b/1's update then derives d/1, which b/2
// now holds: b/1 is INVALID, deleted, and the transaction reverts. The
// undo deletes d/1 and d/2 (b/2's, ordered after b/1) after b/1 went in
// the same step. The undo comes after the delete it would have to
// precede: the order could only be kept by not deleting b/1 for a clash
// the revert undoes anyway.
func TestUndoOfATakeoverDeletesDerivedValuesOrderedAfterABaseDeletedForAClash(t *testing.T) {
	dd := *fzDerivedDeps
	*fzDerivedDeps = true
	t.Cleanup(func() { *fzDerivedDeps = dd })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/2", "w@1@2|~b/1", "b/1", "w@1|").WithRevert().Commit(ctx); err == nil {
		t.Fatal("the transaction with b/1 clashing on d/1 did not fail")
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}
