package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv24ResumeOfAStoppedReCreateKeepsTheDeleteOrder is adv5 fuzz seed
// 8314733 (-fzorder -fzcancel -fzcancelall -fzrb -fzdd, "a/2 deleted
// before d/2 (dv-w@1@2|~a/2), which depends on it and is deleted later
// in the same step"; fails on the code before h25f's fixes too) reduced.
// b/2 = w@1@2|~a/2 derives d/1 and d/2, each ordered after a/2 (-fzdd).
// A transaction with revert re-creates b/2 as w@1@2| (-fzrb) and deletes
// a/2; its context ends during d/1's delete, the first operation of
// b/2's re-create. The next transaction resumes: it applies the stopped
// re-create again. It deleted a/2 first, and d/2, ordered after a/2,
// after it: ops [delete d/1 | delete a/2 delete d/2 delete b/2 create b/2
// create d/1 create d/2]: the resume took a/2's removal, whose delete
// never ran, for an undo's and applied it, removals first. Now it leaves
// a/2 as it is, as without revert (docs/kvscheduler.md, stopped
// transactions; TestAdv25StoppedRemovalWithRevertLeavesItsValue).
func TestAdv24ResumeOfAStoppedReCreateKeepsTheDeleteOrder(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzRecreateB, fzCancelAll)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	fc := &fzCancel{}
	register(t, s, fzDescs(sb, fc)...)
	mustSet(t, s, "a/2", "v|", "b/2", "w@1@2|~a/2")
	before := sb.Values()
	sb.ResetOps()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc.arm("d/1", cancel)
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/2", "w@1@2|").SetValue("a/2", nil).Commit(ctx)
	if !fc.disarm() && err == nil {
		t.Fatalf("the transaction was not stopped (ops %v)", sb.OpStrings())
	}
	// The resume, and a wait for the stopped transaction's end.
	if _, err := s.StartNBTransaction().Commit(context.Background()); err != nil {
		t.Fatalf("resume: %v (ops %v)", err, sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (stopped with %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the resume", "a/", "b/", "d/")
}

// TestAdv24DeleteOrderSeed8314733 pins adv5 fuzz seed 8314733 itself
// (reduced: TestAdv24ResumeOfAStoppedReCreateKeepsTheDeleteOrder).
func TestAdv24DeleteOrderSeed8314733(t *testing.T) {
	adv15Seed(t, 8314733, []*bool{fzOrder, fzCancelF, fzCancelAll, fzRecreateB, fzDerivedDeps})
}
