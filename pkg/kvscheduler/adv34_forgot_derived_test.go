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

// TestAdv34RetriedBaseDeleteLeavesAHeldDerivedValueUnreported is adv5 fuzz
// seed 17126468 (`-fzretry -fzdd -fzview -fzconf -fzrb -fzrd -fzorder`)
// reduced. b/1 = w@1@2| derives d/1 and d/2; the southbound owns b/2 =
// w@2|~d/1 (made by hand), which derives d/2 too; r/2 = v|d/1,d/* depends
// on both derived values. b/1's removal, with retry, fails at r/2's
// delete, so d/1, d/2 and b/1 stay (RETRYING). b/1 is then removed by
// hand, and a downstream resync with retry, after the retry period,
// deletes r/2 and d/1 but not d/2: the southbound still holds d/2 =
// dv-w@1@2| and the scheduler reports it NONEXISTENT, with no operation
// left to remove it (a leak, and a view that differs from the
// southbound). Without the retries the same steps delete d/2.
func TestAdv34RetriedBaseDeleteLeavesAHeldDerivedValueUnreported(t *testing.T) {
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
	sb.Set("b/2", "w@2|~d/1", true)
	mustSet(t, s, "b/1", "w@1@2|")
	mustSet(t, s, "r/2", "v|d/1,d/*")
	sb.FailNext("delete", "r/2", errors.New("injected"))
	commit("b/1 removed", s.StartNBTransaction().SetValue("b/1", nil).WithRetry(retry))
	wantState(t, s, "d/2", kvscheduler.Retrying)
	sb.Remove("b/1")
	clk.Step(time.Second)
	commit("downstream resync", s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithRetry(retry))
	barrier(t, s)
	if v, held := sb.Values()["d/2"]; held {
		if st := s.GetValueStatus("d/2"); st.State == kvscheduler.NonExistent {
			t.Errorf("the southbound holds d/2 = %v, the scheduler reports it NONEXISTENT (ops of the resync %v)", v, sb.OpStrings())
		}
	}
	advWantAgree(t, s, sb, "after the downstream resync", "b/", "d/", "r/")
}
