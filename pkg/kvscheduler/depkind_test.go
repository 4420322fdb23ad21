package kvscheduler_test

import (
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// withKindDeps makes values of d depend on the keys listed in the value
// "name|dep1,~dep2": a key with "~" in front is an ordering-only
// dependency, any other Requires.
func withKindDeps(d *kvscheduler.Descriptor) *kvscheduler.Descriptor {
	d.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		s, _ := v.(string)
		_, deps, ok := strings.Cut(s, "|")
		if !ok {
			return nil
		}
		var out []kvscheduler.Dependency
		for _, k := range strings.Split(deps, ",") {
			if key, ok := strings.CutPrefix(k, "~"); ok {
				out = append(out, kvscheduler.Dependency{Key: key, Kind: kvscheduler.OrderingOnly})
			} else if k != "" {
				out = append(out, kvscheduler.Dependency{Key: k})
			}
		}
		return out
	}
	return d
}

func kindSched(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withKindDeps(sb.Descriptor("a", "a/")))
	return s, sb
}

// TestOrderingOnlyCreatesAfter: an ordering-only dependency gates creation
// as Requires does: the dependent waits (PENDING, naming it) and is
// created right after it, in the same transaction when both are set.
func TestOrderingOnlyCreatesAfter(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/app", "v|~a/db")
	st := wantState(t, s, "a/app", kvscheduler.Pending)
	if len(st.UnmetDependencies) != 1 || st.UnmetDependencies[0] != "a/db" {
		t.Fatalf("unmet %v, want [a/db]", st.UnmetDependencies)
	}
	wantOps(t, sb)
	mustSet(t, s, "a/db", "v")
	wantOps(t, sb, "create a/db", "create a/app")
	// Both in one transaction: key order would create a/app first.
	mustSet(t, s, "a/app", nil, "a/db", nil)
	sb.ResetOps()
	mustSet(t, s, "a/app", "v|~a/db", "a/db", "v")
	wantOps(t, sb, "create a/db", "create a/app")
}

// TestDependencyGoesAwayByKind: when the value a dependent names is
// removed on its own, a Requires dependent is deleted first and waits
// (PENDING); an ordering-only dependent stays, is still updated in place,
// and is not taken for in need of it.
func TestDependencyGoesAwayByKind(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/db", "v", "a/req", "v|a/db", "a/ord", "v|~a/db")
	sb.ResetOps()
	mustSet(t, s, "a/db", nil)
	wantOps(t, sb, "delete a/req", "delete a/db")
	wantState(t, s, "a/req", kvscheduler.Pending)
	wantState(t, s, "a/ord", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"a/ord": "v|~a/db"})

	mustSet(t, s, "a/ord", "w|~a/db")
	wantOps(t, sb, "update a/ord")
	wantState(t, s, "a/ord", kvscheduler.Configured)

	// Back again: the Requires dependent is created, the other left as is.
	mustSet(t, s, "a/db", "v")
	wantOps(t, sb, "create a/db", "create a/req")
	wantState(t, s, "a/ord", kvscheduler.Configured)
}

// TestOrderingOnlyDeletesBefore: deleted in one transaction, an
// ordering-only dependent is deleted before the value it names, whatever
// the key order; a chain is deleted in reverse order of creation.
func TestOrderingOnlyDeletesBefore(t *testing.T) {
	s, sb := kindSched(t)
	// Key order is a/1, a/2, a/3; creation order a/1, a/3, a/2.
	mustSet(t, s, "a/1", "v", "a/3", "v|~a/1", "a/2", "v|~a/3")
	wantOps(t, sb, "create a/1", "create a/3", "create a/2")
	mustSet(t, s, "a/1", nil, "a/2", nil, "a/3", nil)
	wantOps(t, sb, "delete a/2", "delete a/3", "delete a/1")
	wantSB(t, sb, nil)
}

// TestOrderingOnlyResyncKeepsDependent: a resync finds the ordering-only
// dependent in sync although what it names is gone, and leaves it.
func TestOrderingOnlyResyncKeepsDependent(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/db", "v", "a/ord", "v|~a/db")
	mustSet(t, s, "a/db", nil)
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/ord", "v|~a/db")
	wantOps(t, sb)
	wantState(t, s, "a/ord", kvscheduler.Configured)
}

// TestOrderingOnlyDeletesThroughRequires: a dependent ordered after a
// value that Requires a third, all deleted together, goes first, then
// the value, then the third, although key order and the Requires cascade
// alone would delete the third first (and with it the value, leaving the
// dependent for last).
func TestOrderingOnlyDeletesThroughRequires(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/1", "v", "a/3", "v|a/1", "a/2", "v|~a/3")
	wantOps(t, sb, "create a/1", "create a/3", "create a/2")
	mustSet(t, s, "a/1", nil, "a/2", nil, "a/3", nil)
	wantOps(t, sb, "delete a/2", "delete a/3", "delete a/1")
	wantSB(t, sb, nil)
}

// TestOrderingOnlyCycle: values ordered after each other are created
// together, as a cycle of Requires dependencies is; one of them removed,
// the other stays.
func TestOrderingOnlyCycle(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/1", "v|~a/2", "a/2", "v|~a/1")
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "a/2", kvscheduler.Configured)
	sb.ResetOps()
	mustSet(t, s, "a/1", nil)
	wantOps(t, sb, "delete a/1")
	wantState(t, s, "a/2", kvscheduler.Configured)
}

// TestOrderingOnlyRecreateWaits: a dependent that exists although what it
// is ordered after went, deleted behind the scheduler's back, is created
// again only once that value is back: ordering still gates creation.
func TestOrderingOnlyRecreateWaits(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/db", "v", "a/app", "v|~a/db")
	mustSet(t, s, "a/db", nil)
	sb.Remove("a/app")
	sb.ResetOps()
	resync(t, s, kvscheduler.DownstreamResync)
	wantOps(t, sb)
	wantState(t, s, "a/app", kvscheduler.Pending)
	mustSet(t, s, "a/db", "v")
	wantOps(t, sb, "create a/db", "create a/app")
}

// TestMixedKinds: a value that Requires one value and is ordered after
// another stays while only the second is gone, goes when the first goes,
// and is created again only once both are back.
func TestMixedKinds(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/req", "v", "a/ord", "v", "a/app", "v|a/req,~a/ord")
	mustSet(t, s, "a/ord", nil)
	wantState(t, s, "a/app", kvscheduler.Configured)
	sb.ResetOps()
	mustSet(t, s, "a/req", nil)
	wantOps(t, sb, "delete a/app", "delete a/req")
	mustSet(t, s, "a/req", "v")
	wantOps(t, sb, "create a/req")
	wantState(t, s, "a/app", kvscheduler.Pending)
	mustSet(t, s, "a/ord", "v")
	wantOps(t, sb, "create a/ord", "create a/app")
}

// TestOrderingOnlyResyncDeletesRetrievedInReverse: values found in the
// southbound by a new scheduler (an operator restarted), never requested,
// are deleted by its first full resync in reverse order of their
// dependencies, as read back from the values themselves: no wanted value
// records them.
func TestOrderingOnlyResyncDeletesRetrievedInReverse(t *testing.T) {
	s, sb := kindSched(t)
	sb.Set("a/1", "v", false)
	sb.Set("a/2", "v|~a/1", false)
	sb.Set("a/3", "v|~a/2", false)
	sb.Set("a/4", "v|~a/3", false)
	resync(t, s, kvscheduler.FullResync)
	wantOps(t, sb, "delete a/4", "delete a/3", "delete a/2", "delete a/1")
	wantSB(t, sb, nil)
}

// TestResyncDeletesRetrievedRequiresChainDependentsFirst: the same with
// Requires dependencies only. The cascade of a Requires dependency takes
// down a wanted dependent, not a value nothing wants: in key order, the
// delete of a/1 was refused while a/2, which depends on it, still existed.
func TestResyncDeletesRetrievedRequiresChainDependentsFirst(t *testing.T) {
	s, sb := kindSched(t)
	sb.Set("a/1", "v", false)
	sb.Set("a/2", "v|a/1", false)
	resync(t, s, kvscheduler.FullResync)
	wantOps(t, sb, "delete a/2", "delete a/1")
	wantSB(t, sb, nil)
}
