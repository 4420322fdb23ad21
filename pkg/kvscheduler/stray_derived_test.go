package kvscheduler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A southbound may hold a derived value without its base: a read reports
// it after the base was lost (its own descriptor reads it). It is its
// base's all the same: it goes when the base is requested without it,
// whether the base is created, waits or is deleted, and a read-back of the
// base after a failure reads it too.

// strayIface is ifaceWithAddrs with dependencies: "x,y|dep/1" derives
// addr/a/x and addr/a/y and depends on dep/1.
func strayIface(sb *kvtest.Southbound) *kvscheduler.Descriptor {
	d := withDeps(sb.Descriptor("if", "if/"))
	d.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		addrs, _, _ := strings.Cut(v.(string), "|")
		var out []kvscheduler.KeyValuePair
		for _, a := range strings.Split(addrs, ",") {
			if a != "" {
				out = append(out, kvscheduler.KeyValuePair{Key: "addr/" + strings.TrimPrefix(key, "if/") + "/" + a, Value: a})
			}
		}
		return out
	}
	return d
}

// strayAddr sets up if/a with addr/a/x, then loses if/a behind the
// scheduler's back: the southbound holds addr/a/x alone.
func strayAddr(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, strayIface(sb), sb.Descriptor("addr", "addr/"))
	mustSet(t, s, "if/a", "x")
	sb.Remove("if/a")
	sb.ResetOps()
	return s, sb
}

// A base that waits deletes the derived values a read found without it
// (seeds 200248 and 276340 of TestRandomGraphs).
func TestStrayDerivedOfWaitingBaseGoes(t *testing.T) {
	s, sb := strayAddr(t)
	resync(t, s, kvscheduler.FullResync, "if/a", "|dep/1")
	wantOps(t, sb, "delete addr/a/x")
	wantSB(t, sb, map[string]any{})
	wantState(t, s, "if/a", kvscheduler.Pending)
}

// The delete of a base the southbound does not hold deletes the derived
// values a read found without it (seed 230321 of TestRandomGraphs).
func TestStrayDerivedOfDeletedAbsentBaseGoes(t *testing.T) {
	s, sb := strayAddr(t)
	sb.FailNext("create", "if/a", errors.New("refused"))
	txn := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)
	if _, err := txn.Commit(t.Context()); err == nil {
		t.Fatal("the resync's create of if/a did not fail")
	}
	wantSB(t, sb, map[string]any{"addr/a/x": "x"})
	sb.ResetOps()
	mustSet(t, s, "if/a", nil)
	wantOps(t, sb, "delete addr/a/x")
	wantSB(t, sb, map[string]any{})
}

// A read-back after a failure reads the failed base's derived values too:
// finding the base gone, it does not take for gone with it a derived value
// the southbound holds, which the base's next create, deriving nothing,
// then deletes (seeds 107292, 141985 and 211294 of TestRandomGraphs).
func TestReadBackOfFailedBaseReadsItsDerived(t *testing.T) {
	s, sb := strayAddr(t)
	if err := set(t, s, "if/a", "x,"); err == nil { // same derived value, another value: an update
		t.Fatal("the update of the lost if/a did not fail")
	}
	wantState(t, s, "addr/a/x", kvscheduler.Configured)
	sb.ResetOps()
	mustSet(t, s, "if/a", "")
	wantOps(t, sb, "create if/a", "delete addr/a/x")
	wantSB(t, sb, map[string]any{"if/a": ""})
}
