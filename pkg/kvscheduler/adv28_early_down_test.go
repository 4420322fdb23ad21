package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv28DependentTakenDownEarlyGoesAfterItsOwnDueDependent is adv5
// fuzz seed 13646428 (-fzorder -fzcorder -fzrevertall -fzprops -fzrb
// -fzdd) reduced. b/2 = v@1| derives d/1; b/1 = w|d/1,~a/* Requires d/1
// and is ordered after any a/ value (a/3); r/2 = v|~b/1,~a/3 is ordered
// after both. One transaction deletes a/3 (request 0) and r/2 (1) and
// updates b/2 to w@1|d/2, into PENDING (d/2 is nowhere), which takes d/1,
// and so b/1, away. At a/3's delete both its dependents go first: b/1,
// which the cascade takes later, and r/2, whose own delete is further on.
// b/1 is taken down before r/2, which is ordered after it
// (docs/kvscheduler.md, "The delete order"). With b/1 = w|d/1,~a/3 (an
// exact key) r/2 goes first. It failed so at 7aaacaf too, and with b/
// updated in place as well as by re-creation; b/1's delete now starts
// before r/2's request is pushed, so r/2 goes first (see takeDownEarly).
func TestAdv28DependentTakenDownEarlyGoesAfterItsOwnDueDependent(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "b/2", "v@1|", "b/1", "w|d/1,~a/*", "a/3", "v|", "r/2", "v|~b/1,~a/3"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/3", "", "r/2", "", "b/2", "w@1|d/2"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete b/1") || !slices.Contains(ops, "delete r/2") {
		t.Fatalf("the test means b/1 and r/2 both to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
