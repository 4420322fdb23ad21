package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv13ObtainedTakenOverByARecreateGoesBeforeWhatItDependsOn (adv5
// fuzz seed 121855 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb
// -fzorder, reduced): b/2 = w|r/2 is the southbound's own (OBTAINED). A
// transaction deletes r/2 and takes b/2 over with v@1|, which b's
// descriptor applies by re-creation: the re-create deletes the
// southbound's w|r/2, which Requires r/2. The delete of r/2 went first;
// b/2's re-create followed. A request that takes an OBTAINED value over
// by re-creating it takes the southbound's value away as surely as a
// delete does (see obtainedDue).
func TestAdv13ObtainedTakenOverByARecreateGoesBeforeWhatItDependsOn(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("b/2", "w|r/2", true)
	if _, err := x.nb("r/2", "v|").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := x.s.GetValueStatus("b/2"); st.State != kvscheduler.Obtained {
		t.Fatalf("b/2 is %s after the resync, want OBTAINED", st.State)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/2", nil, "b/2", "v@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}

// TestAdv13ObtainedDerivedValueGoesWithItsBaseBeforeWhatItDependsOn (adv5
// fuzz seed 120215 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb
// -fzorder, reduced): b/2 = v@1| is the southbound's own (OBTAINED), and
// so is its derived d/1, read as v|r/2, which Requires r/2. A transaction
// deletes r/2 and takes b/2 over with w@1|, a re-create that takes d/1
// away with it. r/2 went first, d/1 with b/2's re-create after it: the
// values that leave with an OBTAINED base taken over (see leavingWith)
// are judged by their own values in the southbound too.
func TestAdv13ObtainedDerivedValueGoesWithItsBaseBeforeWhatItDependsOn(t *testing.T) {
	rb, dd := *fzRecreateB, *fzDerivedDeps
	*fzRecreateB, *fzDerivedDeps = true, true
	t.Cleanup(func() { *fzRecreateB, *fzDerivedDeps = rb, dd })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("b/2", "v@1|", true)
	x.sb.Set("d/1", "v|r/2", true)
	if _, err := x.nb("r/2", "v|").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := x.s.GetValueStatus("d/1"); st.State != kvscheduler.Obtained {
		t.Fatalf("d/1 is %s after the resync, want OBTAINED", st.State)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/2", nil, "b/2", "w@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}
