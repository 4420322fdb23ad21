package kvscheduler_test

import (
	"slices"
	"testing"
)

// TestAdv30OrderedDependentWhoseUpdateNeedsWhatTheCascadeTakesGoesFirst is
// adv5 fuzz seed 13249369 (-fzorder -fzrevertall -fzcancel -fzcancelall
// -fzrb -fzdd) reduced. a/3 = v|r/2,~a/2 is ordered after a/2; r/1 =
// v|b/1,a/2 Requires a/2, which Requires b/2. One transaction re-creates
// b/2 as v|n/1 (b/ re-creates; n/1 is nowhere, so into PENDING), re-creates
// r/2 as w|a/*, and updates a/3 to v|r/1. b/2's delete takes a/2 and r/1
// down; a/3's update, applied after, Requires r/1, which is gone by then,
// so a/3 goes in the step. While a/2 goes, r/1 is still there: the update
// did not count as surely going, and a/3 went by r/2's re-create, after
// a/2, which it is ordered after (docs/kvscheduler.md, "The delete order").
// It failed so before updateCascades asked depGap of the update's new
// value with a/2, whose own cascade takes r/1, not counted as asking.
func TestAdv30OrderedDependentWhoseUpdateNeedsWhatTheCascadeTakesGoesFirst(t *testing.T) {
	h := newAdv28HarnessRB(t, false, true)
	if err := h.commit(false, "b/1", "v|", "b/2", "v|~r/1", "a/2", "v|b/2", "r/1", "v|b/1,a/2", "r/2", "v|",
		"a/3", "v|r/2,~a/2"); err != nil {
		t.Fatal(err)
	}
	before := h.sb.Values()
	h.sb.ResetOps()
	if err := h.commit(false, "a/3", "v|r/1", "r/2", "w|a/*", "b/2", "v|n/1"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "delete a/3") || !slices.Contains(ops, "delete a/2") {
		t.Fatalf("the test means a/2 and a/3 both to go: ops %v", ops)
	}
	if msg := fzCheckDeleteOrder(before, h.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, ops)
	}
}

// TestAdv30DeleteOrderSeed13249369 pins adv5 fuzz seed 13249369 (-fzorder
// -fzrevertall -fzcancel -fzcancelall -fzrb -fzdd; h25m's set C): "a/2
// deleted before a/3 (v|r/2,~a/2), which depends on it and is deleted
// later in the same step", the shape of
// TestAdv30OrderedDependentWhoseUpdateNeedsWhatTheCascadeTakesGoesFirst.
func TestAdv30DeleteOrderSeed13249369(t *testing.T) {
	adv15Seed(t, 13249369, []*bool{fzOrder, fzRevertAll, fzCancelF, fzCancelAll, fzRecreateB, fzDerivedDeps})
}

// TestAdv30DeleteOrderSeed13800822 pins adv5 fuzz seed 13800822 (-fzorder
// -fzcorder -fzrevertall -fznotifyall -fzprops -fzinv; h25m's set I): "b/2
// deleted before a/3 (v|~b/2), which depends on it and is deleted later in
// the same step", the shape of
// TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade.
func TestAdv30DeleteOrderSeed13800822(t *testing.T) {
	adv15Seed(t, 13800822, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzNotifyAll, fzProps, fzInvalid})
}

// TestAdv30DeleteOrderSeed9009857 pins adv5 fuzz seed 9009857 (-fzretry
// -fzamb -fznotifyall -fzdd -fzview -fzrb -fzorder; found by h25l's sweep
// of 20,000 from 9000000, not reduced): "a/2 deleted before a/1
// (v|d/*,~a/2), which depends on it and is deleted later in the same
// step" until updateCascades (the binary with only comesFrom still failed
// so).
func TestAdv30DeleteOrderSeed9009857(t *testing.T) {
	adv15Seed(t, 9009857, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
}
