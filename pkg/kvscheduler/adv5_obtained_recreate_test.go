package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The northbound takes over a value the southbound owns (OBTAINED) by
// requesting its key, as in the reference: the request is applied (an
// update, or a re-creation when the descriptor updates so). A re-creation
// whose delete waits for a dependent to go (its own delete failed) is
// released once that dependent is deleted; the released delete and
// create then run as the southbound's value's (origin FromSB: no Delete,
// no Create called), yet are recorded as run, with the request's value.
//
// r/1 = sb is the southbound's own (read: OBTAINED); b/1 Requires r/1.
// r's descriptor updates by re-creation. r/1 is requested as nb: its
// delete takes b/1 down first, whose delete fails, so r/1's delete fails
// and waits for b/1. b/1 is then withdrawn: its delete goes through, and
// r/1's re-creation is released. The record (found by a fuzz comparing
// records with what the southbound saw) carries "DELETE [RECREATE] r/1
// FAILED -> REMOVED" and "CREATE [RECREATE] r/1 REMOVED -> OBTAINED", the
// southbound saw neither, and keeps r/1 = sb; the scheduler reports r/1
// OBTAINED with the value nb, no error: the request is dropped and the
// report differs from the southbound.

func TestAdv5ReleasedRecreateOfATakenOverValueRuns(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	r := sb.Descriptor("r", "r/")
	r.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	register(t, s, r, withDeps(sb.Descriptor("b", "b/")))
	sb.Set("r/1", "sb", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "r/1", kvscheduler.Obtained)
	mustSet(t, s, "b/1", "w|r/1")
	sb.FailNext("delete", "b/1", errors.New("boom"))
	if err := set(t, s, "r/1", "nb"); err == nil {
		t.Fatal("the delete of b/1 failed, Commit returned nil")
	}
	sb.ResetOps()
	err := set(t, s, "b/1", nil)
	advWantAgree(t, s, sb, "after b/1's delete released r/1's re-creation", "r/")
	if got := sb.Values()["r/1"]; got != "nb" || s.GetValueStatus("r/1").State != kvscheduler.Configured {
		t.Errorf("r/1 requested as nb: Commit %v, ops %v, southbound r/1 = %v, r/1 %s; want nb, CONFIGURED",
			err, sb.OpStrings(), got, advState(s, "r/1"))
	}
}
