package kvscheduler_test

import (
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// fzUndoUnforeseen tells, for a reverted transaction's record, whether
// the delete of first was applied before anything in the transaction
// failed while the delete of later is an undo: the scheduler could not
// have known, when first went, that the undo would take later away, so
// the pair is no wrong order (adv5 fuzz seed 300421: r/2's re-create went
// before b/1 was found INVALID, and the undo then deleted b/2 = v@2|~r/2).
// A delete after the first failure (a read-back's cascade, seed 25473)
// is still judged against the undos.
func fzUndoUnforeseen(r *kvscheduler.TxnRecord) func(first, later string) bool {
	return func(first, later string) bool {
		beforeFailure, undone := false, false
		failed := false
		for _, o := range r.Executed {
			switch {
			case o.Err != nil && !o.Revert:
				failed = true
			case o.Operation != kvscheduler.OpDelete:
			case o.Key == first && !o.Revert && !failed:
				beforeFailure = true
			case o.Key == later && o.Revert && beforeFailure:
				undone = true
			}
		}
		return beforeFailure && undone
	}
}

// fzSkipEither skips a pair when any of skips does.
func fzSkipEither(skips ...func(first, later string) bool) func(first, later string) bool {
	return func(first, later string) bool {
		for _, s := range skips {
			if s(first, later) {
				return true
			}
		}
		return false
	}
}

// TestAdv15DeleteOrderCheckLeavesAForwardDeleteBeforeAnUnforeseenUndo
// checks the checker: a forward delete before any failure, followed by
// the undo's delete of a value ordered after it, is no wrong order; the
// same undo after a delete that came after a failure is (seed 25473's
// shape).
func TestAdv15DeleteOrderCheckLeavesAForwardDeleteBeforeAnUnforeseenUndo(t *testing.T) {
	before := map[string]any{"r/2": "w|", "b/2": "v@2|~r/2"}
	ops := []kvtest.Op{{Operation: "delete", Key: "r/2"}, {Operation: "delete", Key: "b/2"}}
	del := func(k string, revert bool) kvscheduler.RecordedOp {
		return kvscheduler.RecordedOp{Operation: kvscheduler.OpDelete, Key: k, Revert: revert}
	}
	unforeseen := &kvscheduler.TxnRecord{Executed: []kvscheduler.RecordedOp{del("r/2", false), del("b/2", true)}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{unforeseen}); msg != "" {
		t.Errorf("forward delete before an unforeseen undo: %s", msg)
	}
	failedFirst := &kvscheduler.TxnRecord{Executed: []kvscheduler.RecordedOp{
		{Operation: kvscheduler.OpUpdate, Key: "a/1", Err: errors.New("injected")},
		del("r/2", false), del("b/2", true),
	}}
	if msg := fzCheckDeleteOrderByTxn(before, ops, nil, []*kvscheduler.TxnRecord{failedFirst}); msg == "" {
		t.Error("r/2 deleted after a failure, before the undo deleted b/2 (v@2|~r/2): not reported")
	}
}
