package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A key no descriptor claims, requested by the northbound (UNIMPLEMENTED:
// nothing applies the request), is held as the southbound notifies it:
// its notifications still take its dependents down and up, and the
// request stays as it is.
func TestRequestedUnclaimedKeyFollowsTheSouthboundsNotifications(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("y", "y/")))
	notify := func(v any) {
		t.Helper()
		if err := s.PushSBNotification("link/1", v, nil); err != nil {
			t.Fatal(err)
		}
		barrier(t, s)
	}
	notify("up")
	mustSet(t, s, "y/1", "v|link/1")
	_ = set(t, s, "link/1", "desired")
	wantState(t, s, "link/1", kvscheduler.Unimplemented)
	wantState(t, s, "y/1", kvscheduler.Configured)

	sb.ResetOps()
	notify(nil) // the southbound removed it
	wantOps(t, sb, "delete y/1")
	wantState(t, s, "y/1", kvscheduler.Pending)
	wantState(t, s, "link/1", kvscheduler.Unimplemented)

	sb.ResetOps()
	notify("up again")
	wantOps(t, sb, "create y/1")
	wantState(t, s, "y/1", kvscheduler.Configured)
	wantState(t, s, "link/1", kvscheduler.Unimplemented)

	_ = set(t, s, "link/1", nil) // withdrawn: the southbound's again
	wantState(t, s, "link/1", kvscheduler.Obtained)
	wantState(t, s, "y/1", kvscheduler.Configured)
}
