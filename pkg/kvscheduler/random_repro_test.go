package kvscheduler_test

import (
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The minimal reproducers TestRandomGraphs found, shrunk and then
// simplified by hand. Those with a class letter were found on the
// scheduler before its rewrite (1422c7b), one per class of failure; each
// failed there except the two marked as guards, which keep the contrast
// they show. Those named after a seed were found on the rewritten
// scheduler with -kvseeds=3000 and failed until the commit that names the
// seed.

// TestRandomReproA1_DeleteDepOfOldDependent: a dependency is deleted while the old dependent, whose new value no longer needs it, is still in the southbound (rule 9).
func TestRandomReproA1_DeleteDepOfOldDependent(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}, {"a/g0/0", &rval{Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 1}}, {"a/g1/1", nil}}},
	}})
}

// TestRandomReproA2_DeleteDerivedOfOldDependentAnyOf: the same through an AnyOf dependency on a derived value (rule 9).
func TestRandomReproA2_DeleteDerivedOfOldDependentAnyOf(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{Derived: []int{1}}}, {"a/g1/3", &rval{Deps: []string{"any:d/g0/"}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}, {"a/g1/3", &rval{}}}},
	}})
}

// TestRandomReproA3_AnyOfSwitchesProvider: an AnyOf dependency whose only provider is deleted before its new provider is created (rule 9).
func TestRandomReproA3_AnyOfSwitchesProvider(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"any:p/"}}}, {"a/g1/1", &rval{Props: []int{0}}}}},
		{Set: []rset{{"a/g1/1", nil}, {"a/g0/2", &rval{Props: []int{0}}}}},
	}})
}

// TestRandomReproB1_RecreateBeforeNewDep: a re-created value is created before the new dependency of its new value (rule 9).
func TestRandomReproB1_RecreateBeforeNewDep(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/5"}}}, {"a/g1/5", &rval{}}}},
	}})
}

// TestRandomReproC1_CreateBeforeUpdateBringingProperty: a value is created before the update of another that brings the property it depends on (rule 1).
func TestRandomReproC1_CreateBeforeUpdateBringingProperty(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{}}}},
		{Set: []rset{{"a/g0/0", &rval{Props: []int{0}}}, {"a/g1/1", &rval{Deps: []string{"p/g0/0/0"}}}}},
	}})
}

// TestRandomReproC2_CreateBeforeUpdateBringingDerived: guard (passes today): the same with a derived value handled by a descriptor.
func TestRandomReproC2_CreateBeforeUpdateBringingDerived(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{}}}},
		{Set: []rset{{"a/g0/0", &rval{Derived: []int{0}}}, {"a/g1/1", &rval{Deps: []string{"d/g0/0/0"}}}}},
	}})
}

// TestRandomReproD1_UpdateAfterDepCreateFailed: a value is updated to depend on a value whose creation failed earlier in the same transaction (rule 9).
func TestRandomReproD1_UpdateAfterDepCreateFailed(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}}},
		{Fail: []rfail{{"create", "a/g0/0"}}, Set: []rset{{"a/g0/0", &rval{}}, {"a/g1/1", &rval{Deps: []string{"a/g0/0"}}}}},
	}})
}

// TestRandomReproE1_BaseDeletedWhileDerivedDeleteFailed: a base is deleted although the delete of its derived value failed (rule 10; the reference keeps the base).
func TestRandomReproE1_BaseDeletedWhileDerivedDeleteFailed(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Derived: []int{0}}}}},
		{Fail: []rfail{{"delete", "d/g0/4/0"}}, Set: []rset{{"a/g0/4", nil}}},
	}})
}

// TestRandomReproF1_DepDeletedAfterDependentDeleteFailed: a dependency is deleted although the delete of its dependent failed (rule 9).
func TestRandomReproF1_DepDeletedAfterDependentDeleteFailed(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}, {"a/g0/0", &rval{Deps: []string{"a/g1/1"}}}}},
		{Fail: []rfail{{"delete", "a/g0/0"}}, Set: []rset{{"a/g1/1", nil}}},
	}})
}

// TestRandomReproG1_DependentRecreatedOnFailedDelete: a dependent deleted because its dependency goes is created again in the same transaction after that delete failed (rule 5).
func TestRandomReproG1_DependentRecreatedOnFailedDelete(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}, {"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}}},
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g1/1", nil}}},
	}})
}

// TestRandomReproG2_DependentCreatedOnFailedDelete: a value is created in a later transaction against a value whose delete failed (rule 10).
func TestRandomReproG2_DependentCreatedOnFailedDelete(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{}}}},
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g1/1", nil}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}}},
	}})
}

// TestRandomReproH1_FailedDeleteNotRetried: a failed delete is not retried (rule 10).
func TestRandomReproH1_FailedDeleteNotRetried(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/3", &rval{}}}},
		{Fail: []rfail{{"delete", "a/g1/3"}}, Set: []rset{{"a/g1/3", nil}}},
	}})
}

// TestRandomReproI1_DerivedStaleAfterFailedDelete: a derived value left by a failed delete keeps its stale content when it is desired again (rules 10 and 3).
func TestRandomReproI1_DerivedStaleAfterFailedDelete(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{0}}}}},
		{Fail: []rfail{{"delete", "d/g1/1/0"}}, Set: []rset{{"a/g1/1", &rval{}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 1, Derived: []int{0}}}}},
	}})
}

// TestRandomReproJ1_DerivedBeforeBaseInCycle: in a cycle through a derived value, the derived value is created before its base (rule 1).
func TestRandomReproJ1_DerivedBeforeBaseInCycle(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"any:a/g1/"}, Derived: []int{1}}}, {"a/g1/1", &rval{Deps: []string{"any:d/g0/"}}}}},
	}})
}

// TestRandomReproJ2_DerivedBeforeBaseExactCycle: the same with exact dependencies.
func TestRandomReproJ2_DerivedBeforeBaseExactCycle(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"a/g1/1"}, Derived: []int{1}}}, {"a/g1/1", &rval{Deps: []string{"d/g0/4/1"}}}}},
	}})
}

// TestRandomReproK1_SelfAnyOf: a value whose AnyOf dependency only it matches is never created (greatest fixed point, doc.go).
func TestRandomReproK1_SelfAnyOf(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:a/g1/"}}}}},
	}})
}

// TestRandomReproK2_SelfExact: guard (passes today): the same with an exact dependency on itself is created.
func TestRandomReproK2_SelfExact(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/1"}}}}},
	}})
}

// TestRandomReproSeed885: a dependent whose delete was under way, reached
// through a dependency its value had only been requested to have, let its
// dependency go first.
func TestRandomReproSeed885(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/1"}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/5"}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}}},
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g1/5", &rval{Deps: []string{"a/g0/4"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/1", "a/g0/2"}}}}},
		{Resync: kvscheduler.FullResync, Set: []rset{{"a/g0/0", &rval{}}, {"a/g1/5", nil}}},
	}})
}

// TestRandomReproSeed1003: a value re-created was taken for a member of a
// cycle through its old dependencies, created before its dependency and
// then created twice.
func TestRandomReproSeed1003(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Resync: kvscheduler.DownstreamResync, Fail: []rfail{{"delete", "a/g1/1"}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/0"}}}, {"a/g0/0", &rval{}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g1/1", &rval{}}}},
	}})
}

// TestRandomReproSeed992: the read-back of a base took the failed update of
// its derived value (whose descriptor cannot read) as done.
func TestRandomReproSeed992(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Fail: []rfail{{"update", "d/g1/1/0"}}},
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Ver: 1, Derived: []int{0}}}}},
	}})
}

// TestRandomReproSeed1218: a derived value whose create failed, dropped
// when its base changed, was taken for present when the base was read back,
// and its delete was retried forever.
func TestRandomReproSeed1218(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{1}}}}},
		{Fail: []rfail{{"create", "d/g0/0/1"}}, Set: []rset{{"a/g0/0", &rval{Deps: []string{"any:d/g1/"}, Derived: []int{1}}}}},
		{Fail: []rfail{{"delete", "a/g0/0"}}, Set: []rset{{"a/g1/1", &rval{}}}},
		{Resync: kvscheduler.DownstreamResync},
	}})
}

// TestRandomReproSeed1149: an update whose new value could not be applied
// failed on the property it drops before deleting the old value's
// dependents.
func TestRandomReproSeed1149(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g0/0"}}},
		{Set: []rset{{"a/g1/1", &rval{Props: []int{0}}}}},
		{Set: []rset{{"a/g1/5", &rval{Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"any:p/"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"d/g1/5/1"}}}}},
	}})
}

// TestRandomReproSeed1190: an update and a delete waited for each other
// (the delete for the update to drop a dependency, the update for the
// delete to free a property) and were retried forever.
func TestRandomReproSeed1190(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Resync: kvscheduler.DownstreamResync, Fail: []rfail{{"update", "a/g0/2"}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g1/5"}, Props: []int{0}}}, {"a/g1/7", &rval{Props: []int{0}}}, {"a/g1/5", &rval{Deps: []string{"any:p/"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Props: []int{0}}}}},
		{Set: []rset{{"a/g1/5", nil}}},
		{Set: []rset{{"a/g1/7", &rval{}}}},
		{Set: []rset{{"a/g0/2", &rval{}}}},
	}})
}

// TestRandomReproSeed524: a member of a cycle stayed although its partner's
// create failed and the partner then waited for something else.
func TestRandomReproSeed524(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"a/g1/1"}}}}},
		{Fail: []rfail{{"create", "a/g0/4"}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/4"}}}}},
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"d/g0/0/0"}}}}},
	}})
}

// TestRandomReproSeed858: a pending derived value of a base that did not
// exist was taken for a member of a cycle, and its base was created
// before it. It appeared with the first fix for seed 524 (which sends
// cycle members back to waiting) and is fixed in the same commit, so it
// passes on the scheduler before both.
func TestRandomReproSeed858(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}}},
		{Fail: []rfail{{"create", "a/g0/2"}}, Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:a/g0/"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:a/g1/", "d/g1/1/0"}}}}},
	}})
}

// TestRandomReproSeed2355: a value updated to depend on what its old value
// derives (directly, or through a dependent of the derived value as in
// seed 2649) was in a cycle with it; the obsolete derived value was kept
// for the new value, the old value kept for its derived value, and both
// deletes were retried forever.
func TestRandomReproSeed2355(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/3", &rval{Derived: []int{1}}}}},
		{Fail: []rfail{{"delete", "d/g1/3/1"}}, Set: []rset{{"a/g1/3", &rval{Deps: []string{"any:d/g1/"}}}}},
	}})
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Derived: []int{0}}}}},
		{Fail: []rfail{{"delete", "a/g0/6"}}, Set: []rset{{"a/g0/6", &rval{Deps: []string{"d/g0/2/0"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g0/6"}}}}},
	}})
}

// TestRandomReproSeed1521: a guard of the model (the scheduler was right):
// a value whose update failed stays in the southbound as it was, with its
// derived values (seed 2385), and satisfies its dependents, so a dependent
// created on it earlier in the transaction is not extra although the
// value's new dependencies went meanwhile. The retry then takes both down.
func TestRandomReproSeed1521(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Props: []int{0}}}, {"a/g0/0", &rval{}}}},
		{Fail: []rfail{{"update", "a/g0/0"}}, Set: []rset{{"a/g1/1", &rval{}}, {"a/g0/0", &rval{Deps: []string{"p/g1/1/0"}}}, {"a/g0/2", &rval{Deps: []string{"a/g0/0"}}}}},
	}})
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Derived: []int{1}}}, {"a/g0/2", &rval{Derived: []int{1}}}}},
		{Fail: []rfail{{"update", "a/g0/2"}}, Set: []rset{{"a/g0/2", &rval{Deps: []string{"d/g0/4/1"}, Derived: []int{1}}}, {"a/g0/4", &rval{}}}},
	}})
}

// TestRandomReproSeed1731: a member of a cycle was created counting on the
// others, one of which then failed to be created; a member that waited
// for the failed one was not created either, and the first stayed in the
// southbound without it (seed 2500 too).
func TestRandomReproSeed1731(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"create", "a/g0/0"}}, Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/1"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/2"}}}, {"a/g0/2", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g0/2", nil}}},
	}})
}

// TestRandomReproSeed1086: a value being updated was judged by the
// dependencies of its old value while its obsolete property went: a/g1/1,
// whose old value needed any property and had only its own left, was
// deleted into PENDING although its new value needs nothing; its delete
// waited for a dependent whose delete waited in turn, and once they went,
// it stayed PENDING on the old value's dependencies, with the dependent
// that needs it.
func TestRandomReproSeed1086(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{Props: []int{0}}}, {"a/g1/1", &rval{Deps: []string{"any:p/"}, Props: []int{0}}},
			{"a/g0/0", &rval{Deps: []string{"any:a/g1/"}}}, {"a/g0/4", &rval{Deps: []string{"a/g0/0"}}}}},
		{Fail: []rfail{{"delete", "a/g0/4"}}, Set: []rset{{"a/g0/4", nil}, {"a/g0/2", &rval{}}}},
		{Set: []rset{{"a/g1/1", &rval{}}}},
	}})
}

// TestUpdateJudgedByItsNewDependencies: as in the reference, whose node
// holds the new value before its obsolete derived values go, a value
// updated to drop a dependency that only its own obsolete property met is
// updated, not deleted and created again (seed 1086 without failures).
func TestUpdateJudgedByItsNewDependencies(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := withDeps(sb.Descriptor("a", "a/"))
	d.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		if strings.Contains(v.(string), "+p") {
			return []kvscheduler.KeyValuePair{{Key: "p/" + k, Value: "p"}}
		}
		return nil
	}
	register(t, s, d)
	mustSet(t, s, "a/2", "y+p", "a/1", "x+p|p/*")
	mustSet(t, s, "a/2", "y")
	sb.ResetOps()
	mustSet(t, s, "a/1", "x")
	wantOps(t, sb, "update a/1")
}
