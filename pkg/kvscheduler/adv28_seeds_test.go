package kvscheduler_test

import "testing"

// TestAdv28DeleteOrderSeed13001309 pins adv5 fuzz seed 13001309 (-fzorder
// -fzcorder -fzrevertall -fzrb -fzdd): "a/1 deleted before a/2 (v|~a/1),
// which depends on it and is deleted later in the same step", the shape of
// TestAdv28OrderedDependentWhosePostponedUpdateGoesLeavesBeforeTheCascade.
func TestAdv28DeleteOrderSeed13001309(t *testing.T) {
	adv15Seed(t, 13001309, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzRecreateB, fzDerivedDeps})
}

// TestAdv28SettledSeed13222693 pins adv5 fuzz seed 13222693 (-fzorder
// -fzrevertall -fzcancel -fzcancelall -fzrb -fzdd; 1 of 50,000 from
// 13200000), not reduced: after the settle's two clean full resyncs r/2 =
// v|d/1,a/3 is held and reported CONFIGURED while the scheduler itself
// reports its Requires dependency d/1 unmet ("settled: r/2 held
// (CONFIGURED) with unmet d/1"); the second settle resync's only operation
// is "create r/2", the first's "create r/2, delete r/2, delete a/3".
func TestAdv28SettledSeed13222693(t *testing.T) {
	adv15Seed(t, 13222693, []*bool{fzOrder, fzRevertAll, fzCancelF, fzCancelAll, fzRecreateB, fzDerivedDeps})
}

// TestAdv28DeleteOrderSeed13646428 pins adv5 fuzz seed 13646428 (-fzorder
// -fzcorder -fzrevertall -fzprops -fzrb -fzdd): "b/1 deleted before r/2
// (v|~b/1,~a/3), which depends on it and is deleted later in the same
// step", the shape of
// TestAdv28DependentTakenDownEarlyGoesAfterItsOwnDueDependent.
func TestAdv28DeleteOrderSeed13646428(t *testing.T) {
	adv15Seed(t, 13646428, []*bool{fzOrder, fzCreateOrder, fzRevertAll, fzProps, fzRecreateB, fzDerivedDeps})
}

// TestAdv28DeleteOrderSeed13104265 pins adv5 fuzz seed 13104265 (-fzorder
// -fzcorder -fzrevertall): "d/1 deleted before a/3 (w|~d/1,b/2), which
// depends on it and is deleted later in the same step", the shape of
// TestAdv28UndoOfABaseGoesAfterTheDependentOfADerivedValueItReadBack.
func TestAdv28DeleteOrderSeed13104265(t *testing.T) {
	adv15Seed(t, 13104265, []*bool{fzOrder, fzCreateOrder, fzRevertAll})
}
