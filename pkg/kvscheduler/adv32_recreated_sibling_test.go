package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv32ReCreatedDerivedValueGoesBeforeTheSiblingItIsOrderedAfter is
// adv5 fuzz seed 18408842 (-fzrd -fzorder -fzcorder -fzrevertall -fzcancel
// -fzcancelall -fzdd -fzprops) reduced. b/1 = w@1@2|~d/2 derives d/1 and
// d/2; d/1 (its value names ~d/2) is ordered after its sibling d/2. b/1's
// update to v@1| drops d/2 and changes d/1, whose descriptor applies a
// change by re-creation: the transaction deletes both, so d/1, ordered
// after d/2, must be deleted first (docs/kvscheduler.md, "both deleted in
// one transaction: the dependent is deleted first"). Open: the ops are
// [delete d/2 update b/1 delete d/1 create d/1], at 206aa72 too.
func TestAdv32ReCreatedDerivedValueGoesBeforeTheSiblingItIsOrderedAfter(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	for _, v := range []string{"x@1@2|", "w@1@2|~d/2"} {
		if err := h.commit(false, "b/1", v); err != nil {
			t.Fatal(err)
		}
	}
	advOpen(t, "issue 25: a base's update that drops d/2 and re-creates d/1, ordered after d/2, deletes d/2 first")
	before := h.sb.Values()
	h.sb.ResetOps()
	err := h.commit(false, "b/1", "v@1|")
	ops := h.sb.OpStrings()
	if err != nil {
		t.Fatalf("update: %v (ops %v)", err, ops)
	}
	if !slices.Contains(ops, "delete d/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means the update to delete d/2 and re-create d/1: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	advWantAgree(t, h.s, h.sb, "after the update", "b/", "d/")
}

// TestAdv32TwoReCreatedSiblingsGoDependentFirst is adv5 fuzz seed 18439933
// (same flags) reduced: b/1 = w@1@2|~d/1 derives d/1 and d/2, and d/2 is
// ordered after its sibling d/1. b/1's update to v@1@2|~d/1 changes both,
// whose descriptor applies a change by re-creation, so the transaction
// deletes both and d/2 must go first. Open: the ops are [update b/1
// delete d/1 create d/1 delete d/2 create d/2], at 206aa72 too.
func TestAdv32TwoReCreatedSiblingsGoDependentFirst(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	for _, v := range []string{"x@1@2|", "w@1@2|~d/1"} {
		if err := h.commit(false, "b/1", v); err != nil {
			t.Fatal(err)
		}
	}
	advOpen(t, "issue 25: a base's update that re-creates d/1 and d/2, ordered after d/1, deletes d/1 first")
	before := h.sb.Values()
	h.sb.ResetOps()
	err := h.commit(false, "b/1", "v@1@2|~d/1")
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
	advWantAgree(t, h.s, h.sb, "after the update", "b/", "d/")
}
