package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// withFzFlags sets the adv5 fuzz flags fs for the test, as the fuzz run
// with them does.
func withFzFlags(t *testing.T, fs ...*bool) {
	t.Helper()
	for _, f := range fs {
		old := *f
		*f = true
		t.Cleanup(func() { *f = old })
	}
}

// TestAdv12RecreatedDependentOfACascadedValueGoesFirst is adv5 fuzz seeds
// 17627 and 24739 (-fzretry -fzamb -fznotifyall -fzdd -fzview -fzrb
// -fzorder) reduced: a/1 = w|d/* Requires any d/ key, which only b/1
// derives; r/2 = w|~a/1 is ordered after a/1. One transaction takes b/1
// away (deletes it, or re-creates it as a value deriving nothing) and
// re-creates r/2: the Requires cascade of b/1's derived values takes a/1
// down (into PENDING), and r/2's re-create deletes r/2, which must go
// before a/1.
func TestAdv12RecreatedDependentOfACascadedValueGoesFirst(t *testing.T) {
	for name, b1 := range map[string]any{"deleted": nil, "recreated": "v|"} {
		t.Run(name, func(t *testing.T) {
			withFzFlags(t, fzRecreateB)
			x := newAdv6Script(t)
			ctx := context.Background()
			if _, err := x.nb("b/1", "w@1@2|", "a/1", "w|d/*", "r/2", "w|~a/1").Commit(ctx); err != nil {
				t.Fatal(err)
			}
			before := x.sb.Values()
			x.sb.ResetOps()
			if _, err := x.nb("b/1", b1, "r/2", "v|").Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
				t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
			}
			wantState(t, x.s, "a/1", kvscheduler.Pending)
			wantState(t, x.s, "r/2", kvscheduler.Configured)
		})
	}
}

// TestAdv12ObtainedDerivedValueOfARecreatedBaseGoesBeforeWhatItNeeds is
// adv5 fuzz seed 25172 (-fzretry -fzamb -fznotifyall -fzdd -fzview -fzrb
// -fzorder) reduced: the southbound holds d/1 = v|r/2 as its own (OBTAINED),
// so b/1 = v@1|, which derives d/1, is INVALID. Drift then sets b/1 =
// w@1| (deriving d/1 too) and r/2 = w|, which nothing wants. A resync
// reads both: it deletes r/2 and re-creates b/1, whose delete takes d/1
// with it. d/1's value in the southbound Requires r/2: d/1 must go first.
func TestAdv12ObtainedDerivedValueOfARecreatedBaseGoesBeforeWhatItNeeds(t *testing.T) {
	withFzFlags(t, fzRecreateB, fzDerivedDeps)
	x := newAdv6Script(t)
	ctx := context.Background()
	x.sb.Set("d/1", "v|r/2", false)
	if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("b/1", "v@1|").Commit(ctx); err == nil {
		t.Fatal("b/1 = v@1| derives d/1, which the southbound holds: want INVALID")
	}
	x.sb.Set("b/1", "w@1|", false)
	x.sb.Set("r/2", "w|", false)
	before := x.sb.Values()
	x.sb.ResetOps()
	_, _ = x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}

// TestAdv12ObtainedValueReCreatedOnTakeoverGoesBeforeWhatItNeeds is adv5
// fuzz seed 1265 (-fzorder) reduced: the southbound holds r/2 = w|r/1 as
// its own (OBTAINED), r/1 = v| is requested. One transaction re-creates
// r/1 (r/ values change by re-create) and takes r/2 over as w|, which its
// re-create applies: its delete takes the southbound's r/2, which
// Requires r/1, away, and must come before r/1's.
func TestAdv12ObtainedValueReCreatedOnTakeoverGoesBeforeWhatItNeeds(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	x.sb.Set("r/2", "w|r/1", true)
	if _, err := x.nb("r/1", "v|").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, x.s, "r/2", kvscheduler.Obtained)
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("r/1", "w|", "r/2", "w|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
}
