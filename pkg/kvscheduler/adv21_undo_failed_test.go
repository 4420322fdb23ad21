package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv21UndoAfterAReleasedDeleteSeed2105355 is adv5 fuzz seed 2105355
// (-fzretry -fzdd -fzcancel -fzview -fzsnap -fzrec -fzorder -fzprops
// -fzinv) reduced. a/2 = v|d/* is FAILED, its delete having failed; b/1 =
// w@1@2| derives d/1 and d/2; r/1 Requires b/1 and d/2. A transaction
// with revert updates b/1 into PENDING (w@2|b/2, b/2 does not exist) and
// re-creates r/2 as v|~d/2, ordered after d/2. The deletes of d/1 and d/2
// are refused (a/2 still depends on them), so the transaction reverts.
// Before the undos, the revert makes the values whose delete failed
// available again. Their dependents are checked again, which retries a/2's
// delete. That delete goes through and releases the deletes that waited
// for it (d/1, d/2, b/1). r/2's pending undo (back to w|, a re-create)
// takes away r/2, which is ordered after d/2, so it must go before d/2's
// delete, as it does in the revert's read-back (dueUndo). Failed before
// h25f's fix with "d/2 deleted before r/2 (v|~d/2), which depends on it
// and is deleted later in the same step" (ops ... delete a/2, delete d/1,
// delete d/2, delete b/1, create b/1, create d/1, create d/2, create
// r/1, delete r/2, create r/2): the revert held the pending undos for
// dueUndo only during its read-back, not while it made the failed
// deletes available again.
func TestAdv21UndoAfterAReleasedDeleteSeed2105355(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzProps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w@1@2|", "r/1", "w|b/1,d/2", "r/2", "w|", "a/2", "v|d/*")
	sb.FailNext("delete", "a/2", errors.New("injected"))
	if _, err := s.StartNBTransaction().SetValue("a/2", nil).Commit(context.Background()); err == nil {
		t.Fatalf("the delete of a/2 did not fail")
	}
	wantState(t, s, "a/2", kvscheduler.Failed)
	before := sb.Values()
	sb.ResetOps()
	txn := s.StartNBTransaction().WithRevert().SetValue("b/1", "w@2|b/2").SetValue("r/2", "v|~d/2")
	_, err := txn.Commit(context.Background())
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	wantState(t, s, "r/2", kvscheduler.Configured)
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
}

// TestAdv21DeleteOrderSeed2105355 pins adv5 fuzz seed 2105355 itself
// (reduced: TestAdv21UndoAfterAReleasedDeleteSeed2105355).
func TestAdv21DeleteOrderSeed2105355(t *testing.T) {
	msg, log := fzRunWith(2105355, []*bool{fzRetry, fzDerivedDeps, fzCancelF, fzView, fzSnap, fzRec, fzOrder, fzProps, fzInvalid})
	if msg != "" {
		t.Fatalf("%s\n%s", msg, strings.Join(log, "\n"))
	}
}

// TestAdv21DeleteOrderSeed2103288 pins adv5 fuzz seed 2103288 (-fzretry
// -fzdd -fzrb -fzamb -fzorder -fzview -fznoownedr), which failed in a
// revert with "r/2 deleted before b/2 (v@1@2|~r/2), which depends on it
// and is deleted later in the same step" and passes since the revert
// holds its pending undos
// while it makes its failed deletes available again (see
// TestAdv21UndoAfterAReleasedDeleteSeed2105355).
func TestAdv21DeleteOrderSeed2103288(t *testing.T) {
	adv15Seed(t, 2103288, []*bool{fzRetry, fzDerivedDeps, fzRecreateB, fzAmbiguous, fzOrder, fzView, fzNoOwnedR})
}
