package kvscheduler_test

import (
	"context"
	"testing"
)

// TestAdv15CascadeTakesDownSiblingsDependentFirst: an update takes a/3
// away (into PENDING: b/1, which it is now ordered after, is absent), and
// the Requires cascade takes down both a/1 = v|a/3 and r/1 = w|~a/1,a/3.
// r/1 is ordered after a/1, so it must go first (docs/kvscheduler.md,
// the delete order: "the values that Require it are taken down (into
// PENDING) before it", "a value is deleted after the values that depend
// on it, of either kind, whose delete the same transaction has under
// way"). This shape, reduced from adv5 fuzz seed 407933, holds (r/1,
// a/1, a/3); the seed itself, where the same transaction also fails to
// delete d/1 (drift removed it) and refuses b/2's delete, does not: see
// TestAdv15DeleteOrderSeed407933.
func TestAdv15CascadeTakesDownSiblingsDependentFirst(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("a/3", "v|", "a/1", "v|a/3", "r/1", "w|~a/1,a/3").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(x.sb.Values()); got != 3 {
		t.Fatalf("setup: the southbound holds %v, want a/1, a/3 and r/1", x.sb.Values())
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("a/3", "v|~a/2,b/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}

// TestAdv15CascadeOfOneDeleteTakesDownTheDependentFirst: b/1's delete
// takes its property p/1 away, and with it a/1 = v|p/1; it also takes
// a/3 = w|b/1 down, and with it r/1 = w|a/3,~a/1, which is ordered after
// a/1. r/1 must go before a/1 (docs/kvscheduler.md, the delete order).
// This shape, reduced from adv5 fuzz seed 603898, holds (d/1, r/1, a/1,
// a/3, b/1); the seed itself, where r/1 was created by the resume of a
// stopped transaction and a/1 drifted to the southbound's own value
// unread, does not: see TestAdv15DeleteOrderSeed603898.
func TestAdv15CascadeOfOneDeleteTakesDownTheDependentFirst(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "w@1|", "a/1", "v|p/1", "a/3", "w|b/1", "r/1", "w|a/3,~a/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	if _, ok := before["r/1"]; !ok {
		t.Fatalf("setup: the southbound holds %v, want r/1 too", before)
	}
	x.sb.ResetOps()
	if _, err := x.nb("b/1", nil).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}
