package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

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

// Seed 55015: a/g0/0 is ordered after a/g0/2, and a/g1/1 Requires both;
// a/g1/1's delete failed, so the deletes of a/g0/0 and a/g0/2 waited for
// it. The downstream resync that retried them started a/g0/0's delete,
// whose cascade took a/g1/1 down and so released a/g0/2, whose delete
// ended before a/g0/0's: "delete a/g0/0 after a/g0/2, which it is
// ordered after, in the same transaction". The end of a delete now waits
// for a dependent whose delete is under way (dependentUnderWay).
func TestOrderingOnlyDependentWhoseDeleteIsUnderWayGoesFirst(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"~a/g0/2"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0}}, {"a/g1/1", &rval{Ver: 0, Deps: []string{"a/g0/2", "a/g0/0"}}}}},
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g0/2", nil}, {"a/g0/0", nil}}},
		{Resync: kvscheduler.DownstreamResync},
	}})
}

// Seed 97338: a/g0/0 is ordered after any a/g1/ value; a/g1/3 Requires
// a/g1/1 and any a/g0/ value (NoUpdate: changes re-create). a/g1/3's
// delete failed, so the delete of a/g1/1 (changed to a value that waits)
// waited for it; a/g0/0's delete then waited for it too. The next
// transaction re-created a/g1/3 and released both, a/g1/1 first (the
// order they waited in): "delete a/g0/0 after a/g1/1, which it is ordered
// after, in the same transaction". Deletes released together now go
// dependents first (dependentsFirst).
func TestReleasedDeletesGoDependentsFirst(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Ver: 0}}, {"a/g0/0", &rval{Ver: 0, Deps: []string{"~any:a/g1/"}}}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"a/g1/1", "any:a/g0/"}}}}},
		{Fail: []rfail{{"delete", "a/g1/3"}}, Set: []rset{{"a/g1/1", &rval{Ver: 0, Deps: []string{"d/g1/3/1"}}}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0}}, {"a/g0/0", nil}}},
	}})
}
