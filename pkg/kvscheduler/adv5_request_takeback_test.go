package kvscheduler_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// takeback.go: "The undo of a transaction that took a key over gives it
// back to its old base when that base, as the undo leaves it, still
// derives it, rather than delete it with the base that took it." That
// holds for a key another base took (takeOver notes it); a key the
// northbound's own request took (applyValue detaches it from its base
// directly, noting nothing) is not given back: the undo, last first,
// re-applies the old base while the key is still requested, finds a clash
// ("derives d/1, which the northbound requests"), makes the base INVALID
// and deletes it, then withdraws the request and re-creates the base.
//
// z/1 = v@1 derives d/1. One transaction with revert requests d/1 = nb
// (free: z/1 is requested further on with v@2, deriving d/2), z/1 = v@2
// and zz/1 = b, whose update fails. The undo deletes z/1 and d/1 and
// creates them again: a value wanted before and after the transaction
// (z/1 = v@1) is deleted, and re-created, by its undo.
// Fixed: the undo withdraws a request that took a derived key from a base
// before it re-applies that base's old value (takeback.go noteRequestTook,
// outcome.go revert).

func TestAdv5UndoOfARequestThatTookADerivedKeyDoesNotDeleteTheOldBase(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	z := sb.Descriptor("z", "z/")
	b, _ := adv3AtDerived(sb)
	z.DerivedValues = b.DerivedValues
	register(t, s, z, sb.Descriptor("d", "d/"), sb.Descriptor("zz", "zz/"))
	mustSet(t, s, "z/1", "v@1", "zz/1", "a")
	sb.ResetOps()
	sb.FailNext("update", "zz/1", errors.New("boom"))
	_, err := s.StartNBTransaction().WithRevert().
		SetValue("d/1", "nb").SetValue("z/1", "v@2").SetValue("zz/1", "b").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted {
		t.Fatalf("Commit returned %v, want a reverted transaction", err)
	}
	wantSB(t, sb, map[string]any{"z/1": "v@1", "d/1": "v@1", "zz/1": "a"})
	if ops := sb.OpStrings(); slices.Contains(ops, "delete z/1") {
		t.Fatalf("the undo deleted z/1, wanted before the transaction and after its undo (v@1): ops %v; z/1 %s",
			ops, advState(s, "z/1"))
	}
}
