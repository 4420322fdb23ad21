package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv6StoppedTakeoverReportsADeletedBaseConfigured: b/2 derives d/1;
// one transaction asks b/1 to derive d/1 and b/2 no longer to, and its
// context ends once b/1 is created (before b/2's request is applied). The
// key goes back to b/2 (giveBackUnapplied), and b/1, which claims it too,
// is deleted from the southbound; yet b/1's status stays CONFIGURED, with
// no error, for a value the southbound does not hold.
func TestAdv6StoppedTakeoverReportsADeletedBaseConfigured(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "v@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("b/1", cancel)
	if _, err := x.nb("b/1", "w@1|", "b/2", "v|").Commit(cctx); err == nil {
		t.Fatal("the transaction was not stopped")
	}
	// The stopped transaction's end, and a transaction after it.
	for i := 0; i < 2; i++ {
		if _, err := x.s.StartNBTransaction().Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, held := x.sb.Values()["b/1"]
	st := x.s.GetValueStatus("b/1")
	if !held && st.State == kvscheduler.Configured {
		var recs []string
		for _, r := range x.s.TransactionHistory(timeZero, timeZero)[1:] {
			recs = append(recs, r.String())
		}
		t.Errorf("b/1 reported %s (last op %s, error %v) but the southbound does not hold it (ops %v)\n%s", st.State, st.LastOp, st.Error, x.sb.OpStrings(), strings.Join(recs, "\n"))
	}
}
