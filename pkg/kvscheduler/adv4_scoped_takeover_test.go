package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// No failure at all: b/1 = v@1 derives d/1; one transaction moves b/1 to
// v@2 (deriving d/2) and gives d/1 to b/0 = w@1, all applied. Then b/1
// drifts back to v@1 behind the scheduler's back. A downstream resync,
// full or not, repairs it (update b/1) and leaves b/0's d/1 alone. A
// downstream resync scoped to b/1, which docs/safety.md says agrees with
// an unscoped one on its keys and touches only the damage, deletes d/1
// (b/0's, CONFIGURED and wanted) before updating b/1: its read of b/1
// (v@1) lists d/1 among b/1's derived values although b/0 derives it.

func TestAdv4ScopedRepairOfAnOldBaseKeepsTheKeyItGaveAway(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	mustSet(t, s, "b/0", "w@1", "b/1", "v@2")
	want := map[string]any{"b/0": "w@1", "d/1": "w@1", "b/1": "v@2", "d/2": "v@2"}
	wantSB(t, sb, want)
	sb.Set("b/1", "v@1", false) // drift
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/1").Commit(context.Background())
	if got := sb.Values(); len(got) != len(want) || got["d/1"] != "w@1" || got["b/1"] != "v@2" {
		t.Fatalf("downstream resync scoped to b/1: Commit %v, ops %v, southbound %v, want %v (as an unscoped downstream resync leaves it); b/0 %s; d/1 %s",
			err, sb.OpStrings(), got, want, advState(s, "b/0"), advState(s, "d/1"))
	}
}
