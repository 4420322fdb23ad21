package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv28NewProviderWaitingForALaterRequestDoesNotComeAtItsOwn attacks
// laterComesAt (leavingtxn.go), which counts a provider the transaction
// creates further on as there from its request on. a/5 = v|b/1*,~a/1
// Requires any key under b/1 (b/1 provides it) and is ordered after a/1.
// One transaction deletes a/1 (request 0), creates b/10 = v|d/3 (1),
// updates b/1 to w|a/99, which takes it into PENDING (2), and updates b/3
// to v@3|, deriving d/3 (3). At a/1's delete b/10 is counted as coming at
// 1, before b/1 leaves at 2: a/5 kept at every moment, so a/1 goes
// first. But b/10 waits for d/3 and comes only at 3: b/1's update leaves
// a/5 without a provider and the cascade takes it down, after a/1
// (docs/kvscheduler.md, "The delete order"). It failed so at 7aaacaf and at
// b1ffda1^ too (before b1ffda1 a provider to come counted as come at once);
// laterComesAt now counts b/10 from 3 (see comesFrom).
func TestAdv28NewProviderWaitingForALaterRequestDoesNotComeAtItsOwn(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "a/1", "v|", "b/1", "v|", "b/3", "v|", "a/5", "v|b/1*,~a/1"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/10", "v|d/3", "b/1", "w|a/99", "b/3", "v@3|"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/5") || !slices.Contains(ops, "delete a/1") {
		t.Fatalf("the test means a/1 and a/5 both to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
