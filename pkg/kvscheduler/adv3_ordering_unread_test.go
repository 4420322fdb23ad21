package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// docs/kvscheduler.md, "Two kinds of dependency": "the rules above
// (staying, updating in place, being in sync, keeping a delete from going
// through) judge a value that exists by its Requires dependencies alone";
// rule 7 holds back only operations decided on what a failed read could
// not see. The in-place update of an existing ordering-only dependent is
// decided on nothing its ordering-only dependency says (it is updated in
// place whether that value exists or not), yet a failed read of that
// value's descriptor refuses it: FAILED, "not applied: retrieve a", and
// the southbound keeps the old value, in a resync whose only other
// failure is the read.

func TestAdv3UnreadOrderingOnlyDependencyDoesNotHoldAnUpdate(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withKindDeps(sb.Descriptor("x", "x/")))
	mustSet(t, s, "a/1", "v", "x/1", "v|~a/1")
	sb.FailNext("retrieve", "a", errors.New("read of a fails"))
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("a/1", "v").SetValue("x/1", "w|~a/1").Commit(ctx)
	if got := sb.Values()["x/1"]; got != "w|~a/1" {
		t.Fatalf("x/1 (ordering-only after a/1) not updated in place: southbound %v, %s; Commit %v", got, advState(s, "x/1"), err)
	}
}
