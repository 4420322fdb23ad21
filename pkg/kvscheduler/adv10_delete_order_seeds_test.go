package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv10DeleteOrderSeed23274 pins adv5 fuzz seed 23274 of -fznoownedr
// -fzretry -fzdd -fzorder -fzview (not reduced): r/1 = v| is re-created
// (w|) and b/2 = v@2| updated to w|n/1,d/* in one transaction; d/*'s only
// provider is d/2, which b/2's new value no longer derives, so b/2 goes
// into PENDING and the Requires cascade takes a/2 = v|b/2,~r/1 down. a/2 is
// ordered after r/1: it must go before r/1's delete. It went after it (ops
// "delete r/1, create r/1, delete d/2, delete a/2, ..."): r/1's delete
// counted d/2 as a provider b/2's update may keep.
func TestAdv10DeleteOrderSeed23274(t *testing.T) {
	msg, log := fzRunWith(23274, []*bool{fzNoOwnedR, fzRetry, fzDerivedDeps, fzOrder, fzView})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv10DeleteOrderSeed70373 pins adv5 fuzz seed 70373 of -fznoownedr
// -fzretry -fzdd -fzrb -fzorder (not reduced). Triaged as the checker's:
// its last step ran three transactions, the retry of transaction 5
// (re-creates r/2; a/3 = w|~r/2,r/1, ordered after r/2, stays, as an
// ordering-only dependent does), the retry of transaction 7 (deletes a/3
// for r/1's re-create, which it Requires) and the step's own; the
// checker paired r/2's delete in the first with a/3's in the second, and
// reported "r/2 deleted before a/3 (w|~r/2,r/1), which depends on it and
// is deleted later in the same step". Each transaction keeps the order;
// the check is now one per transaction (fzCheckDeleteOrderByTxn).
func TestAdv10DeleteOrderSeed70373(t *testing.T) {
	msg, log := fzRunWith(70373, []*bool{fzNoOwnedR, fzRetry, fzDerivedDeps, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv10DeleteOrderCheckIsOnePerTransaction checks the checker: a
// step of two transactions may delete, in the second, a value depending
// on one the first deleted, but not, within one, delete a value before
// one depending on it.
func TestAdv10DeleteOrderCheckIsOnePerTransaction(t *testing.T) {
	before := map[string]any{"r/2": "v|", "a/3": "w|~r/2"}
	rec := func(keys ...string) *kvscheduler.TxnRecord {
		r := &kvscheduler.TxnRecord{}
		for _, k := range keys {
			r.Executed = append(r.Executed, kvscheduler.RecordedOp{Operation: kvscheduler.OpDelete, Key: k})
		}
		return r
	}
	ops := []kvtest.Op{{Operation: "delete", Key: "r/2"}, {Operation: "delete", Key: "a/3"}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{rec("r/2"), rec("a/3")}); msg != "" {
		t.Errorf("two transactions: %s", msg)
	}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{rec("r/2", "a/3")}); msg == "" {
		t.Error("one transaction deleting r/2 before a/3, ordered after it: not reported")
	}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{rec("a/3"), rec("r/2")}); msg == "" {
		t.Error("records not lining up with the operations: not checked as one step")
	}
}

// TestAdv10DependentOfMixedKindsGoesBeforeARecreatedBasesDerivedValue is
// adv5 fuzz seed 201083 reduced (see
// TestAdv9DeleteOrderAfterFailedReadsAndARecreatedBase): b/2 = v@1|
// derives d/1, b/1 = v@2| derives d/2, a/3 = v|~d/1,d/* is ordered after
// d/1 and Requires any d/ key. One transaction re-creates b/2 as v| (d/1
// goes with it) and updates a/3 to w|d/1, which Requires d/1: a/3 goes
// (into PENDING), and must go before d/1. It went after it (ops [delete
// d/1 delete b/2 create b/2 delete a/3]): the cascade spares a/3 (d/2
// still meets d/*), and the check for a dependent a later request takes
// away looked only at dependents ordered after d/1 by ordering-only
// dependencies alone.
func TestAdv10DependentOfMixedKindsGoesBeforeARecreatedBasesDerivedValue(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@2|", "b/2", "v@1|", "a/3", "v|~d/1,d/*").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/2", "v|", "a/3", "w|d/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	for _, o := range x.sb.Ops(false) {
		if o.Key == "a/3" && o.Operation == "update" {
			t.Errorf("a/3 updated to %v before its delete into PENDING (ops %v)", o.Value, x.sb.OpStrings())
		}
	}
	if v, ok := x.sb.Values()["a/3"]; ok {
		t.Errorf("the southbound holds a/3 = %v, want it PENDING (d/1 gone)", v)
	}
}
