package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestDeleteUnderWayIsNotReportedFailed: a/0 derives d/0, which a/1
// depends on; a/0 is then changed to depend on a/1 and to derive nothing.
// The walk deletes d/0 (obsolete), which takes a/1 down into PENDING,
// which takes a/0 down (its new value waits for a/1), whose delete comes
// to d/0 again while a/1's delete is still under way below. Nothing fails
// in the southbound, and the transaction must say so: it used to report
// d/0 and a/0 "not deleted: ..., which depends on it, still exists" (each
// deleted moments later by the same transaction), and, asked with revert,
// to revert what it had done.
func TestDeleteUnderWayIsNotReportedFailed(t *testing.T) {
	s, sb := derivingScheduler(t)
	mustSet(t, s, "a/0", "+v")
	mustSet(t, s, "a/1", "v|d/0")
	wantSB(t, sb, map[string]any{"a/0": "+v", "d/0": "x", "a/1": "v|d/0"})
	sb.ResetOps()

	rec, err := s.StartNBTransaction().SetValue("a/0", "v|a/1").WithRevert().Commit(context.Background())
	if err != nil {
		t.Fatalf("the transaction failed: %v\n%s", err, rec)
	}
	// Dependents and derived values first, the base last.
	wantOps(t, sb, "delete a/1", "delete d/0", "delete a/0")
	wantSB(t, sb, map[string]any{})
	wantState(t, s, "a/0", kvscheduler.Pending)
	wantState(t, s, "a/1", kvscheduler.Pending)
}

// TestRandomReproSpuriousDeleteFailures pins seeds of TestRandomGraphs
// with its rule 4 (no delete reported failed for nothing): 16 (the scenario of
// TestDeleteUnderWayIsNotReportedFailed), which failed it before deletes
// under way were waited for, and 6736, which a first version of that fix
// broke (a base deleted before its derived value, whose delete it let
// "go together" with it as a member of the same cycle).
func TestRandomReproSpuriousDeleteFailures(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{Derived: []int{1}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"d/g0/0/1"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/1"}}}}},
	}})
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:d/g1/"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/2"}}}, {"a/g0/2", &rval{Deps: []string{"any:d/g1/"}}}}},
	}})
}

// TestDeleteCycleThroughDerivedValue: a/b derives d/b and depends on a/a,
// which depends on d/b. Deleting a/b makes each delete wait on another
// (a/a for a/b, which depends on it; d/b for a/a; a/b for d/b, which it
// derives): no order keeps every rule. The values go as in the reference:
// the dependent taken down first, then the derived value, then the base;
// nothing is reported failed, and no delete is left waiting.
func TestDeleteCycleThroughDerivedValue(t *testing.T) {
	s, sb := derivingScheduler(t)
	mustSet(t, s, "a/a", "v")
	mustSet(t, s, "a/b", "+v|a/a")
	mustSet(t, s, "a/a", "v|d/b")
	wantSB(t, sb, map[string]any{"a/a": "v|d/b", "a/b": "+v|a/a", "d/b": "x"})
	sb.ResetOps()

	rec, err := s.StartNBTransaction().SetValue("a/b", nil).Commit(context.Background())
	if err != nil {
		t.Fatalf("the transaction failed: %v\n%s", err, rec)
	}
	wantOps(t, sb, "delete a/a", "delete d/b", "delete a/b")
	wantSB(t, sb, map[string]any{})
	wantState(t, s, "a/a", kvscheduler.Pending)
	if n := kvscheduler.WaitingDeletes(s); n != 0 {
		t.Errorf("%d deletes left waiting", n)
	}
}

// derivingScheduler returns a scheduler with descriptors for a/ (values
// "name|deps" as withDeps reads them; a value starting with "+" derives
// d/<name> = "x") and for d/, on a fresh kvtest southbound.
func derivingScheduler(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := withDeps(sb.Descriptor("a", "a/"))
	a.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		if s, _ := v.(string); strings.HasPrefix(s, "+") {
			return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(key, "a/"), Value: "x"}}
		}
		return nil
	}
	register(t, s, a, sb.Descriptor("d", "d/"))
	return s, sb
}
