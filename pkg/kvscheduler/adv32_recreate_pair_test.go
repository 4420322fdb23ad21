package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv32ReCreatedDerivedValueGoesBeforeTheReCreatedValueItIsOrderedAfter
// is the shape of adv5 fuzz seed 18413547 (-fzrd -fzorder -fzcorder
// -fzrevertall -fzcancel -fzcancelall -fzdd -fzprops): b/2 = v@2|~r/1
// derives d/2, ordered after r/1. One transaction re-creates r/1 (r/
// updates by re-creation) and updates b/2, whose derived d/2 changes and
// so is re-created (d/ updates by re-creation): d/2 must be deleted before
// r/1, in either order of the requests. It passes, on main and at
// 206aa72 (ops [update b/2 delete d/2 create d/2 delete r/1 create r/1]):
// h25q tried this shape of the fuzz seed and could not break it.
func TestAdv32ReCreatedDerivedValueGoesBeforeTheReCreatedValueItIsOrderedAfter(t *testing.T) {
	for _, order := range [][]string{{"r/1", "v|", "b/2", "w@2|~r/1"}, {"b/2", "w@2|~r/1", "r/1", "v|"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			withFzFlags(t, fzDerivedDeps)
			h := newAdv28HarnessWith(t, true, false, true)
			if err := h.commit(false, "r/1", "w|", "b/2", "x@2|"); err != nil {
				t.Fatal(err)
			}
			if err := h.commit(false, "b/2", "v@2|~r/1"); err != nil {
				t.Fatal(err)
			}
			before := h.sb.Values()
			h.sb.ResetOps()
			err := h.commit(false, order...)
			ops := h.sb.OpStrings()
			if err != nil {
				t.Fatalf("update: %v (ops %v)", err, ops)
			}
			if !slices.Contains(ops, "delete d/2") || !slices.Contains(ops, "delete r/1") {
				t.Fatalf("the test means the transaction to re-create d/2 and r/1: ops %v", ops)
			}
			if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
				t.Errorf("%s (ops %v)", msg, ops)
			}
			advWantAgree(t, h.s, h.sb, "after the update", "b/", "d/", "r/")
		})
	}
}
