package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestDeleteOrderOfAValueTheCascadeOfABaseDeleteTakesAwayLater is
// TestDeleteOrderOfAValueTheCascadeTakesAwayLater with b/2 deleted
// rather than updated: its delete deletes d/1, then d/2, whose delete
// takes a/3 down (into PENDING), and r/2 with it. r/2, ordered after d/1,
// must go before d/1.
func TestDeleteOrderOfAValueTheCascadeOfABaseDeleteTakesAwayLater(t *testing.T) {
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
	if _, err := s.StartNBTransaction().SetValue("b/2", nil).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	after := sb.Values()
	if len(after) != 0 {
		t.Errorf("the southbound holds %v after b/2's delete, want nothing", after)
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
}
