package kvscheduler_test

import "testing"

// Seeds of issue 25's wide fuzz (h25z's sweeps) whose delete order the
// leaving values judged by the walk's own rules fixed (h25a, see
// leaving.go). Each failed on da5a22c with "delete order: X deleted
// before Y (...), which depends on it and is deleted later in the same
// step".

var (
	// adv19SetE is h25z's set E.
	adv19SetE = []*bool{fzCancelF, fzCancelAll, fzAmbiguous, fzNotifyAll, fzOrder, fzRec, fzRetry, fzDerivedDeps}
	// adv19SetC is h25z's set C.
	adv19SetC = []*bool{fzRetry, fzDerivedDeps, fzDHeld, fzCancelF, fzCancelAll, fzView, fzRec, fzOrder}
	// adv19SetO is h25z's set O: set B without -fzrb, with -fzdheld -fzrec.
	adv19SetO = []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzOrder, fzDHeld, fzRec}
	// adv19SetN is h25z's set N.
	adv19SetN = []*bool{fzRetry, fzDerivedDeps, fzRecreateB, fzAmbiguous, fzOrder, fzView, fzNoOwnedR}
)

// TestAdv19WaitingProviderThatCannotComeSeed2004039 pins adv5 fuzz seed
// 2004039 of set E: txn b/2=v@2|a/*,a/* a/2=w|n/1,b/2 (n/1 removed by a
// notification) takes a/2 into PENDING; b/2 = w|~a/2, ordered after a/2,
// is updated to Require a/*, which only a/2 (going) and values that wait
// for what nothing brings in the step provide, so it surely goes. Before,
// a wanted value was counted as a provider to come whatever it waited
// for, and a/2 went before b/2 ("a/2 deleted before b/2 (w|~a/2)"; ops
// delete a/2, delete b/2). Fixed: mayProvide asks a waiting provider's
// own request (valueGoes) in every prediction, a cycle of waiting values
// counting as one that may come.
func TestAdv19WaitingProviderThatCannotComeSeed2004039(t *testing.T) {
	adv15Seed(t, 2004039, adv19SetE)
}

// TestAdv19WaitingProviderThatCannotComeSeed2005912 pins adv5 fuzz seed
// 2005912 of set E, the same shape: "a/1 deleted before b/2
// (w@1|~n/*,a/1)" before the fix.
func TestAdv19WaitingProviderThatCannotComeSeed2005912(t *testing.T) {
	adv15Seed(t, 2005912, adv19SetE)
}

// TestAdv19ClashSeed2003028 pins adv5 fuzz seed 2003028 of set C, which
// TestAdv18ValueInvalidForAClashGoesBeforeWhatItIsOrderedAfter reduces:
// "a/3 deleted before b/2 (w|~a/3)" before clashStaysFor.
func TestAdv19ClashSeed2003028(t *testing.T) {
	adv15Seed(t, 2003028, adv19SetC)
}

// TestAdv19OwnObsoletePropertySeed2007070 pins adv5 fuzz seed 2007070 of
// set D (adv17Set303000's flags), which
// TestAdv18UpdateRequiringItsOwnObsoletePropertyLeavesAsOne reduces: "d/1
// deleted before b/2 (v|d/*,~d/1)" before needsObsolete.
func TestAdv19OwnObsoletePropertySeed2007070(t *testing.T) {
	adv15Seed(t, 2007070, adv17Set303000)
}

// TestAdv19ClashInAFullResyncSeed2005570 pins adv5 fuzz seed 2005570 of
// set D, which h25z took for the clash case in a full resync: "d/1
// deleted before b/2 (v|~d/1,~b/1)" before h25a's fixes.
func TestAdv19ClashInAFullResyncSeed2005570(t *testing.T) {
	adv15Seed(t, 2005570, adv17Set303000)
}

// TestAdv19ClashWithAnotherBaseSeed2215834 pins adv5 fuzz seed 2215834 of
// set O, a clash on another base's d/2: "a/3 deleted before b/1 (v|~a/3)"
// before h25a's fixes.
func TestAdv19ClashWithAnotherBaseSeed2215834(t *testing.T) {
	adv15Seed(t, 2215834, adv19SetO)
}

// TestAdv19ProviderRequestedAfterTheDependentSeed2016199 pins adv5 fuzz
// seed 2016199 of set E: txn a/1=v|a/3 a/2=v|d/1 b/2=v@1|~r/1,~n/1 takes
// b/1 down with d/1 and d/2 (a/3 is gone); a/2 = v|~d/2, ordered after
// d/2, is updated to Require d/1, which b/2's request derives, but b/2
// comes after a/2 in the transaction: the walk judges a/2 first, without
// d/1, so a/2 surely goes. Before, every value of the transaction still
// to come counted as a provider, and d/2 went before a/2 ("d/2 deleted
// before a/2 (v|~d/2), which depends on it and is deleted later in the
// same step"). Fixed: only the values before a request's own place may
// provide for it (judgedAt, laterProvides).
func TestAdv19ProviderRequestedAfterTheDependentSeed2016199(t *testing.T) {
	adv15Seed(t, 2016199, adv19SetE)
}

// TestAdv19DeleteOrderSeed2119520 pins adv5 fuzz seed 2119520 of set N
// (untriaged by h25z): "a/2 deleted before b/1 (v@2|~a/2), which depends
// on it and is deleted later in the same step" on da5a22c; it passes
// after h25a's leaving-value commits.
func TestAdv19DeleteOrderSeed2119520(t *testing.T) {
	adv15Seed(t, 2119520, adv19SetN)
}

// TestAdv19DeleteOrderSeed2229281 pins adv5 fuzz seed 2229281 of set O
// (untriaged by h25z): "a/1 deleted before b/1 (w|~a/1), which depends
// on it and is deleted later in the same step" on da5a22c; it passes
// after h25a's leaving-value commits.
func TestAdv19DeleteOrderSeed2229281(t *testing.T) {
	adv15Seed(t, 2229281, adv19SetO)
}
