package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv20ProviderThatALaterCascadeTakesAwaySeed2108035 is adv5 fuzz
// seed 2108035 (set B with -fzdheld -fzrec -fzcancel) reduced. b/2 = w@1|
// derives d/1 (and p/1); a/1 = v|r/2,~d/1 Requires r/2, which the
// southbound owns (drift), and is ordered after d/1. One transaction
// re-creates b/2 as w@1|a/* (its only a/ provider is a/1) and takes r/2
// over as v|p/2, which nothing provides: r/2 goes, and its cascade takes
// a/1 away, so b/2's new value (and its d/1) goes in the same step too,
// and a/1 must go before d/1. Fixed by h25c (requestTakesAway asks
// valueGoes of a takeover too); before, the predictions counted a/1 as a
// provider that stays for b/2's new value (mayBeMet does not ask whether
// a later request's cascade takes it away; requestTakesAway does not
// judge r/2's request, r/2 being the southbound's: surelyGoes), so b/2
// is re-created with d/1, and then the cascade deletes d/1 before a/1
// ("d/1 deleted before a/1 (v|r/2,~d/1), which depends on it and is
// deleted later in the same step"; ops delete d/1, delete b/2, create
// b/2, create d/1, delete d/1, delete b/2, delete a/1, delete r/2). With
// r/2 set by the northbound instead, it passed before the fix too.
func TestAdv20ProviderThatALaterCascadeTakesAwaySeed2108035(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzProps, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/2", "w@1|", "a/1", "v|r/2,~d/1")
	sb.Set("r/2", "drift|", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
		t.Fatalf("downstream resync: %v", err)
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "d/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/2", "w@1|a/*").SetValue("r/2", "v|p/2").Commit(context.Background())
	ops := sb.Ops(false)
	wantState(t, s, "a/1", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
}

// TestAdv20DeleteOrderSeed2108035 pins adv5 fuzz seed 2108035 itself
// (set B with -fzdheld -fzrec -fzcancel; reduced:
// TestAdv20ProviderThatALaterCascadeTakesAwaySeed2108035).
func TestAdv20DeleteOrderSeed2108035(t *testing.T) {
	msg, log := fzRunWith(2108035, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder, fzDHeld, fzRec, fzCancelF})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv20DerivedProviderQuestionEndsSeed309736 pins adv5 fuzz seed
// 309736 of set A: with derivedMayCome's guard of asked keys passed down
// only its own calls, the predictions asked each other in a loop
// (derivedMayCome -> mayProvide -> valueGoes -> mayBeMet -> laterProvides
// -> derivedMayCome, each mayProvide with a new seen set) until the stack
// overflowed ("fatal error: stack overflow", the whole test binary
// stopped); the walker now holds the keys asked for the whole question.
func TestAdv20DerivedProviderQuestionEndsSeed309736(t *testing.T) {
	adv15Seed(t, 309736, adv15SetA)
}
