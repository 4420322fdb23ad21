package kvscheduler_test

import (
	"context"
	"slices"
	"testing"
)

// TestAdv23UpdateMetThroughAnUnindexedPrefixKeepsAnotherDependencyOfItsDependent
// is TestRandomGraphs -kvleave seed 2150 reduced. r/2 Requires any r/ key
// (met by itself and by r/3) and any a/ key (met by a/1 alone). One
// transaction deletes r/3 and updates a/1 to w|n/*, Requiring any n/ key,
// met by the notified n/1. The delete of r/3 asks whether a request further
// on surely takes r/2 away (cascadeLater): a/1's update was judged with no
// n/ provider at all, because no value depended on the prefix n/ yet (the
// graph indexes only the prefixes values depend on), so a/1 was taken for
// going and r/2 was deleted and created again for nothing. Before the fix
// (graph.providers asks every node for an unindexed prefix) it failed with
// "r/2 was deleted although a/1's update, met by the notified n/1, keeps
// a/1: ops [delete r/2 create r/2 delete r/3 update a/1]".
func TestAdv23UpdateMetThroughAnUnindexedPrefixKeepsAnotherDependencyOfItsDependent(t *testing.T) {
	h := newLvHarness(t)
	if err := h.s.PushSBNotification("n/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	h.step(t, "a/1", "w|", "r/3", "w|")
	h.step(t, "r/2", "w|r/*,a/*")
	h.sb.ResetOps()
	txn := h.s.StartNBTransaction()
	txn.SetValue("r/3", nil)
	txn.SetValue("a/1", "w|n/*")
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete r/3") || !slices.Contains(ops, "update a/1") {
		t.Fatalf("the transaction did not delete r/3 and update a/1 in place as the test means: ops %v", ops)
	}
	if slices.Contains(ops, "delete r/2") {
		t.Fatalf("r/2 was deleted although a/1's update, met by the notified n/1, keeps a/1: ops %v", ops)
	}
}
