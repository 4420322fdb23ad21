package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv21ObtainedTakenOverByAnInvalidValueSeed2332169 is adv5 fuzz seed
// 2332169 (set B with -fzdheld -fzrec -fzcancel, found by h25f's sweep of
// 30,000 seeds from 2320000; it fails at 9dc00dd too) reduced. a/3 =
// w|r/1,d/1 is the southbound's own (read by a downstream resync) and
// needs d/1, which b/2 = w@1@2| derives. One transaction re-creates b/2
// as w@2|a/3 (its delete takes d/1 and d/2 away first) and takes a/3 over
// with an invalid value, which deletes the southbound's a/3 (INVALID):
// a/3 must be deleted before d/1. obtainedDue applies a/3's request inside
// d/1's delete, but a/3's delete then waited for b/2's delete under way
// (dependentUnderWay), b/2 counting as a dependent of a/3 by its new
// value, although the value the southbound holds, w@1@2|, needs nothing.
// Without b/2's new value needing a/3, a/3 goes first.
func TestAdv21ObtainedTakenOverByAnInvalidValueSeed2332169(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzInvalid, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/2", "w@1@2|", "r/1", "w|")
	sb.Set("a/3", "w|r/1,d/1", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
		t.Fatalf("downstream resync: %v", err)
	}
	wantState(t, s, "a/3", kvscheduler.Obtained)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/2", "w@2|a/3").SetValue("a/3", "bad|").Commit(context.Background())
	if err == nil {
		t.Fatalf("a/3's invalid value was not reported (ops %v)", sb.OpStrings())
	}
	wantState(t, s, "a/3", kvscheduler.Invalid)
	wantState(t, s, "b/2", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
}

// TestAdv21DeleteOrderSeed2332169 pins adv5 fuzz seed 2332169 (reduced:
// TestAdv21ObtainedTakenOverByAnInvalidValueSeed2332169).
func TestAdv21DeleteOrderSeed2332169(t *testing.T) {
	msg, log := fzRunWith(2332169, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder, fzDHeld, fzRec, fzCancelF})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
