package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv31FullResyncLeavesNoDerivedValueConfiguredUnderAPendingBase is
// the case next to TestAdv28FullResyncDropsADerivedValueTheRecreatedBaseNoLongerDerives
// where the base is not created again but waits. b/2 = v@1@2| derives d/1
// and d/2; b/2 and d/1 are removed behind the scheduler's back (d/2
// stays). A full resync wanting b/2 = v@1@2|a/9, which waits for a/9,
// deletes the stray d/2, but kept reporting d/1 CONFIGURED (base b/2)
// though the southbound holds no d/1 and its base is PENDING. Once a/9
// comes, b/2 is created with both derived values.
func TestAdv31FullResyncLeavesNoDerivedValueConfiguredUnderAPendingBase(t *testing.T) {
	h := newAdv28Harness(t, false)
	if err := h.commit(false, "b/2", "v@1@2|"); err != nil {
		t.Fatal(err)
	}
	h.sb.Remove("b/2")
	h.sb.Remove("d/1")
	h.sb.ResetOps()
	_, err := h.s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/2", "v@1@2|a/9").Commit(context.Background())
	if err != nil {
		t.Fatalf("full resync: %v (ops %v)", err, h.sb.OpStrings())
	}
	wantState(t, h.s, "b/2", kvscheduler.Pending)
	for _, k := range []string{"d/1", "d/2"} {
		if _, held := h.sb.Values()[k]; held {
			t.Fatalf("%s is held under a PENDING base (ops %v)", k, h.sb.OpStrings())
		}
		if st := h.s.GetValueStatus(k); st.State != kvscheduler.NonExistent {
			t.Errorf("%s is %s (base %q) while b/2 waits and the southbound does not hold it (ops %v)", k, st.State, st.BaseKey, h.sb.OpStrings())
		}
	}
	advWantAgree(t, h.s, h.sb, "after the full resync", "b/", "d/")
	if err := h.commit(false, "a/9", "v|"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"b/2", "d/1", "d/2"} {
		wantState(t, h.s, k, kvscheduler.Configured)
		if _, held := h.sb.Values()[k]; !held {
			t.Errorf("%s is not held once a/9 came (ops %v)", k, h.sb.OpStrings())
		}
	}
	advWantAgree(t, h.s, h.sb, "once a/9 came", "a/", "b/", "d/")
}
