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
// counted a value as its own provider, until updateTakesAway left a
// dependent that the value going needs in turn in its place ("a/3
// deleted before a/1 (w|~a/3), which depends on it and is deleted later
// in the same step").
func TestAdv16DependentThatMeetsItsOwnPatternGoesAfterWhatIsOrderedAfterIt(t *testing.T) {
	adv15Seed(t, 300673, adv15SetB)
}
