package kvscheduler_test

import (
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv5KindDescriptor returns descriptor "y" whose value "K:payload|dep"
// depends on dep, ordering-only when K is "o", Requires otherwise; the
// southbound holds the payload only, so the comparator ignores K (as a
// comparator ignores what the southbound does not hold, the way
// kubedescriptor's ignores what the API server fills in).
func adv5KindDescriptor(sb *kvtest.Southbound) *kvscheduler.Descriptor {
	y := sb.Descriptor("y", "y/")
	y.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		s, _ := v.(string)
		kind, rest, _ := strings.Cut(s, ":")
		_, dep, ok := strings.Cut(rest, "|")
		if !ok || dep == "" {
			return nil
		}
		d := kvscheduler.Dependency{Key: dep}
		if kind == "o" {
			d.Kind = kvscheduler.OrderingOnly
		}
		return []kvscheduler.Dependency{d}
	}
	y.ValueComparator = func(_ string, a, b any) bool {
		sa, _ := a.(string)
		sbv, _ := b.(string)
		_, pa, _ := strings.Cut(sa, ":")
		_, pb, _ := strings.Cut(sbv, ":")
		return pa == pb
	}
	return y
}

// The in-sync shortcut (insync.go) skips a request whose dependencies are
// "the same (labels, keys, prefixes...) and all met". sameDeps compares
// no Kind, and the "all met" check accepts staysByOrdering on the node's
// old dependencies: a request that turns an ordering-only dependency into
// one that Requires, with a value the comparator calls equal, is taken as
// in sync. The value stays held while what it now Requires is gone.
//
// y/1 = o:p|x/1 (ordering-only on x/1) and x/1 are held; x/1 is deleted
// and y/1 stays, as ordering-only says. y/1 is requested again as
// r:p|x/1: the same payload, now Requiring x/1. Its status says so
// (Dependencies: x/1, requires, Met false), yet it is CONFIGURED and held,
// and Commit returns nil. With a payload that differs (r:q|x/1) the walk
// deletes it into PENDING, as rule 3 says: "Delete a held value that is
// ... no longer ready".

func TestAdv5DependencyKindChangeIsNotInSync(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("x", "x/"), adv5KindDescriptor(sb))
	mustSet(t, s, "x/1", "a", "y/1", "o:p|x/1")
	mustSet(t, s, "x/1", nil)
	wantState(t, s, "y/1", kvscheduler.Configured) // ordering-only: it stays
	sb.ResetOps()
	err := set(t, s, "y/1", "r:p|x/1")
	st := s.GetValueStatus("y/1")
	if _, held := sb.Values()["y/1"]; held || st.State != kvscheduler.Pending {
		t.Fatalf("y/1 now Requires x/1, which is gone, yet: Commit %v, ops %v, southbound %v, y/1 %s, dependencies %+v; want y/1 deleted into PENDING",
			err, sb.OpStrings(), sb.Values(), advState(s, "y/1"), st.Dependencies)
	}
}
