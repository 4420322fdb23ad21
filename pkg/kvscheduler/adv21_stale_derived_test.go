package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv21StaleDerived sets b/1 = v| and b/2 = w@1@2|~b/1, whose derived
// d/1 and d/2 (dv-w@1@2|~b/1) are ordered after b/1 as well, then updates
// b/2 to w@1@2| with the update of d/2 failing: the southbound keeps d/2
// = dv-w@1@2|~b/1, still ordered after b/1, while the value wanted of
// d/2 (dv-w@1@2|) is not.
func adv21StaleDerived(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "v|", "b/2", "w@1@2|~b/1")
	sb.FailNext("update", "d/2", errors.New("injected"))
	if _, err := s.StartNBTransaction().SetValue("b/2", "w@1@2|").Commit(context.Background()); err == nil {
		t.Fatalf("the update of d/2 did not fail")
	}
	if got := sb.Values()["d/2"]; got != "dv-w@1@2|~b/1" {
		t.Fatalf("d/2 in the southbound = %v, want dv-w@1@2|~b/1", got)
	}
	return s, sb
}

// TestAdv21StaleDerivedGoesBeforeWhatItIsOrderedAfterSeed2200223 is adv5
// fuzz seed 2200223 (-fzretry -fzdd -fzprops -fzview -fzinv -fzorder
// -fzdheld -fzrec) reduced: d/2, whose failed update left in the
// southbound a value ordered after b/1, goes in the step in which b/1 is
// deleted, with its base b/2, whose update Requires b/3, which nothing
// provides (b/2 goes PENDING). d/2 must be deleted before b/1. Failed
// before h25f's fix with "b/1 deleted before d/2 (dv-w@1@2|~b/1), which
// depends on it and is deleted later in the same step (ops [delete b/1
// delete d/1 delete d/2 delete b/2])": postponeTo waits only for a
// base's update that no longer derives the key, and deleteDueDependents
// applied early only a dependent's own update that surely goes, not its
// base's (updateTakesAway).
func TestAdv21StaleDerivedGoesBeforeWhatItIsOrderedAfterSeed2200223(t *testing.T) {
	s, sb := adv21StaleDerived(t)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/1", nil).SetValue("b/2", "w@1@2|b/3").Commit(context.Background())
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	wantState(t, s, "b/2", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "b/", "d/")
}

// TestAdv21StaleDerivedOfAClashingBaseSeed2200223 is the seed's own step,
// reduced: a full resync deletes b/1, which the northbound no longer
// wants, and finds d/1 the southbound's own, so that b/2 (w@1@2|, which
// derives d/1) is INVALID for the clash and its derived values go, d/2's
// stale value, ordered after b/1, with them.
func TestAdv21StaleDerivedOfAClashingBaseSeed2200223(t *testing.T) {
	s, sb := adv21StaleDerived(t)
	sb.Set("d/1", "drift|", true)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/2", "w@1@2|").Commit(context.Background())
	if err == nil {
		t.Fatalf("the full resync did not fail (ops %v)", sb.OpStrings())
	}
	wantState(t, s, "b/2", kvscheduler.Invalid)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the full resync", "b/", "d/")
}

// TestAdv21DeleteOrderSeed2200223 pins adv5 fuzz seed 2200223 itself.
func TestAdv21DeleteOrderSeed2200223(t *testing.T) {
	msg, log := fzRunWith(2200223, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzOrder, fzDHeld, fzRec})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv21TwoStaleDerivedValuesTakeTheirBaseAwayOnce: both derived
// values of b/2 are left stale (ordered after b/1) by failed updates; b/1's
// delete meets each as a dependent, and applies b/2's update, which
// surely goes, early once: b/2 is deleted once, after d/1 and d/2, and b/1
// last.
func TestAdv21TwoStaleDerivedValuesTakeTheirBaseAwayOnce(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "v|", "b/2", "w@1@2|~b/1")
	sb.FailNext("update", "d/1", errors.New("injected"))
	sb.FailNext("update", "d/2", errors.New("injected"))
	if _, err := s.StartNBTransaction().SetValue("b/2", "w@1@2|").Commit(context.Background()); err == nil {
		t.Fatalf("the updates of d/1 and d/2 did not fail")
	}
	before := sb.Values()
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("b/1", nil).SetValue("b/2", "w@1@2|b/3").Commit(context.Background()); err != nil {
		t.Fatalf("commit: %v", err)
	}
	ops := sb.Ops(false)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	deletes := 0
	for _, o := range ops {
		if o.Key == "b/2" && o.Operation == "delete" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("b/2 deleted %d times, want once (ops %v)", deletes, sb.OpStrings())
	}
	wantState(t, s, "b/2", kvscheduler.Pending)
	advWantAgree(t, s, sb, "after the transaction", "b/", "d/")
}
