package kvscheduler_test

import (
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv21DeleteOrderCheckJudgesARecordBeforeTheResyncByWhatItKnew
// checks the checker (adv5 fuzz seed 2227968, set A): d/2 drifted to
// v|r/1, the southbound's own, unread; a notification's record, applied
// before the step's downstream resync, deleted r/1 and then d/2, which the
// scheduler still knew as b/2's derived value, not ordered after r/1. The
// resync reads the drift only as it starts: the notification's record is
// judged by what the scheduler knew, the resync's own by the drift.
// Before, the checker took the drift for read by the whole step ("r/1
// deleted before d/2 (v|r/1), which depends on it and is deleted later in
// the same step").
func TestAdv21DeleteOrderCheckJudgesARecordBeforeTheResyncByWhatItKnew(t *testing.T) {
	// Set A has -fzdd: the d descriptor declares d/2's dependencies (see
	// fzHeldDeps).
	withFzFlags(t, fzDerivedDeps)
	before := map[string]any{"r/1": "v|d/1", "d/2": "v|r/1"}
	unseen := map[string]any{"d/2": "dv-v@1@2|n/*,~r/2"}
	ops := []kvtest.Op{{Operation: "delete", Key: "r/1"}, {Operation: "delete", Key: "d/2"}}
	del := func(k string) kvscheduler.RecordedOp {
		return kvscheduler.RecordedOp{Operation: kvscheduler.OpDelete, Key: k}
	}
	notified := &kvscheduler.TxnRecord{Type: kvscheduler.SBNotification, Executed: []kvscheduler.RecordedOp{del("r/1"), del("d/2")}}
	emptyResync := &kvscheduler.TxnRecord{Resync: kvscheduler.DownstreamResync}
	if msg := fzCheckDeleteOrderByTxn(before, ops, unseen, []*kvscheduler.TxnRecord{notified, emptyResync}); msg != "" {
		t.Errorf("a notification's record before the resync: %s", msg)
	}
	resync := &kvscheduler.TxnRecord{Resync: kvscheduler.DownstreamResync, Executed: []kvscheduler.RecordedOp{del("r/1"), del("d/2")}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, unseen, []*kvscheduler.TxnRecord{resync}); msg == "" {
		t.Error("the resync's own record deleted r/1 before d/2 (v|r/1), which it read: not reported")
	}
	scoped := &kvscheduler.TxnRecord{Resync: kvscheduler.DownstreamResync, ResyncKeys: []string{"a/1"}, Executed: []kvscheduler.RecordedOp{del("r/1"), del("d/2")}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, unseen, []*kvscheduler.TxnRecord{scoped}); msg != "" {
		t.Errorf("a resync scoped to a/1 (d/2 not read): %s", msg)
	}
}

// TestAdv21DeleteOrderSeed2227968 pins adv5 fuzz seed 2227968 of set A
// (see TestAdv21DeleteOrderCheckJudgesARecordBeforeTheResyncByWhatItKnew).
func TestAdv21DeleteOrderSeed2227968(t *testing.T) {
	adv15Seed(t, 2227968, adv15SetA)
}

// TestAdv21DeleteOrderSeed2110484 pins adv5 fuzz seed 2110484 (set A
// with -fzdheld -fzrec), the checker's: a/2 was drift-removed, created
// again by the scheduler as w|~r/2,r/1 (in a cycle with r/2 = v|~b/2,a/2
// and r/1 = v|~r/2) and drift-set again; the checker judged it only by
// its value before the first drift, saw no cycle, and reported "r/2
// deleted before r/1 (v|~r/2), which depends on it and is deleted later
// in the same step". The fuzz now forgets the drift of a key the
// scheduler wrote since.
func TestAdv21DeleteOrderSeed2110484(t *testing.T) {
	adv15Seed(t, 2110484, append(slices.Clone(adv15SetA), fzDHeld, fzRec))
}

// TestAdv21DeleteOrderSeed2246563 pins adv5 fuzz seed 2246563 (set A),
// the checker's as seed 2227968 is: b/2 drifted to w@1|~d/2, unread, and
// the retry of an earlier transaction, applied before the step's full
// resync read it, deleted d/2 and then b/2, which it knew as
// v@1@2|a/2, its base; the checker took the drift for read by the whole
// step ("d/2 deleted before b/2 (w@1|~d/2), which depends on it and is
// deleted later in the same step").
func TestAdv21DeleteOrderSeed2246563(t *testing.T) {
	adv15Seed(t, 2246563, adv15SetA)
}

// TestAdv21DeleteOrderSeed2247567 pins adv5 fuzz seed 2247567 (set B),
// the checker's as seed 2110484 is: b/2, drift-removed, created again by
// the scheduler and drift-set again, was judged by its value before the
// first drift, not by the one the scheduler wrote (in a cycle with a/3 =
// v|b/2): "b/2 deleted before a/3 (v|b/2), which depends on it and is
// deleted later in the same step".
func TestAdv21DeleteOrderSeed2247567(t *testing.T) {
	adv15Seed(t, 2247567, adv15SetB)
}
