package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// SBView is documented as "the values the scheduler believes exist in the
// southbound: as created or updated by it, or as last retrieved". With a
// ValueComparator that calls "x" and "X" equivalent, a request of "X" for
// a/1 (held as "x") runs no Update: the southbound keeps "x". The
// scheduler reports "X" as held, and goes on reporting it after a full
// resync that retrieved "x": the reported value is one the southbound
// never held, neither created, updated nor retrieved.

func TestAdv4EquivalentRequestIsNotReportedAsHeld(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.ValueComparator = func(_ string, o, n any) bool {
		os, _ := o.(string)
		ns, _ := n.(string)
		return strings.EqualFold(os, ns)
	}
	register(t, s, a)
	mustSet(t, s, "a/1", "x")
	sb.ResetOps()
	mustSet(t, s, "a/1", "X")
	wantOps(t, sb) // equivalent: no update
	advWantAgree(t, s, sb, "after the equivalent request (no Update ran)", "a/")
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("a/1", "X").Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a full resync that retrieved \"x\"", "a/")
}
