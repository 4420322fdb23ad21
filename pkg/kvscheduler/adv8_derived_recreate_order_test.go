package kvscheduler_test

import (
	"context"
	"testing"
)

// Within one transaction, a dependent the transaction deletes goes before
// what it is ordered after (docs/safety.md, the delete-order rows and the
// model of TestRandomGraphs), a re-create's delete included. b/2 = w@1|
// derives d/1; r/2 = w|~d/1 is ordered after d/1. One transaction
// re-creates r/2 to w| (r's descriptor updates by re-creation; the new
// value is no longer ordered after d/1) and deletes b/2, so d/1 goes with
// it. r/2's old value must be deleted before d/1 is: the re-create goes
// first, as it does when r/2 is ordered after b/2 itself (ops [delete r/2
// create r/2 delete d/1 delete b/2]). With the derived value, d/1 goes
// first (before postponeTo looked at what depends on the values leaving
// with the one deleted). Reduced from adv5 fuzz seed 20209 of -fznoownedr
// -fzretry -fzdd -fzorder -fzview (20926 too).
func TestAdv8RecreateOfAValueOrderedAfterADerivedValueGoesAfterIt(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "w@1|", "r/2", "w|~d/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/2", "w|", "b/2", nil).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); len(after) != 1 || after["r/2"] != "w|" {
		t.Errorf("the southbound holds %v, want only r/2=w|", after)
	}
}
