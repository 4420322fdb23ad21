package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv19BUpdateIntoPendingWaitsForADerivedDependentLeaving is adv5
// fuzz seed 309962 (TestAdv18DerivedDependentOrderSeed309962) reduced:
// a/1 = v| and b/1 = v@1@2|~a/1, whose derived d/2 = dv-v@1@2|~a/1 is
// ordered after a/1. One transaction updates a/1 to v|b/2 (Requires b/2,
// which is wanted but INVALID, bad|, with withInvalid; else nothing
// provides it): a/1's old value surely goes, into PENDING; and b/1 to
// w@1|~d/1, which no longer derives d/2. d/2 leaves in the step, so it
// goes before a/1 (the delete order: dependents first), as it does when
// a/1 is deleted rather than updated. Before, a/1's update, applied
// first (by key), deleted a/1 before d/2: only a delete or a re-create
// request was applied after the request taking away what is ordered
// after it, and a wanted INVALID value counted as a provider to come.
func TestAdv19BUpdateIntoPendingWaitsForADerivedDependentLeaving(t *testing.T) {
	for _, withInvalid := range []bool{false, true} {
		withFzFlags(t, fzDerivedDeps, fzInvalid)
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		register(t, s, fzDescs(sb, &fzCancel{})...)
		if withInvalid {
			if err := set(t, s, "b/2", "bad|"); err == nil {
				t.Fatal("b/2 = bad| is invalid, Commit returned nil")
			}
			wantState(t, s, "b/2", kvscheduler.Invalid)
		}
		mustSet(t, s, "a/1", "v|")
		mustSet(t, s, "b/1", "v@1@2|~a/1")
		wantState(t, s, "d/2", kvscheduler.Configured)
		before := sb.Values()
		sb.ResetOps()
		_, err := s.StartNBTransaction().SetValue("b/1", "w@1|~d/1").SetValue("a/1", "v|b/2").Commit(context.Background())
		ops := sb.Ops(false)
		if err != nil {
			t.Errorf("b/2 INVALID %v: Commit: %v", withInvalid, err)
		}
		wantState(t, s, "a/1", kvscheduler.Pending)
		if msg := fzCheckDeleteOrder(before, ops); msg != "" {
			t.Errorf("b/2 INVALID %v: %s (ops %v)", withInvalid, msg, sb.OpStrings())
		}
		advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/")
	}
}
