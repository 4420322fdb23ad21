package kvscheduler_test

import (
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv39ReCreateLeftToAnUndoThatFailsLeavesTheOldDerivedValue: b/1 =
// v@2 derives d/2 (d/ updates by re-creation). A transaction with revert
// updates b/1 to x@1@2: d/1's create fails, and d/2's re-create, left to
// b/1's undo since a value failed (update's undoGivesBack rule), is
// skipped. b/1's undo then fails too, so b/1 keeps x@1@2 in the
// southbound and nothing re-creates d/2: the scheduler's cached view says
// d/2 = dv-x@1@2, CONFIGURED, while the southbound holds dv-v@2. At
// 7627b21, and with that rule taken out, d/2 is re-created and holds
// dv-x@1@2.
func TestAdv39ReCreateLeftToAnUndoThatFailsLeavesTheOldDerivedValue(t *testing.T) {
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/1", "v@2"); err != nil {
		t.Fatal(err)
	}
	h.sb.ResetOps()
	h.sb.FailNext("create", "d/1", errors.New("injected"))
	h.sb.FailNext("update", "b/1", nil, errors.New("injected undo"))
	err := h.commit(true, "b/1", "x@1@2")
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", h.sb.OpStrings())
	}
	st := h.s.GetValueStatus("d/2")
	held := h.sb.Values()["d/2"]
	for _, kv := range h.s.DumpValues("", "d/", kvscheduler.CachedView) {
		if kv.Key == "d/2" && st.State == kvscheduler.Configured && kv.Value != held {
			t.Fatalf("d/2 is CONFIGURED as %v, the southbound holds %v, its base b/1 %v (err %v, ops %v)",
				kv.Value, held, h.sb.Values()["b/1"], err, h.sb.OpStrings())
		}
	}
}
