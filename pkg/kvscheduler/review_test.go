package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// boxed is a comparable type whose values may hold uncomparable ones:
// comparing two of them with == panics.
type boxed struct{ V any }

// A value of a comparable type holding an uncomparable one, applied twice,
// must not crash the scheduler (the check of "the same value as before"
// compared it with ==).
func TestUncomparableDynamicValueApplied(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	d := sb.Descriptor("d", "d/")
	d.Dependencies = func(string, any) []kvscheduler.Dependency { return nil }
	d.DerivedValues = func(string, any) []kvscheduler.KeyValuePair { return nil }
	register(t, s, d)
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{2}})
	wantState(t, s, "d/a", kvscheduler.Configured)
}

// A delete that keeps waiting for a dependent whose own delete keeps
// failing is recorded once, however often it is attempted again.
func TestWaitingDeleteRecordedOnce(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("d", "d/")))
	mustSet(t, s, "d/a", "a|d/b", "d/b", "b")
	for i := 0; i < 10; i++ {
		sb.FailNext("delete", "d/a", errors.New("boom"))
		txn := s.StartNBTransaction().SetValue("d/a", nil).SetValue("d/b", nil)
		if i > 0 {
			txn.WithResync(kvscheduler.DownstreamResync)
		}
		_, _ = txn.Commit(context.Background())
		wantState(t, s, "d/b", kvscheduler.Failed)
	}
	if n := kvscheduler.WaitingDeletes(s); n != 1 {
		t.Fatalf("%d waiting deletes recorded, want 1", n)
	}
}
