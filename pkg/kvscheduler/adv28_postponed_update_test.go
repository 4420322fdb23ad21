package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade
// is adv5 fuzz seed 13001309 (-fzorder -fzcorder -fzrevertall -fzrb
// -fzdd) reduced. b/2 = v| is Required by a/1 and r/1; a/2 = v|~a/1 is
// ordered after a/1. One transaction updates a/2 to w|r/1 and deletes b/2:
// b/2's cascade takes a/1 and r/1 down, so a/2's update, which Requires
// r/1, takes a/2 away into PENDING in the same step. The walk postpones
// a/2's update after b/2's delete, and the cascade then deletes a/1 while
// a/2, ordered after it, still holds v|~a/1, and deletes a/2 only after:
// a value deleted before a dependent the same step deletes later
// (docs/kvscheduler.md, "The delete order"). It failed so at 7aaacaf too;
// a/2 is now taken down at a/1's delete (see updateCascades).
func TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "b/2", "v|", "a/1", "v|b/2", "a/2", "v|~a/1", "r/1", "v|b/2"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/2", "w|r/1", "b/2", ""); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/2") || !slices.Contains(ops, "delete a/1") {
		t.Fatalf("the test means a/1 and a/2 both to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
