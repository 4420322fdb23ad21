package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv24UndoOfATakerOrderedAfterAFailedValueGoesFirst is adv5 fuzz
// seed 7305720 (-fzretry -fzrb -fzcancel -fzorder -fzamb -fzinv
// -fzdheld, "r/2 deleted before b/2 (v@2|~r/2,r/1), which depends on it
// and is deleted later in the same step"; fails on the code before h25f's
// fixes too) reduced. b/1 = w@1@2| derives d/1 and d/2; b/2 = v|~d/1
// (re-created on update, -fzrb); r/2 holds w|b/1 in the southbound, FAILED:
// its re-create to w|r/1,d/* failed at the delete. A transaction with
// revert re-creates b/2 as v@2|~r/2 (it takes d/2 from b/1 and is ordered
// after r/2), requests r/2 = v|b/2 and deletes b/1. b/1's delete is
// refused (r/2 still depends on it), so the transaction reverts. The
// undos of r/2 (re-created back to w|r/1,d/*) and of b/2 (re-created back
// to v|~d/1, giving d/2 back to b/1) both take their value away; b/2 is
// ordered after r/2, so b/2's undo must go first (docs/safety.md: "an
// undo that takes a value away ... is applied after the pending undos that
// take away a value depending on it"). r/2's goes first: ops [delete b/2
// create b/2 update d/2 delete d/1 delete r/2 create r/2 delete b/1 delete
// r/2 delete d/2 delete b/2 create b/2 ...]. With b/2 = v|~r/2, which
// takes no derived key, the order is right at this commit (it was not
// before h25f's fixes). Fixed (h25k): b/2's undo, due in the read-back's
// delete of r/2, was not pushed (dueUndo) because it had taken a derived
// key (undoOne's work); pushUndo now does that work itself.
func TestAdv24UndoOfATakerOrderedAfterAFailedValueGoesFirst(t *testing.T) {
	withFzFlags(t, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w@1@2|", "r/1", "v|", "b/2", "v|~d/1", "r/2", "w|b/1")
	sb.FailNext("delete", "r/2", errors.New("injected"))
	if err := set(t, s, "r/2", "w|r/1,d/*"); err == nil {
		t.Fatalf("r/2's re-create did not fail")
	}
	wantState(t, s, "r/2", kvscheduler.Failed)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/2", "v@2|~r/2").SetValue("r/2", "v|b/2").SetValue("b/1", nil).Commit(context.Background())
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the revert", "a/", "b/", "d/", "r/")
}

// TestAdv24DeleteOrderSeed7305720 pins adv5 fuzz seed 7305720 itself
// (reduced: TestAdv24UndoOfATakerOrderedAfterAFailedValueGoesFirst).
func TestAdv24DeleteOrderSeed7305720(t *testing.T) {
	adv15Seed(t, 7305720, []*bool{fzRetry, fzRecreateB, fzCancelF, fzOrder, fzAmbiguous, fzInvalid, fzDHeld})
}

// TestAdv24UndoIntoPendingOfADependentOfADeletedBaseGoesFirst is adv5
// fuzz seed 8016476 (-fzorder alone, "d/1 deleted before a/3 (w|~d/1),
// which depends on it and is deleted later in the same step"; fails on
// the code before h25f's fixes too) reduced. a/3 is requested as v|d/2,
// PENDING (nothing derives d/2). A transaction with revert creates b/1 =
// v@1@2| (derives d/1 and d/2), moves a/3 to w|~d/1 (created, ordered
// after d/1) and requests b/2 = w@2|, INVALID for its clash on d/2, so
// it reverts. b/1's undo deletes d/1 and d/2; a/3's undo, back to v|d/2,
// Requires d/2, which b/1's undo takes away, so a/3 goes too. a/3 is
// ordered after d/1: it must go before d/1 (docs/safety.md: an undo that
// takes a value away is applied after the pending undos that take away a
// value depending on it). It goes last: ops [... delete d/1 delete d/2
// delete b/1 delete a/3]. With a/3 requested as v|~d/2 before (its undo
// keeps it, an update) the order is right. Fixed (h25k): dependentUndos
// ran first only the dependents' undos that take their value away by
// themselves; a/3's undo, which keeps it while d/2 is there, now runs
// before b/1's too, and b/1's cascade then takes a/3 down before d/2.
func TestAdv24UndoIntoPendingOfADependentOfADeletedBaseGoesFirst(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "a/3", "v|d/2")
	wantState(t, s, "a/3", kvscheduler.Pending)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithRevert().SetValue("a/3", "w|~d/1").SetValue("b/1", "v@1@2|").SetValue("b/2", "w@2|").Commit(context.Background())
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	wantState(t, s, "a/3", kvscheduler.Pending)
	advWantAgree(t, s, sb, "after the revert", "a/", "b/", "d/", "r/")
}

// TestAdv24DeleteOrderSeed8016476 pins adv5 fuzz seed 8016476 itself
// (reduced: TestAdv24UndoIntoPendingOfADependentOfADeletedBaseGoesFirst).
func TestAdv24DeleteOrderSeed8016476(t *testing.T) {
	adv15Seed(t, 8016476, []*bool{fzOrder})
}

// TestAdv24UndoOfADependentCreatedByTheStepKeepsTheOrder is adv5 fuzz
// seed 8148682 (-fzorder -fzdd -fzprops -fzrb, "a/1 deleted before r/1
// (w|~a/1,d/*), which depends on it and is deleted later in the same
// step"; fails on the code before h25f's fixes too) reduced. r/1 =
// w|~a/1,d/* waits, PENDING, for a d/ key. A transaction with revert
// creates b/2 = v@1| (derives d/1), a/1 = w|b/2 and r/2 = w|a/1; d/1
// comes, so r/1 is created too (no request of its own: it has no undo),
// but r/2's create fails and the transaction reverts. a/1's undo deletes
// a/1 first; b/2's undo then takes d/1 away and the Requires cascade
// r/1 with it. r/1 is ordered after a/1, so it must go first (the pending
// undos are requests further on, see requestTakesAway; TestUndoDeletesDependentsFirst
// covers a dependent with an undo of its own): ops [create b/2 create a/1
// create d/1 create r/1 create r/2 delete a/1 delete r/1 delete d/1
// delete b/2]. In the seed the failure was d/2's create (b/2 = v@1@2|).
// Fixed (h25k): b/2's undo, which runs a/1's first (a/1 depends on b/2),
// was dropped from the undos still to apply (undoLeft) before a/1's ran,
// so r/1's cascade was not foreseen; it now stays there until it runs.
func TestAdv24UndoOfADependentCreatedByTheStepKeepsTheOrder(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "r/1", "w|~a/1,d/*")
	wantState(t, s, "r/1", kvscheduler.Pending)
	sb.FailNext("create", "r/2", errors.New("injected"))
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/2", "v@1|").SetValue("a/1", "w|b/2").SetValue("r/2", "w|a/1").Commit(context.Background())
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	wantState(t, s, "r/1", kvscheduler.Pending)
	advWantAgree(t, s, sb, "after the revert", "a/", "b/", "d/", "r/")
}

// TestAdv24DeleteOrderSeed8148682 pins adv5 fuzz seed 8148682 itself
// (reduced: TestAdv24UndoOfADependentCreatedByTheStepKeepsTheOrder).
func TestAdv24DeleteOrderSeed8148682(t *testing.T) {
	adv15Seed(t, 8148682, []*bool{fzOrder, fzDerivedDeps, fzProps, fzRecreateB})
}

// TestAdv24UndoOfAKeyTakerGoesAfterItsDependent is adv5 fuzz seed
// 9229813 (-fzorder -fzdd -fzrb -fzamb, "b/1 deleted before a/2
// (w|d/*,~b/1), which depends on it and is deleted later in the same
// step"; fails on the code before h25f's fixes too) reduced. b/2 = w@2|
// derives d/2 (re-created on update, -fzrb, -fzdd); a/2 = w|d/*,~b/1
// waits, PENDING, for b/1. A transaction with revert re-creates b/2 as
// v@2|b/1 and creates b/1 = w@2|: b/1 takes d/2, a/2 is created, and
// b/2's create is INVALID for the clash on d/2, so the transaction
// reverts. The undo gives d/2 back to b/2 and deletes b/1 first (the
// request that took a key goes back first), then takes a/2 down with d/2,
// which b/2's re-create back deletes: ops [... delete b/1 delete a/2
// delete d/2 create b/2 create d/2]. a/2 is ordered after b/1, so it must
// go first. Without -fzrb (b/2 updated in place) the order is right.
// Fixed (h25k): d/2, given back to b/2 (absent, its undo still to apply)
// before b/1's delete, was not counted as going (requestTakesAway), so
// a/2's cascade was not foreseen at b/1's delete.
func TestAdv24UndoOfAKeyTakerGoesAfterItsDependent(t *testing.T) {
	withFzFlags(t, fzDerivedDeps, fzRecreateB)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/2", "w@2|", "a/2", "w|d/*,~b/1")
	wantState(t, s, "a/2", kvscheduler.Pending)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/2", "v@2|b/1").SetValue("b/1", "w@2|").Commit(context.Background())
	if err == nil {
		t.Fatalf("the transaction did not fail (ops %v)", sb.OpStrings())
	}
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the revert", "a/", "b/", "d/")
}

// TestAdv24DeleteOrderSeed9229813 pins adv5 fuzz seed 9229813 itself
// (reduced: TestAdv24UndoOfAKeyTakerGoesAfterItsDependent).
func TestAdv24DeleteOrderSeed9229813(t *testing.T) {
	adv15Seed(t, 9229813, []*bool{fzOrder, fzDerivedDeps, fzRecreateB, fzAmbiguous})
}
