package kvscheduler_test

import (
	"context"
	"slices"
	"testing"
)

// An update Requiring any n/ key, met by a value the southbound notified,
// does not take its value away: the value it updates stays, and so does
// what Requires it. Found by the leaving-set model's shadow check (adv5
// fuzz -fzleave -fzshadow, set 1, seed 1201848, reduced): valueGoes says
// a/1's update w|n/* surely goes, the model keeps a/1 and the record
// agrees (a/1 is updated in place), but on that sure answer the delete of
// a/2 took r/2 = w|a/*,a/1 down first and created it again at once.
func TestAdv22UpdateMetByANotifiedValueDoesNotTakeItsDependentDown(t *testing.T) {
	h := newLvHarness(t)
	if err := h.s.PushSBNotification("n/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	h.step(t, "a/1", "w|", "a/2", "w|")
	h.step(t, "r/2", "w|a/*,a/1")
	h.sb.ResetOps()
	txn := h.s.StartNBTransaction()
	txn.SetValue("a/1", "w|n/*")
	txn.SetValue("a/2", nil)
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ops := h.sb.OpStrings(); slices.Contains(ops, "delete r/2") {
		t.Fatalf("r/2 = w|a/*,a/1 was deleted although a/1's update, met by the notified n/1, keeps a/1 and a/* stays met: ops %v", ops)
	}
}
