package kvscheduler_test

import "testing"

// TestAdv18PublishedStatusOfARefusedDerivedDeleteSeed2027659 pins adv5
// fuzz seed 2027659 of set B (-fzretry -fzdd -fzprops -fzview -fzinv
// -fzrb -fzorder, 1 of 33,000 from 2000000; not reduced). b/2 = w@1| is
// the southbound's own (OBTAINED, drift); b/1 = w@1| derives d/1, on
// which r/2 = w|d/1 depends. b/1's delete is refused (d/1's delete
// refused: r/2 still exists), a downstream resync that cannot read r/
// removes b/1 and leaves d/1 under b/2, and the next transaction takes
// b/2 over with a re-create (w|p/1,~n/1), whose delete is refused
// because d/1 still exists ("DELETE b/2: kvscheduler: not deleted: d/1,
// which derives from it, still exists"). After that job, d/1's published
// status is not what its node says: "published: d/1: published
// FAILED/NONE/kvscheduler: not deleted: r/2, which depends on it, still
// exists (base "b/2"), its fields say FAILED/DELETE/..." (the last
// operation, DELETE, was never published: GetValueStatus and watchers
// report NONE). It fails on the code before issue 25's last four fixes
// (7c307a7^) too. Reduced:
// TestAdv18PublishedStatusOfADerivedValueWhoseDeleteIsRefusedAgain.
func TestAdv18PublishedStatusOfARefusedDerivedDeleteSeed2027659(t *testing.T) {
	adv15Seed(t, 2027659, adv15SetB)
}

// TestAdv18BaseConfiguredWithoutItsDerivedValueSeed2010311 pins adv5 fuzz
// seed 2010311 of -fzretry -fzdd -fzdheld -fzcancel -fzcancelall -fzview
// -fzrec -fzorder (1 of 20,000 from 2000000; not reduced): b/2 =
// w@2|n/1,n/1 is set in the southbound by drift (its own); a transaction
// creates b/1 = w@1@2| whose derived d/2's create fails (injected) while
// b/2's create finds it already there; b/2 is then INVALID for the
// derived-key clash on d/1 with b/1, and the next transaction's delete
// of b/2 (requested as v@1|~a/2) fails (injected). After that step b/1
// is reported CONFIGURED while the scheduler reports its derived d/2
// NONEXISTENT ("derived held: b/1 CONFIGURED (w@1@2|) but its d/2 is
// NONEXISTENT"): a base is CONFIGURED only with its derived values. It
// fails on the code before issue 25's last four fixes (7c307a7^) too.
func TestAdv18BaseConfiguredWithoutItsDerivedValueSeed2010311(t *testing.T) {
	withFzFlags(t, fzDHeld)
	adv15Seed(t, 2010311, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzCancelAll, fzView, fzRec, fzOrder})
}
