package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv33FailedBaseDeleteLeavesNoOrphanConfigured is adv5 fuzz seed
// 16110856 (set B with -fzconf) reduced: b/1 = w@1@2| derives d/1 and
// d/2 (the d descriptor reads its own values); d/2 is removed behind the
// scheduler's back, b/1's request becomes bad| (INVALID; the revert keeps
// the old value), then b/1 is removed by hand too. The first full resync's
// read of b fails, so the scheduler still believes b/1 held and its delete
// is not applied (FAILED). That failed delete unlisted d/2 from b/1 (it
// is not held) but left it wanted: an orphan that no later base-side drop
// reaches. Before the fix, after two clean full resyncs d/2 was still
// reported CONFIGURED (base b/1) with no d/2 in the southbound.
func TestAdv33FailedBaseDeleteLeavesNoOrphanConfigured(t *testing.T) {
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
	sb.FailNext("retrieve", "b", errors.New("injected read"))
	for i := 0; i < 3; i++ {
		sb.ResetOps()
		_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/1", "bad|").Commit(context.Background())
		if err == nil {
			t.Fatalf("full resync #%d: b/1 = bad| did not fail (ops %v)", i, sb.OpStrings())
		}
		t.Logf("full resync #%d: %v; ops %v", i, err, sb.OpStrings())
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
