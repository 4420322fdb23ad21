package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A stopped transaction's record and error name "the keys not applied"
// (docs/kvscheduler.md): each key once. r/1 = w| and b/2 = v@2|r/1
// (deriving d/2, Requires r/1) are held; r/1 drifts to v| in the
// southbound; a downstream resync re-creates r/1, which takes b/2 down
// first (d/2, then b/2), and its context ends once d/2's delete ran. The
// record's NotApplied and the error name b/2 twice ("stopped (context
// canceled) before b/2, b/2"); found by the adv5 fuzz's -fzrec check
// (seed 102577 of -fzcancel -fzcancelall -fzretry -fzdd -fzrb -fzview:
// "NotApplied [b/2 b/1 r/2 b/2]"), reduced.
func TestAdv9StoppedResyncNamesAKeyNotAppliedTwice(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/1", "w|", "b/2", "v@2|r/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("r/1", "v|", false) // drift
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("d/2", cancel) // the caller gives up once d/2's delete ran
	_, stopped := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(cctx)
	x.fc.disarm()
	// Wait for the stopped transaction's end. This empty transaction
	// fails too ("DELETE r/1: not deleted: b/2, which depends on it, still
	// exists"): TestAdv9StoppedCascadeLeavesADependentWithoutItsDerivedValue.
	_, _ = x.s.StartNBTransaction().Commit(ctx)
	var rec *kvscheduler.TxnRecord
	for _, r := range x.s.TransactionHistory(timeZero, timeZero) {
		if r.SeqNum == 1 {
			rec = r
		}
	}
	if rec == nil {
		t.Fatalf("no record of the stopped resync (stopped commit: %v)", stopped)
	}
	if msg := fzCheckNotApplied(rec); msg != "" {
		t.Fatalf("%s (stopped commit: %v; ops %v)", msg, stopped, x.sb.OpStrings())
	}
}
