package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A value whose Requires dependency goes away is deleted with it, its
// derived values first (the cascade). When the context of the Commit
// ends in the middle of that cascade, "the next transaction, whatever it
// sets, checks again what the stopped one reached but left undone"
// (docs/kvscheduler.md). a/1 = w| is held and b/2 = w@2|a/1 (deriving
// d/2) requires it; a transaction requests a/1 = v|d/1 (d/1 missing, so
// a/1 must go, and b/2 before it) and its context ends once d/2's delete
// ran, before b/2's. The next transaction requests nothing (then one
// requests an unrelated a/2). What the resume does: it applies a/1's
// request again but not the rest of b/2's delete, so the transaction
// that requested nothing fails ("DELETE a/1: not deleted: b/2, which
// depends on it, still exists"), a/1 is FAILED and still held as w|, and
// b/2 is reported CONFIGURED while the southbound holds it without its
// derived d/2, through every later transaction until a resync.
func TestAdv9StoppedCascadeLeavesADependentWithoutItsDerivedValue(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("a/1", "w|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("b/2", "w@2|a/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("d/2", cancel) // the caller gives up once d/2's delete ran
	_, stopped := x.nb("a/1", "v|d/1").Commit(cctx)
	x.fc.disarm()
	_, next := x.s.StartNBTransaction().Commit(ctx) // requests nothing; waits for the stopped one
	_, later := x.nb("a/2", "v|").Commit(ctx)
	var bad []string
	if next != nil {
		bad = append(bad, fmt.Sprintf("the next transaction, which requested nothing, failed: %v", next))
	}
	if later != nil {
		bad = append(bad, fmt.Sprintf("a later transaction failed: %v", later))
	}
	got := x.sb.Values()
	if st := x.s.GetValueStatus("b/2"); st.State == kvscheduler.Configured && got["b/2"] != nil && got["d/2"] == nil {
		bad = append(bad, fmt.Sprintf("b/2 CONFIGURED, the southbound holding b/2 = %v without its derived d/2 (d/2 %s)", got["b/2"], advState(x.s, "d/2")))
	}
	if len(bad) > 0 {
		t.Fatalf("%v (a/1 %s; southbound %v; stopped commit: %v; ops %v)", bad, advState(x.s, "a/1"), got, stopped, x.sb.OpStrings())
	}
}
