package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv28UndoOfABaseGoesAfterTheDependentOfADerivedValueItReadBack is
// adv5 fuzz seed 13104265 (-fzorder -fzcorder -fzrevertall) reduced. b/2
// = v@2| derives d/2; d/1 = drift| is in the southbound, unread, reported
// as the scheduler's (origin FromNB). A transaction with revert sets a/3
// = w|~d/1,b/2 (ordered after d/1) and updates b/2 to v@1@2|: d/1's create
// fails ("already exists"), the read-back finds d/1 held, a/3 is created,
// and the revert follows. b/2's undo back to v@2| takes d/1 away and a/3's
// undo deletes a/3, which is ordered after d/1: a/3 must go first (the
// revert keeps the delete order, docs/kvscheduler.md). d/1 goes first (ops
// [update b/2 create d/1 update d/2 create a/3 delete d/1 update b/2 update
// d/2 delete a/3]). It fails so at 7aaacaf too. (The revert also deletes
// d/1, which the southbound held before the transaction and whose create
// never went through: see the report; not asserted here.)
func TestAdv28UndoOfABaseGoesAfterTheDependentOfADerivedValueItReadBack(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "b/2", "v@2|"); err != nil {
		t.Fatal(err)
	}
	h.sb.Set("d/1", "drift|", false)
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(true, "a/3", "w|~d/1,b/2", "b/2", "v@1@2|"); err == nil {
		t.Fatalf("the transaction did not fail: ops %v", h.sb.OpStrings())
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete d/1") || !slices.Contains(ops, "delete a/3") {
		t.Fatalf("the test means the revert to delete d/1 and a/3: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
