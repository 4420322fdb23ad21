package kvscheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv28ReCreateOfATopBaseTakesItsNestedDerivedValueAway attacks
// nestedDrops (leavingupdate.go), which judges a base's request further
// on by the value it leaves the nested derived values with, as an update
// in place does. With adv24Nested's chain (b/1 = x| derives d/1 = dv-x|,
// which derives e/1) and b/ values updated by re-creation, r/1 =
// v|~a/1,e/1 Requires e/1 and is ordered after a/1. One transaction
// deletes a/1 and updates b/1 to xz|, which still derives d/1 and, through
// it, e/1: but a re-create deletes b/1 with d/1 and e/1 before creating
// them again, so the Requires cascade takes r/1 down, and it must go
// before a/1 (docs/kvscheduler.md, "The delete order": a re-create further
// on counts as a delete). a/1 goes first. One level of derivation keeps
// the order (b/1 = v@1| re-created as w@1|, r/1 = v|~a/1,d/1: ops [delete
// r/1 delete a/1 ...]); the same at cdb16d7^ and cdb16d7 (not a regression).
func TestAdv28ReCreateOfATopBaseTakesItsNestedDerivedValueAway(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ds := adv24Nested(sb)
	ds[2].UpdateWithRecreate = func(string, any, any, any) bool { return true } // b/
	register(t, s, ds...)
	mustSet(t, s, "a/1", "v|", "b/1", "x|", "r/1", "v|~a/1,e/1")
	wantState(t, s, "e/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("a/1", nil).SetValue("b/1", "xz|").Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
	}
	ops := sb.OpStrings()
	if !slices.Contains(ops, "delete r/1") || !slices.Contains(ops, "delete e/1") {
		t.Fatalf("the test means b/1's re-create to take e/1 and r/1 down: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}

// TestAdv28DerivedValueReCreatedByItsBasesUpdateGoesAfterItsDependents:
// the same with no nesting, where the derived value's own descriptor
// updates by re-creation. b/1 = v@1| derives d/1 = dv-v@1|; r/1 =
// v|~a/1,d/1 Requires d/1 and is ordered after a/1. One transaction
// deletes a/1 and updates b/1 in place to w@1|, which changes d/1 to
// dv-w@1|: d/1's descriptor deletes it and creates it again, so the
// Requires cascade takes r/1 down, and it must go before a/1
// (docs/kvscheduler.md, "The delete order"). a/1 goes first (ops [delete
// a/1 update b/1 delete r/1 delete d/1 create d/1]). It fails so at
// 7aaacaf too.
func TestAdv28DerivedValueReCreatedByItsBasesUpdateGoesAfterItsDependents(t *testing.T) {
	h := newAdv28HarnessWith(t, false, false, true)
	if err := h.commit(false, "a/1", "v|", "b/1", "v@1|", "r/1", "v|~a/1,d/1"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/1", "w@1|"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete r/1") || !slices.Contains(ops, "delete d/1") {
		t.Fatalf("the test means d/1's re-create to take r/1 down: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}
