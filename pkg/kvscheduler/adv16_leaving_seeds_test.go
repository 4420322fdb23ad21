package kvscheduler_test

import "testing"

// TestAdv16DependentThatMeetsItsOwnPatternGoesAfterWhatIsOrderedAfterIt
// pins adv5 fuzz seed 300673 of set B: a/3 = v|a/* (meeting a/* itself)
// and a/1 = w|~a/3; one transaction deletes a/1 and updates a/3 to an
// invalid value. a/1 is ordered after a/3, so a/1's delete goes first;
// a/3's update, which surely takes it away, must not be applied early
// inside a/1's delete because a/3 Requires a/*, which a/1 also meets
// (they are a cycle only through a pattern a/3 meets itself). It passed
// on the code before issue 25's work and failed once cascadeSpares
// counted a value as its own provider, until updateTakesAway left in
// place a dependent that depends on the value going only by Requires
// patterns it meets itself (see meetsItself) ("a/3
// deleted before a/1 (w|~a/3), which depends on it and is deleted later
// in the same step").
func TestAdv16DependentThatMeetsItsOwnPatternGoesAfterWhatIsOrderedAfterIt(t *testing.T) {
	adv15Seed(t, 300673, adv15SetB)
}

// TestAdv16DependentOrderedAfterARecreatedValueInACycleGoesFirst pins
// adv5 fuzz seed 302537 of -fzcancel -fzcancelall -fzamb -fznotifyall
// -fzorder -fzrec -fzretry -fzdd: r/1 = w|b/2 is re-created as v|, and
// b/2 = v@1|~r/1 (deriving d/1 = dv-v@1|~r/1) is updated into PENDING
// in the same transaction. b/2's update must go first, with d/1, though
// r/1 Requires b/2 (a cycle with b/2, not with d/1). It passed on the
// code before issue 25's work and failed after
// TestAdv16DependentThatMeetsItsOwnPatternGoesAfterWhatIsOrderedAfterIt's
// first fix, which left any dependent the value going reaches in place
// ("r/1 deleted before d/1 (dv-v@1|~r/1), which depends on it and is
// deleted later in the same step").
func TestAdv16DependentOrderedAfterARecreatedValueInACycleGoesFirst(t *testing.T) {
	adv15Seed(t, 302537, []*bool{fzCancelF, fzCancelAll, fzAmbiguous, fzNotifyAll, fzOrder, fzRec, fzRetry, fzDerivedDeps})
}
