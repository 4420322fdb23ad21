package kvscheduler_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv13UndoIntoPendingGoesAfterItsDependents (adv5 fuzz seed 111067 of
// -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder, reduced): a/2 =
// w|p/1 waits for p/1; a transaction with revert re-creates b/2 as
// w@2|~a/2 and gives a/2 the value w|, which creates it and then b/2's
// derived d/2, ordered after a/2; d/2's create fails and the transaction
// reverts. The undo, last applied first, took a/2 back into PENDING, so
// a/2 was
// deleted before b/2 = w@2|~a/2, re-created back to v| right after: the
// undo order counted only a delete or a re-create as taking a value
// away, not an update back into PENDING. It now counts an update that
// surely takes the value away (see surelyGoes), so b/2's re-create goes
// first.
func TestAdv13UndoIntoPendingGoesAfterItsDependents(t *testing.T) {
	dd, rb := *fzDerivedDeps, *fzRecreateB
	*fzDerivedDeps, *fzRecreateB = true, true
	t.Cleanup(func() { *fzDerivedDeps, *fzRecreateB = dd, rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "v|", "a/2", "w|p/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	x.sb.FailNext("create", "d/2", errors.New("d/2 already exists"))
	if _, err := x.nb("b/2", "w@2|~a/2", "a/2", "w|").WithRevert().Commit(ctx); err == nil {
		t.Fatal("the transaction whose d/2 failed did not fail")
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); len(after) != 1 || after["b/2"] != "v|" {
		t.Errorf("after the undo the southbound holds %v, want only b/2=v|", after)
	}
}

// TestAdv13InvalidValueOfARevertedTransactionIsNotDeleted (adv5 fuzz seed
// 121358 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder,
// reduced): a transaction with revert re-creates b/1 as w|~b/2,~a/3,
// ordered after a/3, and updates a/3 to an invalid value. a/3's old value
// was deleted for the invalid one, then the undo created it again and
// re-created b/1 back: a/3 went before b/1, which was ordered after it
// and went later in the same step. The failure makes the transaction
// revert, and the undo gives a/3 back the value it holds: as for a
// derived-key clash (adv5 fuzz seed 2082), the invalid value is not
// deleted, and nothing of a/3's reaches the southbound.
func TestAdv13InvalidValueOfARevertedTransactionIsNotDeleted(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("a/3", "w|", "b/1", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := x.sb.Values()
	x.sb.ResetOps()
	if _, err := x.nb("b/1", "w|~b/2,~a/3", "a/3", "bad|a/2").WithRevert().Commit(ctx); err == nil {
		t.Fatal("the transaction with an invalid a/3 did not fail")
	}
	if msg := fzCheckDeleteOrder(before, x.sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, x.sb.OpStrings())
	}
	if after := x.sb.Values(); !maps.Equal(after, before) {
		t.Errorf("after the undo the southbound holds %v, want %v", after, before)
	}
	if st := x.s.GetValueStatus("a/3"); st.State != kvscheduler.Configured {
		t.Errorf("a/3 is %s after the undo, want CONFIGURED", st.State)
	}
}
