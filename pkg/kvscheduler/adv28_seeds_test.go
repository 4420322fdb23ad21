package kvscheduler_test

import "testing"

// TestAdv28DeleteOrderSeed13001309 pins adv5 fuzz seed 13001309 (-fzorder
// -fzcorder -fzrevertall -fzrb -fzdd): "a/1 deleted before a/2 (v|~a/1),
// which depends on it and is deleted later in the same step", the shape of
// TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade.
func TestAdv28DeleteOrderSeed13001309(t *testing.T) {
	advOpen(t, "issue 25: seed 13001309, a/1 goes by a cascade before a/2 = v|~a/1, whose postponed update takes it away")
	adv15Seed(t, 13001309, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzRecreateB, fzDerivedDeps})
}
