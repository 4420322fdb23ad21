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
