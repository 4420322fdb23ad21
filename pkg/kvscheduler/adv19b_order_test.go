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

// TestAdv19BDeleteOrderWhenTheNewDerivedProviderWaits is adv5 fuzz seed
// 1206712 (TestAdv18FailedDerivedDeleteOrderSeed1206712) reduced; the
// drift and the failed delete of the seed do not matter. b/1 = w@2|
// derives d/2; a/1 = w|~b/1; a/2 = w|d/*,~a/1 Requires any d/ key and is
// ordered after a/1. One transaction deletes a/1 and re-creates b/1 as
// w@1|~b/2: d/2 goes, and the new d/1 = dv-w@1|~b/2 waits (PENDING) for
// b/2, which nothing provides, so the Requires cascade of b/1's re-create
// takes a/2 away in the same step, and a/2 must go before a/1. Fixed by
// h25c (leavingtxn.go); before, a/1 went first ("a/1 deleted before a/2 (w|d/*,~a/1), which depends on it
// and is deleted later in the same step"; ops delete a/1, delete a/2,
// delete d/2, delete b/1, create b/1). Traced: at a/1's delete,
// cascadeLater(a/2) asks onlyProviders for d/*, and laterProvides counts
// d/1, which b/1's request derives, as a provider to come, without
// asking whether d/1 itself can be created in the step (its own
// dependencies, here ~b/2, which gates d/1's creation although it is
// ordering-only): the prediction of leaving.go (h25a's rewrite).
func TestAdv19BDeleteOrderWhenTheNewDerivedProviderWaits(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w@2|", "a/1", "w|~b/1", "a/2", "w|d/*,~a/1")
	wantState(t, s, "a/2", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("a/1", nil).SetValue("b/1", "w@1|~b/2").Commit(context.Background())
	ops := sb.Ops(false)
	wantState(t, s, "a/2", kvscheduler.Pending)
	wantState(t, s, "d/1", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/")
}
