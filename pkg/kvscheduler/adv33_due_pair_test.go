package kvscheduler_test

import (
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"slices"
	"testing"
)

// TestAdv33RequestsDueTogetherKeepTheDeleteOrderAmongThem is adv5 fuzz
// seed 7547700 (-fzorder -fzrb -fzdd) reduced. b/1 = v@1@2| derives d/1
// and d/2; r/2 = w|~d/* and a/1 = v|~r/2,~d/2 are ordered after them, and
// a/1 after r/2 too. One transaction deletes r/2 and b/1 and updates a/1
// to w|~d/*,b/2 (PENDING: no b/2). At d/2's delete both r/2's delete and
// a/1's update are due (they go before d/2); they ran r/2 first, though
// a/1 is ordered after r/2, and at r/2's delete a/1's request had started
// already, so nothing ordered it (docs/kvscheduler.md, "The delete
// order"). Before the fix: "r/2 deleted before a/1 (v|~r/2,~d/2), which
// depends on it and is deleted later in the same step".
func TestAdv33RequestsDueTogetherKeepTheDeleteOrderAmongThem(t *testing.T) {
	h := newAdv28HarnessWith(t, false, false, false)
	if err := h.commit(false, "b/1", "v@1@2|", "r/2", "w|~d/*", "a/1", "v|~r/2,~d/2"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	for _, k := range []string{"d/1", "d/2", "r/2", "a/1"} {
		if _, ok := before[k]; !ok {
			t.Fatalf("%s was not created: %v", k, before)
		}
	}
	h.sb.ResetOps()
	if err := h.commit(false, "r/2", "", "b/1", "", "a/1", "w|~d/*,b/2"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/1") || !slices.Contains(ops, "delete r/2") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means a/1, r/2 and d/2 to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	t.Logf("ops %v", ops)
	wantState(t, h.s, "a/1", kvscheduler.Pending)
	advWantAgree(t, h.s, h.sb, "after the transaction", "a/", "b/", "d/", "r/")
}
