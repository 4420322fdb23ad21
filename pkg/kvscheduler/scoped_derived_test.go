package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Issue 25, case 2: a downstream resync scoped to a base the southbound
// lost (WithResyncKeys, the repair path) knows the base's derived values,
// which the southbound still holds: it creates the base only, and reports
// the derived values CONFIGURED, as a full downstream resync of the same
// state does. Both setups of derived values are checked: a descriptor of
// their own that reads them back, and the base's descriptor claiming them
// with a Retrieve that returns them too.
func TestScopedResyncOfALostBaseKnowsItsDerivedValues(t *testing.T) {
	setups := []struct {
		name    string
		base    string
		derived string
		descs   func(sb *kvtest.Southbound) []*kvscheduler.Descriptor
	}{
		{"OwnDescriptor", "if/a", "addr/a/x", func(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
			return []*kvscheduler.Descriptor{ifaceWithAddrs(sb), sb.Descriptor("addr", "addr/")}
		}},
		{"ClaimedByTheBase", "a/1", "a/1/d/x", func(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
			return []*kvscheduler.Descriptor{claimingDescriptor(sb, false)}
		}},
	}
	for _, su := range setups {
		for _, scoped := range []bool{true, false} {
			name := su.name + "/Full"
			if scoped {
				name = su.name + "/Scoped"
			}
			t.Run(name, func(t *testing.T) {
				s := newSched(t, kvscheduler.Options{})
				sb := kvtest.New()
				register(t, s, su.descs(sb)...)
				mustSet(t, s, su.base, "x")
				wantSB(t, sb, map[string]any{su.base: "x", su.derived: "x"})
				sb.ResetOps()
				sb.Remove(su.base)
				txn := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)
				if scoped {
					txn.WithResyncKeys(su.base)
				}
				if _, err := txn.Commit(t.Context()); err != nil {
					t.Errorf("resync: %v", err)
				}
				wantOps(t, sb, "create "+su.base)
				wantSB(t, sb, map[string]any{su.base: "x", su.derived: "x"})
				wantState(t, s, su.base, kvscheduler.Configured)
				wantState(t, s, su.derived, kvscheduler.Configured)
			})
		}
	}
}

// A repair that re-creates a lost value leaves what depends on it alone:
// the dependents of a value a resync's read finds gone are checked again
// only if the resync did not re-create it (TestRandomRepro25F).
func TestScopedResyncRepairKeepsDependents(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "a/1", "x", "b/1", "y|a/1")
	sb.ResetOps()
	sb.Remove("a/1")
	if _, err := repair(s, "a/1"); err != nil {
		t.Fatal(err)
	}
	wantOps(t, sb, "create a/1")
	wantState(t, s, "b/1", kvscheduler.Configured)
}
