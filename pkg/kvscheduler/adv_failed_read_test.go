package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// "A resync that could not read the southbound changes nothing ... it
// neither deletes nor creates on its last belief" (safety.md, docs/
// kvscheduler.md), and "a partial view is never read as 'nothing exists'"
// (rules). A failed Retrieve of one descriptor used to hold back that
// descriptor's operations only: the values of other descriptors that
// depend on its values were deleted, as if what could not be read did not
// exist. Operations decided on what could not be read are held back too.

// advDependentPair registers descriptor x ("x/" keys) and y ("y/" keys,
// whose value "v|x/1" depends on x/1) on sb.
func advDependentPair(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound) {
	t.Helper()
	register(t, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
}

func TestAdvFirstResyncThatCannotReadKeepsDependents(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	advDependentPair(t, s, sb)
	// After a restart: both values exist as the northbound wants them.
	sb.Set("x/1", "a", false)
	sb.Set("y/1", "v|x/1", false)
	sb.FailNext("retrieve", "x", errors.New("x cannot be read"))
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("x/1", "a").SetValue("y/1", "v|x/1").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *TransactionError naming the failed read", err)
	}
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the resync could not read x, yet it ran %v; y/1: %s", ops, advState(s, "y/1"))
	}
	if _, ok := sb.Values()["y/1"]; !ok {
		t.Errorf("y/1, wanted and in the southbound with its dependency, was deleted")
	}
}

func TestAdvHeldBackDeleteKeepsDependents(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	advDependentPair(t, s, sb)
	mustSet(t, s, "x/1", "a", "y/1", "v|x/1")
	sb.ResetOps()
	sb.FailNext("retrieve", "x", errors.New("x cannot be read"))
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("y/1", "v|x/1").Commit(context.Background())
	if err == nil {
		t.Fatal("no error for the failed read")
	}
	if _, ok := sb.Values()["x/1"]; !ok {
		t.Fatal("x/1 was deleted although x could not be read")
	}
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the delete of x/1 was held back (x/1: %s), yet the resync ran %v; y/1: %s",
			advState(s, "x/1"), ops, advState(s, "y/1"))
	}
}
