package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// "A northbound removal whose delete did not run is not finished so: the
// value stays available, its dependents taken back, until it is requested
// again or a resync" (docs/safety.md); "no status says CONFIGURED ... for
// what the southbound does not hold" and a base is not CONFIGURED without
// its derived values (TestAdv8StoppedBaseUpdateLeavesTheBaseWithoutDerivedValues).
// b/2 = w@2| (deriving d/2) is held and a/1 = v|d/2 requires d/2; a
// transaction removes b/2 and its context ends once d/2's delete ran
// (a/1 taken down first), before b/2's own delete. b/2 stays held, as
// documented, but without its derived d/2: after two more transactions
// b/2 is still reported CONFIGURED while the southbound holds no d/2,
// and a/1, whose only missing dependency is the derived value of a base
// left available, stays PENDING (not taken back).
func TestAdv9StoppedBaseRemovalLeavesItAvailableWithoutItsDerivedValue(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("a/1", "v|d/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("d/2", cancel) // the caller gives up once d/2's delete ran
	_, stopped := x.nb("b/2", nil).Commit(cctx)
	x.fc.disarm()
	if _, err := x.s.StartNBTransaction().Commit(ctx); err != nil { // requests nothing; waits for the stopped one
		t.Fatal(err)
	}
	if _, err := x.nb("a/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := x.sb.Values()
	var bad []string
	if st := x.s.GetValueStatus("b/2"); st.State == kvscheduler.Configured && got["b/2"] != nil && got["d/2"] == nil {
		bad = append(bad, fmt.Sprintf("b/2 CONFIGURED, the southbound holding b/2 = %v without its derived d/2 (d/2 %s)", got["b/2"], advState(x.s, "d/2")))
	}
	if st := x.s.GetValueStatus("a/1"); got["b/2"] != nil && st.State == kvscheduler.Pending {
		bad = append(bad, fmt.Sprintf("a/1 %s while b/2, whose d/2 it requires, stays available", advState(x.s, "a/1")))
	}
	if len(bad) > 0 {
		t.Fatalf("%v (southbound %v; stopped commit: %v; ops %v)", bad, got, stopped, x.sb.OpStrings())
	}
}
