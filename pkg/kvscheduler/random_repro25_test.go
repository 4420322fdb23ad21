package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Reproducers of what TestRandomGraphs found once issue 25's paths were
// added to it (random_ext_test.go): values the southbound lost behind the
// scheduler's back, scoped resyncs, descriptors claiming derived keys.

// TestRandomRepro25A_DependentOfValueFoundGone (seed 219): a/g0/2 is lost;
// its update fails ("does not exist") and the read-back finds it gone, but
// a/g1/3, created on it in the same transaction, stayed in the southbound
// without its dependency. The values that depend on a value a read-back
// after failures finds gone are checked again (deleted into PENDING).
func TestRandomRepro25A_DependentOfValueFoundGone(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0}}}},
		{Lose: []string{"a/g0/2"}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 1}}, {"a/g1/3", &rval{Ver: 0, Deps: []string{"a/g0/2"}}}}},
		{Set: []rset{{"a/g0/2", nil}}},
	}})
}

// TestRandomRepro25B_WaitingDeleteReleasedByReadBack (seed 129): the
// deletes of a/g0/4 and its derived value wait for a/g0/2, whose delete
// failed; a/g0/2 is lost, its delete fails again and the read-back finds
// it gone. The deletes that waited for it go through then, not only with
// their retries.
func TestRandomRepro25B_WaitingDeleteReleasedByReadBack(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Derived: []int{1}}}}},
		{Fail: []rfail{{"delete", "a/g0/2"}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"any:d/g0/"}}}}},
		{Set: []rset{{"a/g0/4", nil}}},
		{Lose: []string{"a/g0/2"}, Set: []rset{{"a/g0/2", nil}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0}}}},
	}})
}

// TestRandomRepro25C_WaitingDeleteReleasedByScopedResync (seed 15464): the
// delete of a/g0/2 waits for a/g1/1, which the southbound loses; a resync
// scoped to a/g1/1 finds it gone, and the delete that waited for it goes
// through in that resync.
func TestRandomRepro25C_WaitingDeleteReleasedByScopedResync(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Deps: []string{"any:a/g0/"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0}}}},
		{Fail: []rfail{{"delete", "a/g0/0"}}, Set: []rset{
			{"a/g1/1", &rval{Ver: 0, Deps: []string{"d/g0/2/1"}}},
			{"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g1/1"}}},
		}},
		{Set: []rset{{"a/g0/2", nil}}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"d/g1/1/1", "a/g1/1"}, Lose: []string{"a/g1/1"}},
		{},
	}})
}

// TestRandomRepro25D_WaitingDeleteReleasedByFullResync (seed 15655): the
// delete of d/g0/0/1, left over by a/g0/0's change, waits for a/g0/2,
// which the southbound loses; the full resync that finds it gone lets the
// delete go through.
func TestRandomRepro25D_WaitingDeleteReleasedByFullResync(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"update", "a/g0/2"}}},
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"d/g0/0/1"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Derived: []int{1}}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Derived: []int{0}}}, {"a/g0/2", &rval{Ver: 0, Deps: []string{"any:d/g1/"}}}}},
		{Fail: []rfail{{"delete", "a/g0/2"}}, Set: []rset{
			{"a/g1/1", &rval{Ver: 0}},
			{"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g0/2"}}},
		}},
		{Resync: kvscheduler.FullResync, Lose: []string{"a/g0/2"}},
		{Resync: kvscheduler.DownstreamResync},
	}})
}

// TestRandomRepro25E_ObsoleteDerivedOfRecreatedBase (seed 45658 of
// 100,000): a/g1/1 and its derived value are lost; a resync scoped to the
// derived keys re-creates the derived value under the base the scheduler
// still believes there; the full resync that follows finds the base gone
// and the derived value there, and creates the base with a value that no
// longer derives it. The create deletes the derived values its new value
// does not derive and the southbound holds, as the reference's create
// does (applyNewRelations).
func TestRandomRepro25E_ObsoleteDerivedOfRecreatedBase(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Derived: []int{0}}}}},
		{Lose: []string{"a/g1/1"}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"d/g1/1/1", "d/g1/1/0"}},
		{Resync: kvscheduler.FullResync, Set: []rset{{"a/g1/1", &rval{Ver: 0}}}},
	}})
}

// TestRandomRepro25F_DependentOfValueAScopedResyncLeavesGone (seed 84224
// of 100,000): a/g0/4 (which depends on its own derived value) is lost; a
// resync scoped to it finds it gone and cannot create it again (a cycle
// through a derived value is not created from nothing); a/g0/6, which
// depends on that derived value, goes PENDING instead of staying in the
// southbound without it. A value the resync does re-create keeps its
// dependents untouched.
func TestRandomRepro25F_DependentOfValueAScopedResyncLeavesGone(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/6", &rval{Ver: 0, Deps: []string{"d/g0/4/0"}}}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Derived: []int{0}}}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Deps: []string{"d/g0/4/0"}, Derived: []int{0}}}}},
		{Lose: []string{"a/g0/4"}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"a/g0/4", "a/g1/3"}},
	}})
}

// TestRandomRepro25G_ScopedResyncCreatesWhatWaitedForAFoundValue (seed
// 53088 of 100,000): a/g0/0 waits for a/g1/5, whose delete was refused
// (its derived value's delete failed) although it is wanted; a resync
// scoped to a/g1/5 finds it there, so a/g0/0 and the cycle it closes are
// created in that resync. A scoped resync does not apply every value, so
// the values waiting for one its read finds are checked again.
func TestRandomRepro25G_ScopedResyncCreatesWhatWaitedForAFoundValue(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Fail: []rfail{{"delete", "d/g1/5/1"}}, Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"any:a/g1/", "a/g0/0"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 0, Deps: []string{"a/g0/2"}, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g1/5"}}}}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"a/g1/5", "d/g0/4/0", "a/g0/2"}},
	}})
}

// TestRandomRepro25H_ScopedResyncChecksWaitersAfterItsValues (seed 57687
// of 100,000, found with a first version of the fix of G that checked the
// waiting values right after the read): a/g1/3 waits for a/g0/2, whose
// delete failed; the resync scoped to both finds a/g0/2 there, but it is
// then deleted and created again by its own request. a/g1/3 must not be
// created in between: the waiting values are checked once the resync
// applied its values.
func TestRandomRepro25H_ScopedResyncChecksWaitersAfterItsValues(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g1/3"}}}, {"a/g1/3", &rval{Ver: 0}}}},
		{Fail: []rfail{{"delete", "a/g0/2"}}, Set: []rset{{"a/g0/2", &rval{Ver: 0}}, {"a/g1/3", nil}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"a/g0/2"}}}}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"a/g1/3", "a/g0/2"}},
	}})
}
