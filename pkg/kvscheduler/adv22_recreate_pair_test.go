package kvscheduler_test

import (
	"context"
	"slices"
	"testing"
)

// Two re-creates of the providers of one any-of dependency: each goes
// while the other is there (the first comes back before the second goes),
// so the dependent never misses its dependency and must not be taken
// away. Found by the leaving-set model's exactness check (TestRandomGraphs
// -kvleave seed 547): the model keeps a/g1/1, the walk took it into
// PENDING and created it again before either provider's delete.
func TestAdv22DependentOfTwoRecreatedProvidersIsNotTakenAway(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "r/1", "v|", "r/2", "v|", "a/1", "v|r/*")
	h.sb.ResetOps()
	txn := h.s.StartNBTransaction()
	txn.SetValue("r/1", "w@|")
	txn.SetValue("r/2", "w@|")
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if slices.Contains(ops, "delete a/1") {
		t.Fatalf("a/1, Requiring any r/ key, was deleted although one r/ provider stayed at every moment: ops %v", ops)
	}
}
