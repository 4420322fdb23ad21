package kvscheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv31ResyncReCreateOfADerivedValueGoesBeforeWhatItIsOrderedAfter is
// adv5 fuzz seed 15007846 (-fzrd -fzorder -fzrevertall -fzdd -fzrb)
// reduced. b/2 = w@2| derives d/2, whose descriptor applies a change by
// re-creation and whose value names its dependencies. Behind the
// scheduler's back d/2 becomes w|~a/*,~a/1 (ordered after a/1) and a/1 =
// drift| appears. A full resync requesting b/2 as it is deletes a/1
// (nothing requests it) and re-creates d/2 back to what b/2 derives: the
// held d/2 is ordered after a/1, so its delete must come first
// (docs/kvscheduler.md, "The delete order"). Before the fix a/1 went
// first (ops [delete a/1 delete d/2 create d/2]): the delete order saw
// b/2's request, in sync, keep its derived values.
func TestAdv31ResyncReCreateOfADerivedValueGoesBeforeWhatItIsOrderedAfter(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	h := newAdv28HarnessWith(t, true, false, true)
	if err := h.commit(false, "b/2", "w@2|", "r/2", "w|"); err != nil {
		t.Fatal(err)
	}
	h.sb.Set("a/1", "drift|", false)
	h.sb.Set("d/2", "w|~a/*,~a/1", false)
	before := h.sb.Values()
	h.sb.ResetOps()
	_, err := h.s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/2", "w@2|").SetValue("r/2", "w|").Commit(context.Background())
	if err != nil {
		t.Fatalf("full resync: %v (ops %v)", err, h.sb.OpStrings())
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means the resync to delete a/1 and re-create d/2: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
	advWantAgree(t, h.s, h.sb, "after the resync", "a/", "b/", "d/")
}
