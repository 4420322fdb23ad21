package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// 200 values that each need x/1 and any one of the "y/" values (any-of by
// prefix: every value of the group counts on the others). Deleting x/1
// takes them all down; each one going was a change for all the others, so
// the walk exceeded its bound (64 frames per node of the graph) and was cut
// short: "the walk from x/1 did not end; N operations dropped" was in
// TxnRecord.Errors only. Commit returned nil, and nothing was deleted: the
// requested delete of x/1 silently did not happen. (With 100 values the
// walk ended, after 5.6 s measured here; with 50, 0.7 s: the cost
// grew about as the cube of the group.) Now a value going re-checks only
// the dependents it may take down, and a re-check supersedes the one of
// the same value still on the stack (walker.pushRecheck); a walk that is
// cut anyway fails its Commit (TestWalkCutShortIsReportedAndLeftToAResync).

func TestAdvDeleteUnderADenseAnyOfGroupIsAppliedOrReported(t *testing.T) {
	const group = 200
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
	mustSet(t, s, "x/1", "a")
	txn := s.StartNBTransaction()
	for i := 0; i < group; i++ {
		txn.SetValue(fmt.Sprintf("y/%04d", i), "v|y/*,x/1") // needs x/1 and any "y/" value
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(sb.Values()); got != group+1 {
		t.Fatalf("the southbound holds %d values, want %d", got, group+1)
	}

	rec, err := s.StartNBTransaction().SetValue("x/1", nil).Commit(context.Background())
	if _, ok := sb.Values()["x/1"]; ok && err == nil {
		t.Errorf("Commit of the delete of x/1 returned nil, but x/1 is still in the southbound (%s) with %d values; record errors %v",
			advState(s, "x/1"), len(sb.Values()), rec.Errors)
	}
}

func TestAdvNotifiedLossUnderADenseAnyOfGroupTakesItDown(t *testing.T) {
	const group = 200
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("y", "y/")))
	if err := s.PushSBNotification("link/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	txn := s.StartNBTransaction()
	for i := 0; i < group; i++ {
		txn.SetValue(fmt.Sprintf("y/%04d", i), "v|y/*,link/1")
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.PushSBNotification("link/1", nil, nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	if got := len(sb.Values()); got > 0 {
		t.Errorf("link/1 is gone, yet %d values that need it stay in the southbound; y/0000: %s", got, advState(s, "y/0000"))
	}
}
