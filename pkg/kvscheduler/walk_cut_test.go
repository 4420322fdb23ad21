package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A walk that exceeds its bound (a bug, or a graph denser than the walk is
// built for) drops the operations it had not run. Commit must say so
// (TransactionError.Cut, the keys in NotApplied), never return nil as if
// the transaction had done what it was asked; a resync then does the work.
func TestWalkCutShortIsReportedAndLeftToAResync(t *testing.T) {
	const group = 50
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
	mustSet(t, s, "x/1", "a")
	txn := s.StartNBTransaction()
	for i := 0; i < group; i++ {
		txn.SetValue(fmt.Sprintf("y/%04d", i), "v|y/*,x/1") // needs x/1 and any "y/" value
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Ten frames cannot take 50 values down.
	kvscheduler.SetWalkBound(s, 10)
	_, err := s.StartNBTransaction().SetValue("x/1", nil).Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || te.Cut == nil || !errors.Is(err, te.Cut) || te.OnlyFailedValues() {
		t.Fatalf("error %v, want a *TransactionError with Cut (not only failed values)", err)
	}
	if !slices.Contains(te.NotApplied, "x/1") {
		t.Errorf("NotApplied %v, want x/1 (its delete did not run)", te.NotApplied)
	}
	if _, ok := sb.Values()["x/1"]; !ok {
		t.Errorf("x/1 was deleted, yet its walk was cut before the delete")
	}
	kvscheduler.SetWalkBound(s, 0)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatalf("the resync after the cut: %v", err)
	}
	if got := sb.Values(); len(got) > 0 {
		t.Errorf("after the resync the southbound holds %d values, want none (x/1 deleted, its dependents with it)", len(got))
	}
}
