package kvscheduler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv12DeleteOrderSeeds pins adv5 fuzz seeds 17627, 24739 and 25172 of
// -fzretry -fzamb -fznotifyall -fzdd -fzview -fzrb -fzorder (not reduced;
// see TestAdv12RecreatedDependentOfACascadedValueGoesFirst and
// TestAdv12ObtainedDerivedValueOfARecreatedBaseGoesBeforeWhatItNeeds) and
// seed 1265 of -fzorder alone (see
// TestAdv12ObtainedValueReCreatedOnTakeoverGoesBeforeWhatItNeeds).
func TestAdv12DeleteOrderSeeds(t *testing.T) {
	for _, seed := range []int64{17627, 24739, 25172} {
		msg, log := fzRunWith(seed, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", seed, msg, strings.Join(log, "\n"))
		}
	}
	if msg, log := fzRunWith(1265, []*bool{fzOrder}); msg != "" {
		t.Errorf("seed 1265: %s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv12UndoAfterAReadBackCascadeSeed25473 pins adv5 fuzz seed 25473
// of the same flags: a transaction with revert creates r/2 =
// w|~n/1,~r/1, then its update of a/1 fails (drift removed a/1); the
// read-back finds a/1 gone and the Requires cascade takes r/1 = v|a/1
// down, before the undo deletes r/2, which is ordered after r/1 ("r/1
// deleted before r/2 (w|~n/1,~r/1), which depends on it and is deleted
// later in the same step"). The undos still to do are among the values
// leaving the step: the cascade applies r/2's undo first (see dueUndo).
func TestAdv12UndoAfterAReadBackCascadeSeed25473(t *testing.T) {
	msg, log := fzRunWith(25473, []*bool{fzRetry, fzAmbiguous, fzNotifyAll, fzDerivedDeps, fzView, fzRecreateB, fzOrder})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv12ResumeWaitsOnAnUnrelatedUnknownValueSeed44978 pins adv5 fuzz
// seed 44978 of -fzretry -fzdd -fzdheld -fzcancel -fzcancelall -fzview
// -fzrec: a transaction creates b/1 = w@1@2| and d/1, then a/1 (made
// ready by d/1) fails ("already exists") and the cancel stops it before
// d/2; the read-back of a/1 fails too, and goes on failing. The next,
// empty, transaction's resume would create d/2. Before, the resume
// waited while any value was unknown, a/1 here, which d/2 does not need,
// and the empty transaction did not read it: b/1 stayed CONFIGURED
// without d/2 ("b/1 CONFIGURED (w@1@2|) but its d/2 is NONEXISTENT").
func TestAdv12ResumeWaitsOnAnUnrelatedUnknownValueSeed44978(t *testing.T) {
	withFzFlags(t, fzDHeld)
	msg, log := fzRunWith(44978, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzCancelAll, fzView, fzRec})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv12DeleteOrderCheckLeavesARefusedDeleteItsWait checks the
// checker: a value whose delete the scheduler refused (or that failed)
// before it deleted what the value is ordered after waits, as documented,
// and its delete going through later in the transaction is no wrong order
// (adv5 fuzz seed 10699); without that refusal first, it is.
func TestAdv12DeleteOrderCheckLeavesARefusedDeleteItsWait(t *testing.T) {
	before := map[string]any{"r/1": "w|", "b/2": "w@1|~r/1"}
	ops := []kvtest.Op{{Operation: "delete", Key: "r/1"}, {Operation: "delete", Key: "b/2"}}
	del := func(k string, err error) kvscheduler.RecordedOp {
		return kvscheduler.RecordedOp{Operation: kvscheduler.OpDelete, Key: k, Err: err}
	}
	refused := &kvscheduler.TxnRecord{Executed: []kvscheduler.RecordedOp{del("b/2", errors.New("not deleted")), del("r/1", nil), del("b/2", nil)}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{refused}); msg != "" {
		t.Errorf("b/2 refused before r/1 went: %s", msg)
	}
	late := &kvscheduler.TxnRecord{Executed: []kvscheduler.RecordedOp{del("r/1", nil), del("b/2", errors.New("not deleted")), del("b/2", nil)}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{late}); msg == "" {
		t.Error("r/1 deleted before b/2 (w@1|~r/1), b/2 attempted only after: not reported")
	}
}
