package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv32NewDependentOfReCreatedDerivedValuesWaitsForTheirCreates is
// adv5 fuzz seed 18418311 (-fzrd -fzorder -fzcorder -fzrevertall -fzcancel
// -fzcancelall -fzdd -fzprops) reduced. b/1 = v@1@2| derives d/1 and d/2,
// whose descriptor applies a change by re-creation. One transaction
// updates b/1 to w@1@2| (so it re-creates d/1 and d/2) and creates a/2 =
// w|~d/1,d/2, which Requires d/2 and is ordered after d/1. a/2 must be
// created after the creates of what it depends on that the transaction
// applies, and both d/1 and a/2 are deleted in the step only if a/2 goes
// first (docs/kvscheduler.md, "both deleted in one transaction"). Open:
// the ops are [create a/2 update b/1 delete d/1 create d/1 delete a/2
// delete d/2 create d/2 create a/2]: a/2 is created on the old d/1 and d/2,
// outlives d/1's delete and is taken down and created again. At 206aa72 too.
func TestAdv32NewDependentOfReCreatedDerivedValuesWaitsForTheirCreates(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/1", "v@1@2|"); err != nil {
		t.Fatal(err)
	}
	advOpen(t, "issue 25: a new dependent of derived values its base's update re-creates is created on the old ones, then taken down")
	before := h.sb.Values()
	h.sb.ResetOps()
	err := h.commit(false, "b/1", "w@1@2|", "a/2", "w|~d/1,d/2")
	ops := h.sb.OpStrings()
	if err != nil {
		t.Fatalf("update: %v (ops %v)", err, ops)
	}
	if !slices.Contains(ops, "delete d/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means the update to re-create d/1 and d/2: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	if n := countOp(ops, "create a/2"); n != 1 {
		t.Errorf("a/2 created %d times, want once after d/1 and d/2 are back (ops %v)", n, ops)
	}
	advWantAgree(t, h.s, h.sb, "after the update", "a/", "b/", "d/")
}

// countOp counts op in ops.
func countOp(ops []string, op string) int {
	n := 0
	for _, o := range ops {
		if o == op {
			n++
		}
	}
	return n
}
