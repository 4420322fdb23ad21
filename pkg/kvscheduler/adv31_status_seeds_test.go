package kvscheduler_test

import "testing"

// TestAdv31SettledStatusSeed16110856 pins adv5 fuzz seed 16110856 of set B
// with -fzconf (-fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder
// -fzconf): b/1 = w@1@2| derives d/1 and d/2; d/2 and then b/1 are removed
// behind the scheduler's back, and b/1 is requested as bad| (INVALID).
// After two clean full resyncs the scheduler still reports d/2 CONFIGURED
// (base b/1) with no d/2 in the southbound ("settled status lie: d/2:
// southbound holds nothing, scheduler reports it CONFIGURED (base
// \"b/1\")"). There d/2 is no longer listed by b/1 (an orphan: base b/1,
// wanted, not held), so neither the drop of a base left INVALID
// (dropGoneDerived, TestAdv31InvalidBaseLeavesNoDerivedValueConfigured)
// nor any other base-side drop reaches it. Reduced as
// TestAdv33FailedBaseDeleteLeavesNoOrphanConfigured: the orphan comes from
// a failed (not applied) delete of b/1, fixed by forgetUnlisted.
func TestAdv31SettledStatusSeed16110856(t *testing.T) {
	adv15Seed(t, 16110856, []*bool{fzRetry, fzDerivedDeps, fzProps, fzView, fzInvalid, fzRecreateB, fzOrder, fzConf})
}
