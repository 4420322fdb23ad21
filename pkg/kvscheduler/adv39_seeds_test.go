package kvscheduler_test

import "testing"

// TestAdv39DeleteOrderSeed33009727 pins adv5 fuzz seed 33009727 of
// -fzrd -fzrevertall -fzretry -fzdd -fzrb -fzorder -fzdheld -fzview
// -fzconf -fzrec, which passes at 7627b21 and fails since the newest
// fixes of issue 25 (h25y's sweep, 1 of 30,000 from 33000000): a
// transaction with revert whose delete of a/1 = v|a/2,~r/2 fails (r/1's
// re-create takes a/2 and a/1 down) is reverted, and the downstream
// resync that follows deletes r/2 (drifted, re-created) before a/1, which
// it takes down later in the same step: "r/2 deleted before a/1
// (v|a/2,~r/2), which depends on it and is deleted later in the same
// step" (ops delete r/2, delete a/1, delete a/2, create a/2). Not reduced.
func TestAdv39DeleteOrderSeed33009727(t *testing.T) {
	adv15Seed(t, 33009727, []*bool{fzRecreateD, fzRevertAll, fzRetry, fzDerivedDeps, fzRecreateB, fzOrder, fzDHeld, fzView, fzConf, fzRec})
}

// TestAdv39PendingMetSeed34000833 pins adv5 fuzz seed 34000833 of
// -fzrd -fzretry -fzdd -fzrb with h25y's -fzpendmet check (no value
// PENDING with no unmet dependency), which passes at 7627b21 and fails
// since waitsForReCreate: a full resync whose read of b fails leaves a/3 =
// w|d/2 PENDING with d/2 held and reported met, "a/3 PENDING with no unmet
// dependency ([{d/2 d/2 [d/2] true requires}])"; the re-create of d/2 it
// waits for is not applied (the read failed). The same mechanism as
// TestAdv39NewDependentOfAReCreateWhoseBaseUpdateFailedIsCreated, another
// way for the re-create not to come. Not reduced.
func TestAdv39PendingMetSeed34000833(t *testing.T) {
	adv15Seed(t, 34000833, []*bool{fzRecreateD, fzRetry, fzDerivedDeps, fzRecreateB, fzPendMet})
}

// TestAdv39DerivedHeldSeed37011343 pins adv5 fuzz seed 37011343 of the
// set of TestAdv39DeleteOrderSeed33009727 (1 of 30,000 from 37000000),
// which passes at 7627b21 and fails now: a transaction with revert whose
// delete of b/2 fails and whose undo is not applied (a failed read of b:
// "not fully reverted") leaves b/2 = v@2|~a/2,~a/2, and after the next
// transaction "b/2 CONFIGURED (v@2|~a/2,~a/2) but its d/2 is
// NONEXISTENT". Not reduced. It passes with readDerived's call of
// forgetUnlisted (a1691d4) taken out, and fails with undoRestores,
// leftToUndo, takenBy, waitsForReCreate, reCreateDue, siblingDue,
// owedLeftover or update's undoGivesBack rule each taken out.
func TestAdv39DerivedHeldSeed37011343(t *testing.T) {
	adv15Seed(t, 37011343, []*bool{fzRecreateD, fzRevertAll, fzRetry, fzDerivedDeps, fzRecreateB, fzOrder, fzDHeld, fzView, fzConf, fzRec})
}
