package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 7: "What a failed read-back left unknown is read by the next
// transaction before anything else (readUnknown)", "whatever the
// transaction"; notifications and retries do read it first. A descriptor's
// registration is a transaction too (DescriptorRegistration, with a record
// and operations) but does not: it applies the values the new descriptor
// takes over on the belief the failed read could not confirm.
//
// x/1 = a is held; the southbound loses it behind the scheduler's back;
// its update to b fails ("does not exist") and the read-back after the
// failure fails too, so x/1 is unknown (believed held, available: a failed
// update keeps its old value). y/1, requested before with no descriptor
// (UNIMPLEMENTED), Requires x/1. Registering y's descriptor creates y/1 at
// once, although x/1 is gone and nothing read it since: a create before
// its dependency exists, decided on a view a failed read left stale.

func TestAdv5RegistrationReadsWhatAFailedReadBackLeftUnknown(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("x", "x/"))
	mustSet(t, s, "x/1", "a", "y/1", "v|x/1")
	wantState(t, s, "y/1", kvscheduler.Unimplemented)
	sb.Remove("x/1")
	sb.FailNext("retrieve", "x", errors.New("read fails"))
	if _, err := s.StartNBTransaction().SetValue("x/1", "b").Commit(ctx); err == nil {
		t.Fatal("the update of x/1 failed and its read-back too, Commit returned nil")
	}
	sb.ResetOps()
	register(t, s, withDeps(sb.Descriptor("y", "y/")))
	got := sb.Values()
	if _, ok := got["y/1"]; ok {
		if _, ok := got["x/1"]; !ok {
			t.Fatalf("the registration of y created y/1, which Requires x/1, while the southbound holds no x/1 "+
				"(unknown since its read-back failed, not read again): ops %v, southbound %v; x/1 %s; y/1 %s",
				sb.OpStrings(), got, advState(s, "x/1"), advState(s, "y/1"))
		}
	}
}
