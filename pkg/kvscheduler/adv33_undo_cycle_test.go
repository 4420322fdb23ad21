package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv33UndoKeepsTheDeleteOrderOnceItsCascadeBreaksACycle is adv5 fuzz
// seed 9028443 (-fzorder) reduced; 13107730 and 13109111 of h25m's set B
// (-fzorder -fzcorder -fzrevertall) are the same shape. r/2 = w| is held,
// r/1 = w|r/2,~a/1 waits for a/1, and a/1 = v|~r/1 is set behind the
// scheduler's back. A transaction with revert requests a/1 = w| (its
// create fails: it already exists) and r/2 = w|~a/1 (a re-create). Its
// undo deletes r/1 and the a/1 read back, and re-creates r/2 as w|; r/2 =
// w|~a/1 must go before a/1 (docs/kvscheduler.md, "The delete order").
// The undo of a/1 saw a/1, r/1 and r/2 as a cycle, so it did not order
// r/2's undo first; a/1's delete then took r/1 down first, which broke
// the cycle, and the undo's own due-undo check (dueUndo) was off during
// the undos (it ran only during the read-back). Before the fix: "delete
// order: a/1 deleted before r/2 (w|~a/1), which depends on it and is
// deleted later in the same step".
func TestAdv33UndoKeepsTheDeleteOrderOnceItsCascadeBreaksACycle(t *testing.T) {
	h := newAdv28HarnessWith(t, false, false, false)
	if err := h.commit(false, "r/2", "w|", "r/1", "w|r/2,~a/1"); err != nil {
		t.Fatal(err)
	}
	h.sb.Set("a/1", "v|~r/1", false)
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(true, "a/1", "w|", "r/2", "w|~a/1"); err == nil {
		t.Fatal("the transaction did not fail: a/1 is already there")
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/1") || !slices.Contains(ops, "delete r/1") || slices.Index(ops, "delete r/2") < 0 {
		t.Fatalf("the test means the undo to delete r/1 and a/1 and re-create r/2: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	t.Logf("ops %v", ops)
	advWantAgree(t, h.s, h.sb, "after the revert", "a/", "r/")
}
