package kvscheduler_test

import (
	"context"
	"slices"
	"testing"
)

// TestAdv23OwnUpdateThatDropsWhatGoesKeepsItsValue is TestRandomGraphs
// -kvleave seed 2606 reduced. b/1 = w@1|a/7 derives d/1 and Requires a/7;
// a/7 Requires any d/ key, met by d/1 and by d/5, b/5's. One transaction
// deletes b/5 and updates b/1 to w|, which derives nothing and needs
// nothing. a/7 surely goes (d/5 with b/5, d/1 with b/1's update), and the
// delete of d/5 takes it down at once, before d/5 (cascadeLater). b/1's
// update further on no longer needs a/7, so b/1 need not leave; but
// a/7's delete, taking the values that Require it down, took b/1 down by
// its old dependency before its update, and the update created it again
// at once, for nothing. Before the fix (updateSpares: the update, ready
// now, is applied inside a/7's delete) it failed with "b/1 was deleted
// although its own update further on needs nothing: ops [delete d/1
// delete b/1 delete a/7 delete d/5 delete b/5 create b/1]".
func TestAdv23OwnUpdateThatDropsWhatGoesKeepsItsValue(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "b/5", "w@5|", "b/1", "w@1|a/7", "a/7", "v|d/*")
	h.sb.ResetOps()
	txn := h.s.StartNBTransaction()
	txn.SetValue("b/5", nil)
	txn.SetValue("b/1", "w|")
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/7") {
		t.Fatalf("a/7 stayed, the test means it to go: ops %v", ops)
	}
	if slices.Contains(ops, "delete b/1") {
		t.Fatalf("b/1 was deleted although its own update further on needs nothing: ops %v", ops)
	}
}
