package kvscheduler_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv14UndoFailedInTheReadBackIsARevertFailure: an undo the revert's
// read-back applies early (see dueUndo, adv5 fuzz seed 25473, reduced: the
// read-back finds a/1 gone and its cascade takes r/1 down, so r/2's undo,
// ordered after r/1, goes first) is still an undo: when it fails, the
// transaction is not reverted and RevertFailed names it, as for any undo.
func TestAdv14UndoFailedInTheReadBackIsARevertFailure(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("a/1", "w|", "r/1", "v|a/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Remove("a/1")
	x.sb.ResetOps()
	x.sb.FailNext("delete", "r/2", errors.New("r/2 not deleted"))
	_, err := x.nb("r/2", "w|~r/1", "a/1", "v|").WithRevert().Commit(ctx)
	var terr *kvscheduler.TransactionError
	if !errors.As(err, &terr) {
		t.Fatalf("the transaction whose update of a/1 failed returned %v (ops %v)", err, x.sb.OpStrings())
	}
	if !slices.Contains(x.sb.OpStrings(), "delete r/2") {
		t.Fatalf("r/2's undo was not attempted (ops %v)", x.sb.OpStrings())
	}
	if terr.Reverted || !slices.ContainsFunc(terr.RevertFailed, func(ke kvscheduler.KeyError) bool { return ke.Key == "r/2" }) {
		t.Errorf("r/2's undo failed, yet Reverted=%v RevertFailed=%v Failed=%v (ops %v)", terr.Reverted, terr.RevertFailed, terr.Failed, x.sb.OpStrings())
	}
}
