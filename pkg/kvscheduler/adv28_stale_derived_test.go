package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv28FullResyncDropsADerivedValueTheRecreatedBaseNoLongerDerives is
// adv5 fuzz seed 13222693 (-fzorder -fzrevertall -fzcancel -fzcancelall
// -fzrb -fzdd: "settled: r/2 held (CONFIGURED) with unmet d/1") reduced:
// b/2 = v@1@2| derives d/1 and d/2; b/2 and d/1 are removed behind the
// scheduler's back (d/2 stays). A full resync wanting b/2 = w@2|, which
// derives d/2 only, creates b/2 and updates d/2, and reports d/1
// CONFIGURED, derived from b/2, while the southbound holds no d/1 and
// nothing derives it: the statuses differ from the southbound, and stay
// so after a second full resync. (With b/2 left in place, or with a
// plain transaction, d/1 is NONEXISTENT.) In the seed, r/2 = v|d/1,a/3
// was then created by a clean full resync though d/1 is absent and a/3
// PENDING.
func TestAdv28FullResyncDropsADerivedValueTheRecreatedBaseNoLongerDerives(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "b/2", "v@1@2|"); err != nil {
		t.Fatal(err)
	}
	h.sb.Remove("b/2")
	h.sb.Remove("d/1")
	for i := 0; i < 2; i++ {
		h.sb.ResetOps()
		_, err := h.s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/2", "w@2|").Commit(context.Background())
		if err != nil {
			t.Fatalf("full resync #%d: %v (ops %v)", i, err, h.sb.OpStrings())
		}
		if _, held := h.sb.Values()["d/1"]; held {
			t.Fatalf("full resync #%d: d/1 is held (ops %v)", i, h.sb.OpStrings())
		}
		if st := h.s.GetValueStatus("d/1"); st.State != kvscheduler.NonExistent {
			t.Errorf("after full resync #%d: d/1 is %s (base %q), which b/2 = w@2| does not derive and the southbound does not hold (ops %v)", i, st.State, st.BaseKey, h.sb.OpStrings())
		}
	}
	advWantAgree(t, h.s, h.sb, "after the full resyncs", "b/", "d/")
}
