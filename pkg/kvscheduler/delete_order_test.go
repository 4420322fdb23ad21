package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Delete-order shapes the adv5 fuzz found (-fzorder), reduced: each sets
// values up, then runs one transaction whose deletes must go dependents
// first, whatever takes a value away.

// kv is one SetValue of a step (a nil value deletes).
type kv struct {
	key   string
	value any
}

// deleteOrderStep commits setup on the fuzz's descriptors, checks that the
// southbound then holds want values, commits step, and fails the test
// when a value went before one that depends on it and goes later in that
// step. It returns the southbound for further checks.
func deleteOrderStep(t *testing.T, setup []kv, want int, step []kv) *kvtest.Southbound {
	t.Helper()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	ctx := context.Background()
	for _, d := range fzDescs(sb, &fzCancel{}) {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(kvs []kv) {
		txn := s.StartNBTransaction()
		for _, e := range kvs {
			txn.SetValue(e.key, e.value)
		}
		if _, err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit(setup)
	before := sb.Values()
	if len(before) != want {
		t.Fatalf("the southbound holds %v, want %d values", before, want)
	}
	sb.ResetOps()
	commit(step)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	return sb
}

// cascadeSetup: b/2 derives d/1 and d/2; a/3 Requires d/*, and r/2
// Requires a/* and is ordered after d/1.
var cascadeSetup = []kv{{"b/2", "v@1@2|"}, {"a/3", "v|d/*"}, {"r/2", "w|a/*,~d/1"}}

// TestDeleteOrderOfAValueTheCascadeTakesAwayLater (adv5 fuzz seed 211,
// reduced): b/2's update to a value that derives nothing deletes d/1,
// then d/2, whose delete takes a/3 down (into PENDING), and r/2 with it.
// r/2, ordered after d/1, must go before d/1 (the delete order is one
// rule, whatever takes a value away), but the cascade that takes it away
// starts only at d/2.
func TestDeleteOrderOfAValueTheCascadeTakesAwayLater(t *testing.T) {
	deleteOrderStep(t, cascadeSetup, 5, []kv{{"b/2", "v|"}})
}

// TestDeleteOrderOfAValueTheCascadeOfABaseDeleteTakesAwayLater is
// TestDeleteOrderOfAValueTheCascadeTakesAwayLater with b/2 deleted
// rather than updated: its delete deletes d/1, then d/2, whose delete
// takes a/3 down (into PENDING), and r/2 with it. r/2, ordered after d/1,
// must go before d/1.
func TestDeleteOrderOfAValueTheCascadeOfABaseDeleteTakesAwayLater(t *testing.T) {
	sb := deleteOrderStep(t, cascadeSetup, 5, []kv{{"b/2", nil}})
	if after := sb.Values(); len(after) != 0 {
		t.Errorf("the southbound holds %v after b/2's delete, want nothing", after)
	}
}

// TestDeleteOrderOfARecreateBeforeADependentALaterRequestTakesAway (adv5
// fuzz seed 201, reduced): a/1 is ordered after r/2, whose descriptor
// applies changes by re-creation. One transaction changes r/2 and updates
// a/1 to a value whose dependency is missing (into PENDING). r/2's
// re-create deleted it while a/1, which the same transaction deletes
// further on, still existed, until a re-create was postponed as a delete
// request is (postponeTo).
func TestDeleteOrderOfARecreateBeforeADependentALaterRequestTakesAway(t *testing.T) {
	deleteOrderStep(t, []kv{{"r/2", "v|"}, {"a/1", "v|~r/2"}}, 2, []kv{{"r/2", "w|"}, {"a/1", "v|~r/2,n/1"}})
}

// TestDeleteOrderOfADependentTheCascadeOfALaterRequestTakesAway (adv5
// fuzz seed 370, reduced): r/1 Requires r/2 and is ordered after a/1. One
// transaction deletes a/1 and changes r/2, whose descriptor applies
// changes by re-creation (to a value that Requires a/*, so that it waits,
// or to one that comes back), or deletes r/2: r/2's delete takes r/1 down
// (into PENDING) in the same step, after a/1's delete had gone first. r/1,
// which the cascade of a request further on surely takes away, is taken
// down before a/1 goes; and it stays down (a/1, which it is ordered
// after, is gone).
func TestDeleteOrderOfADependentTheCascadeOfALaterRequestTakesAway(t *testing.T) {
	for _, v := range []any{"w|a/*", "v|n/2", "w|", nil} {
		t.Run(fmt.Sprintf("r/2 to %v", v), func(t *testing.T) {
			sb := deleteOrderStep(t, []kv{{"a/1", "w|"}, {"r/2", "v|"}, {"r/1", "v|~a/1,r/2"}}, 3,
				[]kv{{"a/1", nil}, {"r/2", v}})
			if _, ok := sb.Values()["r/1"]; ok {
				t.Errorf("the southbound holds r/1 without a/1: %v", sb.Values())
			}
		})
	}
}

// TestDeleteOrderOfARecreateBeforeADependentALaterClashTakesAway (adv5
// fuzz seed 2970, reduced): b/2=v@1|b/1,~r/1 is held, its derived d/1
// gone (b/1's update into a clash took b/2 down, whose delete failed). A
// downstream resync re-creates r/1 (the southbound changed it), then
// applies b/1's request, which now takes the free d/1, and b/2's, which
// derives d/1 too: b/2 is INVALID and deleted, after r/1's re-create
// deleted r/1, which b/2 is ordered after. r/1's re-create is postponed
// only after a later request that changes b/2 (postponeTo), and b/2's
// request is the value it holds: that the clash takes it away is judged
// only once b/1 took the key.
func TestDeleteOrderOfARecreateBeforeADependentALaterClashTakesAway(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	ctx := context.Background()
	for _, d := range fzDescs(sb, &fzCancel{}) {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(kvs ...any) error {
		txn := s.StartNBTransaction()
		for i := 0; i < len(kvs); i += 2 {
			txn.SetValue(kvs[i].(string), kvs[i+1])
		}
		_, err := txn.Commit(ctx)
		return err
	}
	if err := commit("b/1", "v|", "r/1", "w|", "b/2", "v@1|b/1,~r/1"); err != nil {
		t.Fatal(err)
	}
	sb.FailNext("delete", "b/2", errors.New("injected"))
	_ = commit("b/1", "w@1|~n/1") // b/1 INVALID for d/1: b/2 taken down, its delete failed
	if held := sb.Values(); held["b/2"] == nil || held["d/1"] != nil {
		t.Fatalf("the southbound holds %v, want b/2 without its d/1", held)
	}
	sb.Set("r/1", "w|a/1", false)
	before := sb.Values()
	sb.ResetOps()
	_, _ = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
}
