package kvscheduler_test

import "testing"

// adv17Set303000 is the flag set of adv5 fuzz seed 303000 (issue 25).
var adv17Set303000 = []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzView, fzSnap, fzRec, fzOrder, fzProps, fzInvalid}

// TestAdv17DerivedDependentOfProvidersAllLeavingGoesFirst pins adv5 fuzz
// seed 303000: a/1 = w|b/1,a/3, a/3 = w| and b/1 = w@1|a/*,~a/1
// (deriving d/1 = dv-w@1|a/*,~a/1) exist, a/2 = w|a/3,p/2 waits
// (PENDING: nothing provides p/2). One transaction deletes a/3 and a/1.
// a/1's delete goes first (key order); b/1 Requires a/*, which only a/1
// and a/3 provide, so a/3's delete further on takes b/1 and d/1 down,
// and d/1, ordered after a/1, must go before it (docs/kvscheduler.md,
// the delete order). It failed with "a/1 deleted before d/1
// (dv-w@1|a/*,~a/1), which depends on it and is deleted later in the
// same step" (ops delete a/1, delete d/1, delete b/1, delete a/3), for
// two reasons in cascadeLater: the value whose delete asks (a/1) did not
// count as a provider that goes, and onlyProviders took the waiting a/2
// for a provider that may come, though its request surely goes.
func TestAdv17DerivedDependentOfProvidersAllLeavingGoesFirst(t *testing.T) {
	adv15Seed(t, 303000, adv17Set303000)
}

// TestAdv17ObtainedTakenOverGoesBeforeADerivedValueOfARecreatedBase pins
// adv5 fuzz seed 1101652 of set B (-fzretry -fzdd -fzprops -fzview
// -fzinv -fzrb -fzorder): a full resync found a/3 = bad|d/2, the
// southbound's own (OBTAINED); one transaction takes it over as
// w|d/1,a/* and re-creates b/1 (v@1@2| to w|d/*,a/*), whose delete
// takes d/1 and d/2 away. a/3's takeover surely takes its value away
// (d/1 goes, and nothing derives it again), so it must go before d/2,
// which its value in the southbound depends on (docs/kvscheduler.md, the
// delete order, obtainedDue). It failed with "d/2 deleted before a/3
// (bad|d/2), which depends on it and is deleted later in the same step"
// (ops delete b/2, delete d/1, delete d/2, delete b/1, delete a/3), on
// the code before issue 25's fixes too: asked at d/2's start, d/1's
// delete had not started, and mayBeMet took d/1 for a provider that
// stays (fixed: leavesWithBase, now part of derivedGoes).
func TestAdv17ObtainedTakenOverGoesBeforeADerivedValueOfARecreatedBase(t *testing.T) {
	adv15Seed(t, 1101652, adv15SetB)
}

// TestAdv17DependentOfSiblingDerivedValuesIsLeftToTheirCascade is the
// shrunk reproducer of TestRandomGraphs seed 14541 (one of nine model
// failures of -kvseeds=100000, all passing before
// TestAdv17DerivedDependentOfProvidersAllLeavingGoesFirst's first fix):
// a/g0/0's re-create takes d/g0/0/0 and d/g0/0/1 away, the only
// providers of a/g1/3's any:d/g0/, and a/g1/3 is re-created without
// dependencies in the same transaction. With both providers' deletes
// under way, the value whose delete asks counted as going, and
// cascadeLater took a/g1/3 down early; its node was left available in
// PENDING ("a/g1/3: avail true, the model says false"). Deletes under way
// take their dependents down by their own cascades; the value whose
// delete asks counts as going only with a provider that a request
// further on takes away.
func TestAdv17DependentOfSiblingDerivedValuesIsLeftToTheirCascade(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Derived: []int{0, 1}}}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"any:d/g0/"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}, {"a/g1/3", &rval{Ver: 0}}}},
	}})
}
