package kvscheduler_test

import (
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv11DeleteOrderSeed6245 pins adv5 fuzz seed 6245 of -fzretry
// -fzamb -fznotifyall -fzdd -fzview -fzrb -fzorder (not reduced).
// Triaged as the checker's: a/1 = v|b/2 and b/2 = w|a/1 are a cycle; drift
// then set a/1 to v| in the southbound, unread; the last transaction
// deletes b/2 and, with it, a/1 (a/1 first). The checker judged the cycle
// by a/1's drifted value, which needs nothing, and reported "a/1 deleted
// before b/2 (w|a/1), which depends on it and is deleted later in the
// same step". The scheduler, which never read the drift, deletes members
// of the cycle it knows together; the cycle is now judged by what the
// scheduler last knew of an unread key too (see fzReaches).
func TestAdv11DeleteOrderSeed6245(t *testing.T) {
	msg, log := fzRunWith(6245, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv11DeleteOrderCheckJudgesACycleByTheValueKnown checks the
// checker: a cycle counts by the value the scheduler last knew of a key
// whose drift it has not read (seed 6245), and a value it knew to need
// nothing is no member of a cycle.
func TestAdv11DeleteOrderCheckJudgesACycleByTheValueKnown(t *testing.T) {
	before := map[string]any{"a/1": "v|", "b/2": "w|a/1"} // a/1 drifted from v|b/2
	ops := []kvtest.Op{{Operation: "delete", Key: "a/1"}, {Operation: "delete", Key: "b/2"}}
	if msg := fzCheckDeleteOrderSeen(before, ops, map[string]any{"a/1": "v|b/2"}); msg != "" {
		t.Errorf("a cycle the scheduler knew: %s", msg)
	}
	if msg := fzCheckDeleteOrderSeen(before, ops, map[string]any{"a/1": "v|"}); msg == "" {
		t.Error("a/1, known to need nothing, deleted before b/2 (w|a/1): not reported")
	}
	if msg := fzCheckDeleteOrderSeen(before, ops, nil); msg == "" {
		t.Error("no drift, a/1 = v| deleted before b/2 (w|a/1): not reported")
	}
}

// TestAdv11DeleteOrderSeeds pins adv5 fuzz seeds of -fzretry -fzdd
// -fzprops -fzview -fzinv -fzrb -fzorder (not reduced): 100096 (b/1
// deleted before r/2 = v|~b/1,~a/1; fixed with seed 7586, see
// TestAdv11ObtainedDependentTakenOverGoesBeforeWhatItDependsOn), 102725
// (TestAdv11DependentOfProvidersAllLeavingGoesFirst), 102762 and 102854
// (a full resync deleted a stray value before re-creating a value read as
// ordered after it, see
// TestAdv11DependentBySouthboundValueGoesBeforeAStrayValue).
func TestAdv11DeleteOrderSeeds(t *testing.T) {
	for _, seed := range []int64{100096, 102725, 102762, 102854} {
		msg, log := fzRunWith(seed, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder})
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", seed, msg, strings.Join(log, "\n"))
		}
	}
}

// TestAdv11DeleteOrderSeed7586 pins adv5 fuzz seed 7586 of -fzretry -fzamb
// -fznotifyall -fzdd -fzview -fzrb -fzorder (not reduced; see
// TestAdv11ObtainedDependentTakenOverGoesBeforeWhatItDependsOn).
func TestAdv11DeleteOrderSeed7586(t *testing.T) {
	msg, log := fzRunWith(7586, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv11DeleteOrderCheckFollowsDerivedValuesGone checks the checker: a
// value needing a property (never in the southbound) or a derived value
// deleted already needs the base deriving it, so that base, ordered after
// the value, is in a cycle with it (adv5 fuzz seeds 115269 and 120431,
// which reported "a/1 deleted before b/1 (v@1@2|~a/1,n/1)" and "r/1
// deleted before b/1 (w@1@2|~r/1)"); a value needing neither is not.
func TestAdv11DeleteOrderCheckFollowsDerivedValuesGone(t *testing.T) {
	ops := []kvtest.Op{{Operation: "delete", Key: "d/2"}, {Operation: "delete", Key: "a/1"}, {Operation: "delete", Key: "b/1"}}
	for _, a1 := range []string{"w|p/1", "w|d/2", "w|p/*"} {
		before := map[string]any{"a/1": a1, "b/1": "v@1@2|~a/1", "d/2": "dv-v@1@2|"}
		if msg := fzCheckDeleteOrder(before, ops); msg != "" {
			t.Errorf("a/1 = %s: %s", a1, msg)
		}
	}
	before := map[string]any{"a/1": "w|", "b/1": "v@1@2|~a/1", "d/2": "dv-v@1@2|"}
	if msg := fzCheckDeleteOrder(before, ops); msg == "" {
		t.Error("a/1 = w| deleted before b/1 (v@1@2|~a/1): not reported")
	}
}

// TestAdv11DeleteOrderPropertySeeds pins adv5 fuzz seeds 115269 and
// 120431 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder (not
// reduced), triaged as the checker's (see
// TestAdv11DeleteOrderCheckFollowsDerivedValuesGone).
func TestAdv11DeleteOrderPropertySeeds(t *testing.T) {
	for _, seed := range []int64{115269, 120431} {
		msg, log := fzRunWith(seed, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder})
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", seed, msg, strings.Join(log, "\n"))
		}
	}
}

// TestAdv11DeleteOrderSeed12431 pins adv5 fuzz seed 12431 of -fzretry
// -fzamb -fznotifyall -fzdd -fzview -fzrb -fzorder (not reduced), triaged
// as the checker's: the step's drift set r/1 = w|d/2 to drift|, and its
// full resync read it and re-created r/1 after deleting d/2; the checker
// held the southbound as it was before the drift and reported "d/2
// deleted before r/1 (w|d/2), which depends on it and is deleted later in
// the same step". It now starts from the southbound after the drift.
func TestAdv11DeleteOrderSeed12431(t *testing.T) {
	msg, log := fzRunWith(12431, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}
