package kvscheduler_test

import (
	"errors"
	"slices"
	"testing"
)

// TestAdv33FailedUpdateTakenByTheCascadeGoesBeforeWhatItIsOrderedAfter is
// adv5 fuzz seed 16202303 (-fzretry -fzdd -fzview -fzrb -fzorder
// -fzdheld) reduced; 7218734 and 13146457 go the same way. b/2 = v@1@2|
// derives d/1 and d/2, b/1 = v|b/2 Requires b/2, and a/1 holds v|a/3,~d/2
// (ordered after d/2) while its update to w|b/1 failed (FAILED, held value
// and wanted value differ). b/2's delete takes d/2 away, and its cascade
// takes b/1 and then a/1 (its request Requires b/1) down later in the
// step: a/1 must go before d/2 (docs/kvscheduler.md, "The delete order").
// The prediction of the cascade (cascadeBy) left out every value whose
// held dependencies differ from its wanted ones, though the cascade takes
// it down by its wanted ones. Before the fix: "d/2 deleted before a/1
// (v|a/3,~d/2), which depends on it and is deleted later in the same
// step".
func TestAdv33FailedUpdateTakenByTheCascadeGoesBeforeWhatItIsOrderedAfter(t *testing.T) {
	h := newAdv28HarnessWith(t, false, false, false)
	if err := h.commit(false, "b/2", "v@1@2|", "b/1", "v|b/2", "a/3", "v|", "a/1", "v|a/3,~d/2"); err != nil {
		t.Fatal(err)
	}
	h.sb.FailNext("update", "a/1", errors.New("injected"))
	if err := h.commit(false, "a/1", "w|b/1"); err == nil {
		t.Fatal("a/1's update did not fail")
	}
	before := h.sb.Values()
	if before["a/1"] != "v|a/3,~d/2" || before["d/2"] == nil || before["b/1"] == nil {
		t.Fatalf("the test means a/1 = v|a/3,~d/2 held after its failed update, with b/1 and d/2: %v", before)
	}
	h.sb.ResetOps()
	if err := h.commit(false, "b/2", ""); err != nil {
		t.Logf("b/2's delete: %v", err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means b/2's delete to take d/2 and a/1 away: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	t.Logf("ops %v", ops)
	for _, op := range h.sb.Ops(false) {
		t.Logf("op %s %s %v err=%v", op.Operation, op.Key, op.Value, op.Err)
	}
	advWantAgree(t, h.s, h.sb, "after b/2's delete", "a/", "b/", "d/")
}
