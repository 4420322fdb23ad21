package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv31InvalidBaseLeavesNoDerivedValueConfigured is a shape of adv5
// fuzz seed 16110856 (-fzconf), reduced by hand: b/1 = w@1@2| derives d/1
// and d/2 (the d descriptor reads its own values); d/2 is removed behind
// the scheduler's back, b/1's request becomes bad| (INVALID; the revert
// keeps the old value), then b/1 is removed by hand too. A full resync
// finds b/1 and d/2 gone and leaves b/1 INVALID, not created. Before the
// fix, d/2 stayed CONFIGURED (base b/1) after two such resyncs, though
// the southbound holds no d/2 and nothing derives it ("d/2: southbound
// holds nothing, scheduler reports it CONFIGURED (base \"b/1\")"). (d/1,
// which the southbound still holds as a stray value, is left as before.)
func TestAdv31InvalidBaseLeavesNoDerivedValueConfigured(t *testing.T) {
	withFzFlags(t, fzInvalid, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w@1@2|")
	sb.Remove("d/2")
	if _, err := s.StartNBTransaction().SetValue("b/1", "bad|").WithRevert().Commit(context.Background()); err == nil {
		t.Fatal("b/1 = bad| did not fail")
	}
	sb.Remove("b/1")
	for i := 0; i < 2; i++ {
		sb.ResetOps()
		_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/1", "bad|").Commit(context.Background())
		if err == nil {
			t.Fatalf("full resync #%d: b/1 = bad| did not fail (ops %v)", i, sb.OpStrings())
		}
	}
	wantState(t, s, "b/1", kvscheduler.Invalid)
	if _, held := sb.Values()["d/2"]; held {
		t.Fatalf("d/2 is held: %v", sb.Values())
	}
	if st := s.GetValueStatus("d/2"); st.State != kvscheduler.NonExistent {
		t.Errorf("d/2 is %s (base %q) under an INVALID b/1, with no d/2 in the southbound", st.State, st.BaseKey)
	}
	advWantAgree(t, s, sb, "after the full resyncs", "b/", "d/")
}
