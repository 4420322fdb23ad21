package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A notification for a key no descriptor claims is accepted "as a value
// that only satisfies dependencies" (docs/kvscheduler.md, a deviation from
// the reference). When the northbound then requests that key (it cannot
// be applied: no descriptor, UNIMPLEMENTED), the value the southbound
// reported is taken for gone: its dependent is deleted. Once the
// northbound withdraws the request, the scheduler has forgotten the
// southbound's value: the dependent stays PENDING although the southbound
// never said the value went.

func TestAdvRequestingANotifiedUnclaimedKeyKeepsItsDependents(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("y", "y/")))
	if err := s.PushSBNotification("link/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "y/1", "v|link/1")
	wantOps(t, sb, "create y/1")

	err := set(t, s, "link/1", "desired") // no descriptor: it cannot be applied
	if _, ok := sb.Values()["y/1"]; !ok {
		t.Errorf("requesting link/1 (error %v) deleted y/1, whose dependency the southbound still holds; link/1: %s, y/1: %s",
			err, advState(s, "link/1"), advState(s, "y/1"))
	}
	_ = set(t, s, "link/1", nil) // withdrawn: link/1 is the southbound's again
	barrier(t, s)
	if st := s.GetValueStatus("y/1"); st.State != kvscheduler.Configured {
		t.Errorf("after the request for link/1 is withdrawn, y/1 is %s (unmet %v), link/1 is %s; the southbound never said link/1 went",
			st.State, st.UnmetDependencies, advState(s, "link/1"))
	}
}
