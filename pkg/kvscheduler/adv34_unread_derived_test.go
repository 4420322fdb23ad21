package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestAdv34UnreadDerivedValueStaysConfiguredUnderAPendingBase is adv5 fuzz
// seed 17145181 (`-fzretry -fzamb -fzdd -fzview -fzconf -fzrb -fzrd
// -fzrevertall -fzcancel`) reduced: a settled status lie that h25r's
// forgetUnlisted does not reach. b/1 = v@1@2| derives d/1 and d/2; d/2 is
// removed by hand; r/2 = v|d/2 is created on the belief that d/2 is
// there. A transaction with revert and retry re-creates b/1 as
// w@1@2|b/2 (b/2 absent) and changes r/2 to w|b/2, while the read of d
// fails: d/2's delete fails ("does not exist"), so b/1's delete is
// refused and the undos are not applied. The southbound then gets b/1 =
// w@1|~b/2 (owned) by hand, and full resyncs delete b/1 and leave it
// PENDING. d/2 stays CONFIGURED with base b/1, though the southbound holds
// no d/2 and b/1 waits.
func TestAdv34UnreadDerivedValueStaysConfiguredUnderAPendingBase(t *testing.T) {
	withFzFlags(t, fzRecreateB, fzRecreateD, fzDerivedDeps)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	retry := kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}
	commit := func(name string, txn *kvscheduler.Txn) {
		t.Helper()
		sb.ResetOps()
		_, err := txn.Commit(context.Background())
		t.Logf("%s: error %v, ops %v", name, err, sb.OpStrings())
	}
	mustSet(t, s, "b/1", "v@1@2|")
	sb.Remove("d/2")
	mustSet(t, s, "r/2", "v|d/2")
	sb.FailNext("retrieve", "d", errors.New("injected read"))
	clk.Step(2 * time.Second)
	commit("b/1 to w", s.StartNBTransaction().SetValue("r/2", "w|b/2").SetValue("b/1", "w@1@2|b/2").WithRevert().WithRetry(retry))
	sb.Set("b/1", "w@1|~b/2", true)
	clk.Step(time.Second)
	commit("full resync", s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("r/2", "w|b/2").SetValue("b/1", "w@1@2|b/2"))
	for i := 0; i < 2; i++ {
		commit("settle", s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("r/2", "w|b/2").SetValue("b/1", "w@1@2|b/2"))
	}
	for _, k := range []string{"b/1", "d/1", "d/2", "r/2"} {
		t.Logf("%s: %s sb=%v", k, advState(s, k), sb.Values()[k])
	}
	advOpen(t, "issue 25: d/2 stays CONFIGURED under a PENDING b/1 after a failed, unread re-create of b/1 and full resyncs")
	if _, held := sb.Values()["d/2"]; !held {
		if st := s.GetValueStatus("d/2"); st.State == kvscheduler.Configured {
			t.Errorf("d/2 is CONFIGURED (base %q) after three full resyncs, with no d/2 in the southbound", st.BaseKey)
		}
	}
	advWantAgree(t, s, sb, "after", "b/", "d/", "r/")
}
