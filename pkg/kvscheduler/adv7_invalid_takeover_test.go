package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv7InvalidOldBaseDeletesTheKeyTheNewBaseTookInTheSameTransaction:
// the southbound holds b/1 (w@2|, which derives d/2) without d/2, made by
// hand; the northbound's create of b/1 (w@2|) fails (it exists), and b/1
// is FAILED, d/2 NONEXISTENT. One transaction then requests b/1 with an
// invalid value (bad@1|, which no longer derives d/2) and b/2 with one
// that derives d/2 (v@1@2|): b/2 is created with d/2. b/1, INVALID, is
// deleted as held, and its delete takes d/2, which b/2 just created, with
// it: b/2 stays CONFIGURED without d/2 (adv5 fuzz seed 2083 of -fzdheld
// -fzretry -fzdd -fzprops -fzinv). Without the failed create first
// (b/1 created by the scheduler) the same transaction keeps b/2's d/2.
func TestAdv7InvalidOldBaseDeletesTheKeyTheNewBaseTookInTheSameTransaction(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	x.sb.Set("b/1", "w@2|", false)
	_, _ = x.nb("b/1", "w@2|").Commit(ctx)
	if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Failed {
		t.Fatalf("b/1's create on the southbound's b/1 did not fail: %s", st.State)
	}
	x.sb.ResetOps()
	_, err := x.nb("b/1", "bad@1|", "b/2", "v@1@2|").Commit(ctx)
	st := x.s.GetValueStatus("b/2")
	d2 := x.s.GetValueStatus("d/2")
	if v := x.sb.Values()["d/2"]; st.State == kvscheduler.Configured && v != "dv-v@1@2" {
		t.Errorf("b/2 CONFIGURED (v@1@2|) but the southbound holds d/2 = %v (d/2 %s, base %q; ops %v; commit error %v)", v, d2.State, d2.BaseKey, x.sb.OpStrings(), err)
	}
}
