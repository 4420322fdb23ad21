package kvscheduler_test

import "testing"

// Seeds of issue 25's wide fuzz that fail on the code of 2026-11-29
// (20fcd99 and after), found by h25y's sweeps of 20,000 seeds beyond the
// 3,000 of each set the checks run. All three are the delete
// order (rule: deleted together, dependents go first). 1205964 and
// 309962 are fixed (h25b: cascadeLater's baseOf; postponeTo of an update
// that surely goes); 1206712 is fixed by h25c (a derived value to come
// provides only if its own dependencies may be met, see
// leavingtxn.go; reduced:
// TestAdv19BDeleteOrderWhenTheNewDerivedProviderWaits).

// TestAdv18UndoDeletesAValueBeforeItsDependentSeed1205964 pins adv5 fuzz
// seed 1205964 of set B (-fzretry -fzdd -fzprops -fzview -fzinv -fzrb
// -fzorder): a transaction with revert (txn r/2=w|, with retry) fails on
// r/2 and d/1, which drift put there, and its undo deletes a/1 before
// a/3 = w|p/1,~a/1, which is ordered after it and deleted later in the
// same undo (ops ... create a/3, delete a/1, delete a/2, delete a/3,
// delete b/2, delete r/2).
func TestAdv18UndoDeletesAValueBeforeItsDependentSeed1205964(t *testing.T) {
	adv15Seed(t, 1205964, adv15SetB)
}

// TestAdv18FailedDerivedDeleteOrderSeed1206712 pins adv5 fuzz seed
// 1206712 of set B: a transaction deletes a/1 and b/2 and re-creates b/1
// (w@2| to w@1|~b/2); d/2, derived by b/1, was removed by drift, so its
// delete fails and b/1's is refused; a/2 = w|d/*,~a/1 is deleted after
// a/1, which it is ordered after (ops delete a/1, delete a/2, delete d/2,
// delete b/1, create b/1).
func TestAdv18FailedDerivedDeleteOrderSeed1206712(t *testing.T) {
	adv15Seed(t, 1206712, adv15SetB)
}

// TestAdv18DerivedDependentOrderSeed309962 pins adv5 fuzz seed 309962 of
// the flag set of TestAdv17DerivedDependentOfProvidersAllLeavingGoesFirst
// (-fzretry -fzdd -fzcancel -fzview -fzsnap -fzrec -fzorder -fzprops
// -fzinv): txn b/1=w@1|~d/1 a/1=<nil> a/1=v|b/2 deletes a/1 before d/2 =
// dv-v@1@2|~a/1, the derived value of b/1 that b/1's update takes away
// (ops delete a/1, delete d/2, update b/1, update d/1).
func TestAdv18DerivedDependentOrderSeed309962(t *testing.T) {
	adv15Seed(t, 309962, adv17Set303000)
}
