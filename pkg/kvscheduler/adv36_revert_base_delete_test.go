package kvscheduler_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestAdv36RevertOfABaseDeleteWhoseDerivedDeleteFailedRestoresIt is the
// older shape behind TestAdv36RevertOfAnUpdateWhoseEarlyDeleteFailedRestoresTheBase
// (issue 25, found attacking h25t's reCreatedFirst; it fails at 45289fa,
// before h25t, too). b/1 = w@1@2|~d/1 (set by an update: b/1 is ordered
// after its own d/1, so a create of it waits) derives d/1 and d/2, and d/2
// is ordered after its sibling d/1. A transaction with revert deletes b/1;
// d/2's delete goes through, dependent first, and d/1's fails. The
// transaction fails and is to put back what it changed: b/1, d/1 and d/2
// as they were. The undo instead deletes d/1 again and then b/1, and the
// southbound ends without any of them, though the transaction is
// reported reverted.
func TestAdv36RevertOfABaseDeleteWhoseDerivedDeleteFailedRestoresIt(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	for _, v := range []string{"x@1@2|", "w@1@2|~d/1"} {
		if err := h.commit(false, "b/1", v); err != nil {
			t.Fatal(err)
		}
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	h.sb.FailNext("delete", "d/1", errors.New("injected"))
	err := h.commit(true, "b/1", "")
	ops := h.sb.OpStrings()
	h.sb.ClearFailures()
	if err == nil || !slices.Contains(ops, "delete d/1") {
		t.Fatalf("the test means d/1's delete to fail and the transaction to revert: err %v, ops %v", err, ops)
	}
	advOpen(t, "issue 25: a reverted base delete whose derived value's delete failed is not restored")
	got := h.sb.Values()
	if !maps.EqualFunc(got, before, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Errorf("after the reverted delete the southbound holds %v, before it held %v (ops %v, err %v, b/1 %s)",
			got, before, ops, err, h.s.GetValueStatus("b/1").State)
	}
	advWantAgree(t, h.s, h.sb, "after the reverted delete", "b/", "d/")
}
