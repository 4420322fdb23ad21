package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Reproducers of seeds 100,001-300,000 of TestRandomGraphs whose failure
// was the property test's model's, not the scheduler's: the model asked
// for what the scheduler cannot know, or its southbound did what a
// southbound of derived values cannot. Each failed before its fix of the
// model (random_check_test.go, random_ext_test.go).

// TestRandomRepro26M1_DependentOfLostFailedUpdate (seed 176471; 110563,
// 118390, 124169, 154628, 167086, 198469, 208188, 248742 and 263163 too):
// a/g0/2's update failed, so the southbound kept its old value, which
// satisfies dependencies; the southbound then loses it behind the
// scheduler's back, and a/g0/6 is created on it (the order checks count a
// lost value as present until the scheduler reads it back). Rule 3 took
// a/g0/6 for extra: it counted a value left by a failed update as existing
// only while the southbound holds it. It now counts it while the scheduler
// may believe it there, as the order checks do.
func TestRandomRepro26M1_DependentOfLostFailedUpdate(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0}}}},
		{Fail: []rfail{{"update", "a/g0/2"}}, Set: []rset{{"a/g0/0", &rval{Ver: 0}}, {"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g0/0"}}}}},
		{Lose: []string{"a/g0/2"}, Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g1/5"}}}, {"a/g0/6", &rval{Ver: 0, Deps: []string{"a/g0/2"}}}}},
	}})
}

// TestRandomRepro26M1_LostFailedUpdateAlone (seed 110563): as above, with
// the dependent created before the loss and nothing requested after it.
func TestRandomRepro26M1_LostFailedUpdateAlone(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Ver: 0}}}},
		{Fail: []rfail{{"update", "a/g0/4"}}, Set: []rset{{"a/g0/4", &rval{Ver: 0, Deps: []string{"a/g1/1"}}}, {"a/g1/1", &rval{Ver: 0}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Deps: []string{"d/g0/2/1"}}}, {"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g0/4"}}}}},
		{Lose: []string{"a/g0/4"}},
	}})
}

// TestRandomRepro26M2_ScopedResyncOfUnreadableDerivedKey (seed 154445):
// descriptor "d" has no Retrieve, and a resync scoped to d/g0/2/1 follows
// the loss of its base. The scheduler cannot read d/g0/2/1 (it exists as
// its base does, which it still believes there), so a/g0/0 is updated to
// depend on it. The model took the scoped resync for a read of the key,
// and the update for out of order; it now forgets a loss only for keys a
// descriptor can read.
func TestRandomRepro26M2_ScopedResyncOfUnreadableDerivedKey(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Ver: 0, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}}},
		{Resync: kvscheduler.DownstreamResync, Keys: []string{"d/g0/2/1"}, Lose: []string{"a/g0/2"}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"d/g0/2/1"}}}}},
	}})
}

// TestRandomRepro26M3_DerivedValueWithoutItsBase (seed 138038): a/g1/5
// is lost; the scheduler, which still believes it there, creates its
// derived values, and the model's southbound took them without their
// base. Descriptor "a" claims the derived keys and reads base values only,
// so no read could ever report them: the repair re-created the base and
// its derived values' creates failed ("already exists") for ever. A
// derived value exists only with its base (what a Retrieve of base values
// relies on): the model's southbound now refuses one whose base it does
// not hold, as a southbound of derived values does.
func TestRandomRepro26M3_DerivedValueWithoutItsBase(t *testing.T) {
	checkScenario(t, scenario{ClaimDerived: true, Txns: []rtxn{
		{Fail: []rfail{{"update", "a/g1/5"}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 1, Derived: []int{0, 1}}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 0}}}},
		{Lose: []string{"a/g1/5"}, Set: []rset{{"a/g1/5", &rval{Ver: 1, Derived: []int{0, 1}}}}},
	}})
}

// TestRandomRepro26M3_DerivedValueWithoutItsBaseUnread (seed 255084): the
// same with descriptor "d" without Retrieve.
func TestRandomRepro26M3_DerivedValueWithoutItsBaseUnread(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g0/2"}}, Set: []rset{{"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 1, Derived: []int{1}}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Deps: []string{"a/g0/4"}}}}},
		{Lose: []string{"a/g1/1"}, Set: []rset{{"a/g1/1", &rval{Ver: 1, Derived: []int{1}}}}},
	}})
}
