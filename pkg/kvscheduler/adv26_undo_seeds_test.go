package kvscheduler_test

import "testing"

// The revert's undo order (issue 25, h25k): adv5 fuzz seeds that failed
// the delete order in a revert at 817dd8e (before h25k's undo-order
// fixes) and pass since, pinned so that they stay fixed. Each was found
// by the 50,000-seed sweeps of h25i's report re-run before and after.

// TestAdv26DeleteOrderSeed9608317 pins seed 9608317 (-fzorder
// -fzrevertall -fzrb -fzdd -fzinv -fzamb), h25i's unreduced shape of
// TestAdv24UndoIntoPendingOfADependentOfADeletedBaseGoesFirst: before,
// "d/2 deleted before a/1 (w|~d/2), which depends on it and is deleted
// later in the same step" (a/1's undo back to a request Requiring what
// the cascade of an earlier undo takes, applied after it).
func TestAdv26DeleteOrderSeed9608317(t *testing.T) {
	adv15Seed(t, 9608317, []*bool{fzOrder, fzRevertAll, fzRecreateB, fzDerivedDeps, fzInvalid, fzAmbiguous})
}

// TestAdv26DeleteOrderSeed8015180 pins seed 8015180 (-fzorder
// -fzrevertall -fzprops -fzinv -fznotifyall -fzdd -fzrb): before, "b/1
// deleted before a/3 (v|~b/1), which depends on it and is deleted later
// in the same step".
func TestAdv26DeleteOrderSeed8015180(t *testing.T) {
	adv15Seed(t, 8015180, []*bool{fzOrder, fzRevertAll, fzProps, fzInvalid, fzNotifyAll, fzDerivedDeps, fzRecreateB})
}

// TestAdv26DeleteOrderSeed8045726 pins seed 8045726 (same flags as
// 8015180): before, "d/1 deleted before a/3 (v|~d/1), which depends on
// it and is deleted later in the same step".
func TestAdv26DeleteOrderSeed8045726(t *testing.T) {
	adv15Seed(t, 8045726, []*bool{fzOrder, fzRevertAll, fzProps, fzInvalid, fzNotifyAll, fzDerivedDeps, fzRecreateB})
}
