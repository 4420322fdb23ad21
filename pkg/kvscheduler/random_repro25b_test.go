package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Reproducers of the classes 100,000 seeds of TestRandomGraphs still
// found once TestRandomRepro25A-H were fixed (random_repro25_test.go).

// TestRandomRepro25I_WaitingDeleteOfValueRequestedAgain (seed 42783 of
// 100,000; 46680, 50823 and 92956 too): the delete of a/g1/1 waits for
// a/g0/2, whose derived value's delete failed; the southbound then loses
// a/g1/1, and a transaction requests it again while a/g0/2's change
// takes a/g0/2 down. The waiting delete was released before a/g1/1's
// request was applied, failed ("does not exist"), so the request was not
// applied in the transaction (a value failed in it is not), and the
// read-back that found a/g1/1 gone forgot the request: no retry or
// resync ever created it. A read-back keeps a request not applied yet.
func TestRandomRepro25I_WaitingDeleteOfValueRequestedAgain(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g1/1"}, Derived: []int{0}}}}},
		{Resync: kvscheduler.DownstreamResync, Fail: []rfail{{"delete", "d/g0/2/0"}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 0}}, {"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g1/1", nil}}},
		{Lose: []string{"a/g1/1"}, Set: []rset{{"a/g1/1", &rval{Ver: 0}}, {"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g0/2", "a/g0/0"}}}}},
	}})
}
