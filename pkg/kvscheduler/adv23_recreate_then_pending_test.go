package kvscheduler_test

import (
	"context"
	"slices"
	"testing"
)

// TestAdv23DependentOfARecreatedProviderBackBeforeTheOtherGoesStays is
// TestRandomGraphs -kvleave seed 929 reduced. a/1 Requires any r/ key,
// met by r/1, r/2 and r/3. One transaction deletes r/3, re-creates r/1
// (it comes back) and then re-creates r/2 into PENDING (its new value
// Requires n/1, which nothing provides). r/1 is back before r/2 goes, so
// a/1 misses its dependency at no moment and stays. The delete of r/3
// asked whether the requests further on surely take a/1 away
// (cascadeLater) and counted r/1's re-create as taking r/1 away for good:
// a/1 was deleted and created again at once, for nothing. Before the fix
// (depGap, leavinggap.go) it failed with "a/1, Requiring any r/ key, was
// deleted although r/1 was back before r/2 went: ops [delete a/1 create
// a/1 delete r/3 delete a/1 create a/1 delete r/1 create r/1 delete r/2]"
// (taken down twice: by r/3's delete and again by r/1's).
func TestAdv23DependentOfARecreatedProviderBackBeforeTheOtherGoesStays(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "r/1", "v|", "r/2", "v|", "r/3", "v|", "a/1", "v|r/*")
	h.sb.ResetOps()
	txn := h.s.StartNBTransaction()
	txn.SetValue("r/3", nil)
	txn.SetValue("r/1", "w|")
	txn.SetValue("r/2", "w|n/1")
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete r/2") || !slices.Contains(ops, "create r/1") {
		t.Fatalf("the transaction did not re-create r/1 and take r/2 away as the test means: ops %v", ops)
	}
	if slices.Contains(ops, "delete a/1") {
		t.Fatalf("a/1, Requiring any r/ key, was deleted although r/1 was back before r/2 went: ops %v", ops)
	}
}
