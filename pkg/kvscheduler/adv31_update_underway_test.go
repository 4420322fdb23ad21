package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv31UpdateUnderWayReCreatingADerivedValueTakesItsDependentFirst is
// adv5 fuzz seed 15117760 (-fzrd -fzorder -fzcorder -fzretry) reduced.
// b/1 = w@1@2| derives d/1 and d/2, whose descriptor applies a change by
// re-creation; a/2 = w|d/1,~d/2 Requires d/1 and is ordered after d/2.
// b/1's update in place to v@1| deletes d/2 (no longer derived) and then
// re-creates d/1 (its value changes), whose delete takes a/2 down: a/2
// must go before d/2 (docs/kvscheduler.md, "The delete order"). Before
// the fix d/2 went first (ops [delete d/2 update b/1 delete a/2 delete d/1
// create d/1]): asked at d/2's delete, b/1's update was under way, no
// request further on, so d/1's re-create was not foreseen.
func TestAdv31UpdateUnderWayReCreatingADerivedValueTakesItsDependentFirst(t *testing.T) {
	h := newAdv28HarnessWith(t, false, false, true)
	if err := h.commit(false, "b/1", "w@1@2|", "a/2", "w|d/1,~d/2"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	if _, ok := before["a/2"]; !ok {
		t.Fatalf("a/2 was not created: %v", before)
	}
	h.sb.ResetOps()
	if err := h.commit(false, "b/1", "v@1|"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete d/2") || !slices.Contains(ops, "delete a/2") || !slices.Contains(ops, "delete d/1") {
		t.Fatalf("the test means b/1's update to delete d/2, re-create d/1 and take a/2 down: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	t.Logf("ops %v", ops)
	advWantAgree(t, h.s, h.sb, "after the update", "a/", "b/", "d/")
}
