package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv28PostponedReCreateIsNotCountedBackAtItsRequest attacks depGap
// (leavinggap.go), which counts a re-created provider back right after
// its request, in request order. b/ values are updated by re-creation.
// a/5 = v|b/*,~a/1 Requires any b/ key (b/1 and b/2 provide it) and is
// ordered after a/1; a/7 = v|~b/1 is ordered after b/1. One transaction
// deletes a/1 (request 0), re-creates b/1 as w| (1), re-creates b/2 as
// w|a/99, which goes into PENDING (2), and updates a/7 to w| (3). At a/1's
// delete, depGap sees b/1 back at 1, before b/2 leaves at 2: a/5 kept at
// every moment, so a/1 goes first. But b/1's re-create is postponed after
// a/7's update (postponeTo: a/7, ordered after b/1, stops being so), so b/2
// leaves while b/1 has still to go and come back: a/5 has no provider for
// a moment and is taken down, after a/1 (docs/kvscheduler.md, "The delete
// order"). It passes at 6482911^ (ops [delete a/5 delete a/1 ...]) and
// fails from 6482911, which brought depGap in.
func TestAdv28PostponedReCreateIsNotCountedBackAtItsRequest(t *testing.T) {
	h := newAdv28HarnessRB(t, false, true)
	if err := h.commit(false, "a/1", "v|", "b/1", "v|", "b/2", "v|", "a/5", "v|b/*,~a/1", "a/7", "v|~b/1"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/1", "w|", "b/2", "w|a/99", "a/7", "w|"); err != nil {
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

// TestAdv28ReCreatedProviderTakenAgainByALaterCascadeIsNotBackForGood
// attacks depGap's other reading of a re-create: back right after its
// request, and for good. a/5 = v|b/*,~a/1 as above; b/ values are updated
// by re-creation. One transaction deletes a/1 (request 0), re-creates b/1
// as w|a/8 (1: a/8 is there, so b/1 comes back), re-creates b/2 as w|a/98,
// which goes into PENDING (2), and updates a/8 to w|a/99, into PENDING
// (3), whose cascade takes b/1 away again. At a/1's delete depGap counts
// b/1 back at 1, before b/2 leaves at 2, so a/1 goes first; b/1 is back
// then, but a/8's update takes it down again, and a/5, without a
// provider, is taken down after a/1. It passes at 6482911^ (ops [delete
// a/5 delete a/1 ...]) and fails from 6482911.
func TestAdv28ReCreatedProviderTakenAgainByALaterCascadeIsNotBackForGood(t *testing.T) {
	h := newAdv28HarnessRB(t, false, true)
	if err := h.commit(false, "a/1", "v|", "a/8", "v|", "b/1", "v|", "b/2", "v|", "a/5", "v|b/*,~a/1"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/1", "w|a/8", "b/2", "w|a/98", "a/8", "w|a/99"); err != nil {
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

// TestAdv28PostponedDeleteOpensNoGapForADependentKeptMet is the other way
// round: depGap counts a provider's delete at its request, though
// postponeTo moves it later, and so sees a gap that never opens. a/5 =
// v|b/*,~r/1 Requires any b/ key (b/1 provides it) and is ordered after
// r/1; a/7 = v|~b/1. One transaction re-creates r/1 as w| (r/ re-creates),
// deletes b/1, creates b/2 = v| and updates a/7 to w|. b/1's delete is
// postponed after a/7's update (a/7 stops being ordered after it), so b/2
// comes before b/1 goes and a/5 is met at every moment; r/1's re-create
// alone keeps a/5 in place, and so do b/1's postponed delete with b/2's
// create alone. Together, at r/1's delete depGap sees b/1 leave at its
// request (0), before b/2 comes (2), and a/5 is taken down and created
// again for nothing (docs/safety.md: a dependent kept met at every moment
// of a step is not taken down and created again). It passes at 6482911^
// and 7aaacaf (ops [delete r/1 create r/1 create b/2 update a/7 delete
// b/1]) and fails from 6482911.
func TestAdv28PostponedDeleteOpensNoGapForADependentKeptMet(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "r/1", "v|", "b/1", "v|", "a/7", "v|~b/1", "a/5", "v|b/*,~r/1"); err != nil {
		t.Fatal(err)
	}
	h.sb.ResetOps()
	if err := h.commit(false, "r/1", "w|", "b/1", "", "b/2", "v|", "a/7", "w|"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete b/1") || !slices.Contains(ops, "create r/1") {
		t.Fatalf("the test means r/1 re-created and b/1 deleted: ops %v", ops)
	}
	if slices.Contains(ops, "delete a/5") {
		t.Errorf("a/5 was taken down although b/2 came before b/1 went and r/1's re-create alone keeps it (ops %v)", ops)
	}
}
