package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv3AtDerived returns descriptor "b" whose value "x@k" derives "d/k"
// (the value itself), and descriptor "d" claiming "d/" keys.
func adv3AtDerived(sb *kvtest.Southbound) (*kvscheduler.Descriptor, *kvscheduler.Descriptor) {
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		s, _ := v.(string)
		if _, k, ok := strings.Cut(s, "@"); ok {
			return []kvscheduler.KeyValuePair{{Key: "d/" + k, Value: s}}
		}
		return nil
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	return b, d
}

// Rule 8: a base is INVALID when a key it derives is one "another wanted
// base derives", and "nothing wanted is deleted under it". Two bases that
// swap their derived keys in one transaction request a state without any
// clash: b/1 derives d/2, b/2 derives d/1. The clash is checked against
// b/2's value before the transaction (applied later in key order), so
// b/1 is INVALID, its held value and derived value deleted, and Commit
// fails naming a clash the requested state does not have.

func TestAdv3BasesSwappingDerivedKeysInOneTransaction(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1", "b/2", "w@2")
	sb.ResetOps()
	err := set(t, s, "b/1", "v@2", "b/2", "w@1")
	want := map[string]any{"b/1": "v@2", "d/2": "v@2", "b/2": "w@1", "d/1": "w@1"}
	if got := sb.Values(); err != nil || len(got) != len(want) || got["b/1"] != want["b/1"] || got["d/2"] != want["d/2"] {
		t.Fatalf("swap: Commit %v, ops %v, southbound %v, want %v (b/1 %s)", err, sb.OpStrings(), got, want, advState(s, "b/1"))
	}
}

// The same order dependence between a request and a base: in one
// transaction z/1 stops deriving d/1 and the northbound requests d/1. d/1
// sorts first and is refused ("d/1 is derived from z/1"), although the
// value z/1 is requested with derives nothing. The request is then lost:
// d/1 is NONEXISTENT with no error, and a downstream resync ("re-apply
// the last desired values") does not create it either.
func TestAdv3RequestOfAKeyItsBaseStopsDerivingInOneTransaction(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	z := sb.Descriptor("z", "z/")
	b, _ := adv3AtDerived(sb)
	z.DerivedValues = b.DerivedValues
	register(t, s, z, sb.Descriptor("d", "d/"))
	mustSet(t, s, "z/1", "v@1")
	err := set(t, s, "d/1", "mine", "z/1", "v")
	_, rerr := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
	if got := sb.Values()["d/1"]; got != "mine" {
		t.Fatalf("d/1 requested as z/1 stops deriving it: Commit %v; after a downstream resync (%v) the southbound holds %v for d/1 (%s)",
			err, rerr, got, advState(s, "d/1"))
	}
}
