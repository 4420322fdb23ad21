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

// TestAdv11DependentOfProvidersAllLeavingGoesFirst is adv5 fuzz seed
// 102725 (-fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder) reduced:
// a/2 = v|~r/2,d/* is ordered after r/2 and Requires any d/ key; b/2 =
// v@1@2| derives both d/1 and d/2. One transaction deletes r/2 and
// re-creates b/2 as v|, which derives nothing: the Requires cascade of
// b/2's delete takes a/2 down (into PENDING) after r/2 went. a/2 must go
// before r/2.
func TestAdv11DependentOfProvidersAllLeavingGoesFirst(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/2", "w|", "b/2", "v@1@2|", "a/2", "v|~r/2,d/*").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/2", nil, "b/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if v, ok := x.sb.Values()["a/2"]; ok {
		t.Errorf("the southbound holds a/2 = %v, want it PENDING (no d/ key)", v)
	}
}

// TestAdv11DependentBySouthboundValueGoesBeforeAStrayValue is adv5 fuzz
// seed 102762 (-fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder)
// reduced: r/2 = w| is requested; drift sets r/2 = v|~a/3 and a/3 = v| in
// the southbound. A full resync reads them: it deletes a/3, which nothing
// wants, and re-creates r/2 (r/ values change by re-create). r/2's value
// in the southbound is ordered after a/3: r/2's delete must come first.
func TestAdv11DependentBySouthboundValueGoesBeforeAStrayValue(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/2", "w|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("r/2", "v|~a/3", false)
	x.sb.Set("a/3", "v|", false)
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/2", "w|").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if v := x.sb.Values()["r/2"]; v != "w|" {
		t.Errorf("the southbound holds r/2 = %v, want w|", v)
	}
}

// TestAdv11DependentOfALeavingProviderGoesFirst is adv5 fuzz seed 9734
// (-fzretry -fzamb -fznotifyall -fzdd -fzview -fzrb -fzorder) reduced:
// b/2 = w@1@2| derives d/1 and d/2; a/1 = v|d/2 Requires d/2; r/2 =
// w|~d/1,a/1 is ordered after d/1 and Requires a/1. Re-creating b/2 as v|
// takes both derived values away: d/2's delete takes a/1 down, and a/1's
// takes r/2 down, which must go before d/1.
func TestAdv11DependentOfALeavingProviderGoesFirst(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "w@1@2|", "a/1", "v|d/2", "r/2", "w|~d/1,a/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	for _, k := range []string{"a/1", "r/2"} {
		if v, ok := x.sb.Values()[k]; ok {
			t.Errorf("the southbound holds %s = %v, want it PENDING", k, v)
		}
	}
}
