package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv29DerivedProviderTakenAgainWithItsBaseIsNotBackForGood checks
// that depGap counts a derived provider back after its base's re-create
// only while no cascade of the step surely takes the base away again
// (requestLeaves, takenAgain). b/1 = v@1| and b/2 = v@2| derive d/1 and
// d/2; b/ values are updated by re-creation; a/5 = v|d/*,~a/1 Requires any
// d/ key and is ordered after a/1. One transaction deletes a/1, re-creates
// b/1 as w@1|a/8 (d/1 comes back while a/8 is there), re-creates b/2 as
// w@2|a/98, into PENDING (d/2 goes), and updates a/8 to w|a/99, into
// PENDING, whose cascade takes b/1 and d/1 away again: a/5 has no d/
// provider from then on and goes, before a/1 (docs/kvscheduler.md, "The
// delete order").
func TestAdv29DerivedProviderTakenAgainWithItsBaseIsNotBackForGood(t *testing.T) {
	h := newAdv28HarnessRB(t, false, true)
	if err := h.commit(false, "a/1", "v|", "a/8", "v|", "b/1", "v@1|", "b/2", "v@2|", "a/5", "v|d/*,~a/1"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/1", "w@1|a/8", "b/2", "w@2|a/98", "a/8", "w|a/99"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/5") || !slices.Contains(ops, "delete a/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means a/1, a/5 and d/2 all to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
