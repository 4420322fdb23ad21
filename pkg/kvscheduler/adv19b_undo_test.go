package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv19BUndoKeepsASiblingOfADerivedValueInACycleFirst is adv5 fuzz
// seed 2016412 (set A with -fzprops -fzinv -fzdheld; h25z's untriaged
// "undo order") reduced. The southbound holds r/2 = v|d/2 (drift). A
// transaction with revert creates r/1 = w|, r/2 = w|~r/1 (its create
// fails: already exists; read back, r/2 is v|d/2, Requiring d/2) and
// b/2 = w@1@2|~r/2, deriving d/1 and d/2 = dv-w@1@2|~r/2, both ordered
// after r/2. The undo deletes them all. r/2 and d/2 are a cycle (r/2
// Requires d/2, d/2 is ordered after r/2), but d/1 is not in it: it is
// ordered after r/2 and nothing of r/2 needs it, so d/1 must go before
// r/2 (order d/1, then r/2 and d/2 together, then b/2 and r/1); the walk
// can do it (b/2's undo first, its derived deletes starting together,
// r/2's undo due inside d/2's, see dueUndo). Before the fix the undo
// deleted r/2 first ("r/2 deleted before d/1 (dv-w@1@2|~r/2), which
// depends on it and is deleted later in the same step"; ops after the
// creates: delete r/2, delete d/1, delete d/2, delete b/2, delete r/1):
// dependentUndos (undoorder.go) left b/2 in place as a member of a cycle
// with r/2 (r/2 reaches b/2 through d/2), so the undo of b/2, and with it
// d/1, went after r/2's. Not a checker error: d/1 reaches r/2 and
// nothing leads back.
func TestAdv19BUndoKeepsASiblingOfADerivedValueInACycleFirst(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	sb.Set("r/2", "v|d/2", false)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithRevert().
		SetValue("b/2", "w@1@2|~r/2").SetValue("r/2", "w|~r/1").SetValue("r/1", "w|").Commit(context.Background())
	ops := sb.Ops(false)
	if err == nil {
		t.Fatal("r/2's create failed (already exists), Commit returned nil")
	}
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the revert", "b/", "d/", "r/")
}
