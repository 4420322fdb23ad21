package kvscheduler_test

import (
	"context"
	"testing"
)

// Within one transaction, a dependent deleted with a value goes before
// it (docs/safety.md, the delete-order rows). b/1 = v@1@2| derives d/1
// and d/2; b/2 = v|~d/2,b/1 Requires b/1 and is ordered after d/2. An
// update of b/1 that Requires a/1, which nothing provides, takes b/1
// away (into PENDING) with its derived values, and the Requires cascade
// takes b/2 down: b/2 must go before d/2. It goes after it (ops [delete
// d/2 delete d/1 delete b/2 delete b/1]): the derived values' deletes end
// before the cascade's recheck of b/2 starts its delete, so d/2's end
// does not wait for it (dependentUnderWay sees no delete under way).
// Reduced from adv5 fuzz seed 20971 of -fznoownedr -fzretry -fzdd
// -fzorder -fzview.
func TestAdv8CascadedDependentOrderedAfterADerivedValueGoesFirst(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@1@2|", "b/2", "v|~d/2,b/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/1", "w@1|a/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); len(after) != 0 {
		t.Errorf("the southbound holds %v, want nothing (b/1 and b/2 PENDING)", after)
	}
}
