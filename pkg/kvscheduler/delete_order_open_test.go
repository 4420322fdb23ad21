package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestDeleteOrderOfAValueTheCascadeTakesAwayLater (adv5 fuzz seed 211,
// reduced): b/2 derives d/1 and d/2; a/3 Requires d/*, and r/2 Requires
// a/* and is ordered after d/1. b/2's update to a value that derives
// nothing deletes d/1, then d/2, whose delete takes a/3 down (into
// PENDING), and r/2 with it. r/2, ordered after d/1, must go before d/1
// (the delete order is one rule, whatever takes a value away), but the
// cascade that takes it away starts only at d/2.
func TestDeleteOrderOfAValueTheCascadeTakesAwayLater(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	for _, d := range fzDescs(sb, &fzCancel{}) {
		if err := s.RegisterDescriptor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("b/2", "v@1@2|").SetValue("a/3", "v|d/*").
		SetValue("r/2", "w|a/*,~d/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := sb.Values()
	if len(before) != 5 {
		t.Fatalf("the southbound holds %v, want b/2, d/1, d/2, a/3 and r/2", before)
	}
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("b/2", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
}

// TestDeleteOrderOfARecreateBeforeADependentALaterRequestTakesAway (adv5
// fuzz seeds 201 and 2970, reduced): a/1 is ordered after r/2, whose
// descriptor applies changes by re-creation. One transaction changes r/2
// and updates a/1 to a value whose dependency is missing (into PENDING).
// r/2's re-create deletes it while a/1, which the same transaction
// deletes further on, still exists: postponeTo postpones a delete request
// of the value, not a re-create's delete.
func TestDeleteOrderOfARecreateBeforeADependentALaterRequestTakesAway(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	for _, d := range fzDescs(sb, &fzCancel{}) {
		if err := s.RegisterDescriptor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("r/2", "v|").SetValue("a/1", "v|~r/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := sb.Values()
	if len(before) != 2 {
		t.Fatalf("the southbound holds %v, want r/2 and a/1", before)
	}
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("r/2", "w|").SetValue("a/1", "v|~r/2,n/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
}
