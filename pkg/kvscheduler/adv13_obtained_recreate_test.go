package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv13ObtainedTakenAwayByARecreateGoesBeforeWhatItDependsOn: a
// transaction deletes r/2 and takes b/2, which the southbound owns
// (OBTAINED), over with a value b's descriptor applies by re-creation. The
// re-create takes away a value the southbound owns whose value Requires
// r/2, so it must go before r/2's delete (obtainedRequests finds both: the
// value taken over, and those leaving with it). Before, r/2 went first and
// b/2's re-create followed.
//
//   - own (adv5 fuzz seed 121855 of -fzretry -fzdd -fzprops -fzview -fzinv
//     -fzrb -fzorder, reduced): b/2 = w|r/2 is the southbound's own,
//     taken over with v@1|. A request that takes an OBTAINED value over by
//     re-creating it takes the southbound's value away as surely as a
//     delete does (see obtainedDue).
//   - derived (adv5 fuzz seed 120215, same flags, reduced): b/2 = v@1| is
//     the southbound's own, and so is its derived d/1, read as v|r/2,
//     taken over with w@1|, a re-create that takes d/1 away with it: the
//     values that leave with an OBTAINED base taken over (see leavingWith)
//     are judged by their own values in the southbound too.
func TestAdv13ObtainedTakenAwayByARecreateGoesBeforeWhatItDependsOn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flags    []*bool
		sb       [][2]string // the southbound's own values, set before the resync
		obtained string      // the value the resync must read as OBTAINED
		takeover string      // b/2's request in the transaction that deletes r/2
	}{
		{name: "own", flags: []*bool{fzRecreateB},
			sb: [][2]string{{"b/2", "w|r/2"}}, obtained: "b/2", takeover: "v@1|"},
		{name: "derived", flags: []*bool{fzRecreateB, fzDerivedDeps},
			sb: [][2]string{{"b/2", "v@1|"}, {"d/1", "v|r/2"}}, obtained: "d/1", takeover: "w@1|"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withFzFlags(t, tc.flags...)
			x := newAdv6Script(t)
			ctx := context.Background()
			if _, err := x.nb("r/2", "v|").Commit(ctx); err != nil {
				t.Fatal(err)
			}
			for _, kv := range tc.sb {
				x.sb.Set(kv[0], kv[1], true)
			}
			if _, err := x.nb("r/2", "v|").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if st := x.s.GetValueStatus(tc.obtained); st.State != kvscheduler.Obtained {
				t.Fatalf("%s is %s after the resync, want OBTAINED", tc.obtained, st.State)
			}
			before := x.sb.Values()
			x.sb.ResetOps()
			if _, err := x.nb("r/2", nil, "b/2", tc.takeover).Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
				t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
			}
		})
	}
}
