package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv11ObtainedDependentTakenOverGoesBeforeWhatItDependsOn is adv5
// fuzz seed 7586 (-fzretry -fzamb -fznotifyall -fzdd -fzview -fzrb
// -fzorder) reduced: the southbound holds a/2 = w|d/1 as its own, read by
// a full resync (OBTAINED); b/2 = w@1| derives d/1. One transaction
// re-creates b/2 (d/1 goes with it) and takes a/2 over with w|d/2, which
// Requires d/2, which nothing provides: a/2, whose value in the southbound
// depends on d/1, is deleted into PENDING, and must go before d/1.
func TestAdv11ObtainedDependentTakenOverGoesBeforeWhatItDependsOn(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	x.sb.Set("a/2", "w|d/1", true)
	if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("b/2", "w@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, x.s, "a/2", kvscheduler.Obtained)
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("a/2", "w|d/2", "b/2", "v@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if v, ok := x.sb.Values()["a/2"]; ok {
		t.Errorf("the southbound holds a/2 = %v, want it PENDING (d/2 missing)", v)
	}
}
