package kvscheduler_test

import (
	"context"
	"testing"
)

// TestAdv7UpdateIntoPendingDeletesBeforeAnOrderedDependentThatGoesForAnotherReason:
// as TestAdv6UpdateIntoPendingDeletesBeforeItsOrderedDependent, a/3, held
// ordered after a/2 (~a/2), and a/2 are updated in one transaction, a/2 to
// a value Requiring d/1, which nothing holds or creates (so a/2 goes, into
// PENDING). a/3's new value does not Require a/2 (the only case the adv6
// fix orders, updateTakesAway), but a/3 goes too, for its own reason: it
// Requires d/1 as well, or d/2 (absent), or r/1, which the same
// transaction deletes, or it is invalid. Both go in the same transaction,
// so a/3, ordered after a/2, must be deleted first; the scheduler deletes
// a/2 first. The same when a/2 goes for being invalid (bad|) rather than
// PENDING.
func TestAdv7UpdateIntoPendingDeletesBeforeAnOrderedDependentThatGoesForAnotherReason(t *testing.T) {
	for _, c := range [][2]string{{"w|d/1", "v|d/1"}, {"w|d/1", "v|d/2"}, {"w|d/1", "v|r/1"}, {"w|d/1", "bad|"}, {"bad|", "v|d/2"}} {
		v2, v3 := c[0], c[1]
		x := newAdv6Script(t)
		ctx := context.Background()
		if _, err := x.nb("a/2", "w|", "a/3", "v|~a/2", "r/1", "v|").Commit(ctx); err != nil {
			t.Fatal(err)
		}
		before := x.sb.Values()
		x.sb.ResetOps()
		_, _ = x.nb("a/2", v2, "a/3", v3, "r/1", nil).Commit(ctx)
		if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
			t.Errorf("a/2 updated to %s, a/3 to %s: %s (ops %v)", v2, v3, msg, x.sb.OpStrings())
		}
		if _, ok := x.sb.Values()["a/3"]; ok {
			t.Errorf("a/2 updated to %s, a/3 to %s: a/3 held: %v", v2, v3, x.sb.Values())
		}
	}
}
