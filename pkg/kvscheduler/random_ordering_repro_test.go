package kvscheduler_test

import "testing"

// Findings of TestRandomGraphs once it drew ordering-only dependencies
// (random_ordering_test.go), each the minimal reproducer it printed.

// Seed 80721: a/g1/3 is ordered after a/g0/2 and after its derived value
// d/g0/2/0; both bases deleted in one transaction. The delete of a/g0/2
// applied a/g1/3's delete early (deleteorder.go), but the derived value's
// delete, pushed after it, ran first: "delete a/g1/3 after d/g0/2/0,
// which it is ordered after, in the same transaction". The dependents the
// transaction deletes now go before the derived values too.
func TestOrderingOnlyDependentOfABaseAndItsDerivedValueDeletedFirst(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"~d/g0/2/0", "~a/g0/2"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/3", nil}, {"a/g0/2", nil}}},
	}})
}

// Seed 83961: a/g1/5 is ordered after a/g0/4 and after any property; a/g0/2
// has a property and Requires a/g1/3, which Requires a/g0/4's derived
// value. Deleting a/g0/4 and a/g1/5 in one transaction: the derived
// value's delete took a/g1/3 and a/g0/2 (with its property) down before
// a/g1/5 went: "delete a/g1/5 after a/g0/2, which it is ordered after, in
// the same transaction".
func TestOrderingOnlyDependentOfAPropertyTheCascadeTakesDownDeletedFirst(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g1/3"}, Props: []int{0}}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 0, Deps: []string{"~any:p/", "~a/g0/4"}}}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"d/g0/4/0"}}}}},
		{Set: []rset{{"a/g0/4", nil}, {"a/g1/5", nil}}},
	}})
}
