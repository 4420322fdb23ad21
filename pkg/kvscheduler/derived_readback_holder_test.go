package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestReadBackLeavesATakenKeyToTheBaseWhoseValueTheSouthboundHolds: b/1
// (v@2|) holds d/2, and the southbound holds its own d/1. One transaction
// requests b/2=v@1@2|, b/1=w@1|d/1 (which no longer derives d/2) and a/1:
// b/2 takes d/2 over, and its update of d/2 goes through; its create of d/1
// fails (the southbound's own), b/1 goes PENDING (it Requires d/1) and its
// delete fails. The read-back of both bases finds that b/1's value there
// (v@2|) still derives d/2, but the southbound holds b/2's d/2, as the walk
// wrote it: d/2 stays b/2's. The next request of b/1 (INVALID: d/1 is the
// southbound's own) deletes b/1 without d/2. Before, the read-back gave
// d/2 to b/1, the last base read, and b/1's delete took b/2's d/2 with it
// (adv5 fuzz seed 2149 of -fzdheld -fznoownedr -fzretry -fzdd).
func TestReadBackLeavesATakenKeyToTheBaseWhoseValueTheSouthboundHolds(t *testing.T) {
	x := newAdv6Script(t)
	props := *fzProps
	*fzProps = false
	t.Cleanup(func() { *fzProps = props })
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("d/1", "v|", true)
	x.sb.FailNext("delete", "b/1", errors.New("injected"))
	_, err := x.nb("b/2", "v@1@2|", "b/1", "w@1|d/1", "a/1", "w|~b/2,~b/1").Commit(ctx)
	if d2 := x.s.GetValueStatus("d/2"); d2.BaseKey != "b/2" || x.sb.Values()["d/2"] != "dv-v@1@2" {
		t.Errorf("after b/2 took d/2 over (commit error %v), d/2 is %s with base %q, the southbound holding %v",
			err, d2.State, d2.BaseKey, x.sb.Values()["d/2"])
	}
	x.sb.ResetOps()
	_, err = x.nb("b/1", "v@1|", "a/1", nil).Commit(ctx)
	d2 := x.s.GetValueStatus("d/2")
	if st := x.s.GetValueStatus("b/2"); st.State == kvscheduler.Configured && x.sb.Values()["d/2"] != "dv-v@1@2" {
		t.Errorf("b/2 CONFIGURED (v@1@2|) but the southbound holds d/2 = %v (d/2 %s, base %q; ops %v; commit error %v)",
			x.sb.Values()["d/2"], d2.State, d2.BaseKey, x.sb.OpStrings(), err)
	}
	if st := x.s.GetValueStatus("b/2"); st.State != kvscheduler.Configured || d2.BaseKey != "b/2" {
		t.Errorf("b/2 is %s (%v), d/2 %s with base %q", st.State, st.Error, d2.State, d2.BaseKey)
	}
}
