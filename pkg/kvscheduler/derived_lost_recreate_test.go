package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestRecreatedBaseDerivesAgainTheValueItsDeleteFoundGone: b/1=w@2|r/1
// (re-created on update) holds d/2; the southbound loses d/2 behind the
// scheduler's back. b/1 is then requested with w@2|: its re-create
// deletes d/2, which fails (it does not exist), and b/1's delete waits
// for d/2; the read-back finds d/2 gone, its delete done, and b/1 is
// deleted and created again. Its create derives d/2 again. Before, d/2
// still counted as failed in the transaction, its create was skipped,
// and b/1 was CONFIGURED without it, with nothing to create it (adv5
// fuzz seed 1214 of -fzdheld -fzrb).
func TestRecreatedBaseDerivesAgainTheValueItsDeleteFoundGone(t *testing.T) {
	inv, props, rb := *fzInvalid, *fzProps, *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzInvalid, *fzProps, *fzRecreateB = inv, props, rb })
	x := newAdv6Script(t)
	*fzProps, *fzInvalid = false, false
	ctx := context.Background()
	if _, err := x.nb("r/1", "v|", "b/1", "w@2|r/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Remove("d/2")
	x.sb.ResetOps()
	_, err := x.nb("b/1", "w@2|").Commit(ctx)
	st, d2 := x.s.GetValueStatus("b/1"), x.s.GetValueStatus("d/2")
	if v := x.sb.Values()["d/2"]; st.State != kvscheduler.Configured || v != "dv-w@2" || d2.BaseKey != "b/1" {
		t.Errorf("b/1 %s (w@2|), the southbound holds d/2 = %v (d/2 %s, base %q; ops %v; commit error %v)",
			st.State, v, d2.State, d2.BaseKey, x.sb.OpStrings(), err)
	}
}
