package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A takeover of a derived key followed by a failed update of the old
// base, with revert. b/1 = v@1 derives d/1. One transaction with revert
// requests b/0 = w@1 (which derives d/1: the key is free, since b/1 is
// requested further on with v@2, which derives d/2 instead) and b/1 =
// v@2, whose update fails. The undo must give back the state before the
// transaction: b/1 = v@1 with its derived value d/1 = v@1. The undo of
// b/1 updates d/1 back to v@1, but the undo of b/0 then deletes d/1 as
// b/0's derived value: b/1 is reported CONFIGURED with v@1, the
// transaction "reverted", and b/1's derived value d/1 is gone from the
// southbound until some downstream resync re-derives it.

func TestAdv4RevertOfADerivedKeyTakeoverKeepsTheOldBasesDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	sb.ResetOps()
	sb.FailNext("update", "b/1", errors.New("boom"))
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/0", "w@1").SetValue("b/1", "v@2").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("Commit %v, want a *TransactionError for the failed update of b/1", err)
	}
	want := map[string]any{"b/1": "v@1", "d/1": "v@1"}
	if got := sb.Values(); len(got) != len(want) || got["b/1"] != want["b/1"] || got["d/1"] != want["d/1"] {
		t.Errorf("after the revert (Reverted %v, error %v) the southbound holds %v, want the state before the transaction %v; ops %v; b/1 %s; d/1 %s",
			te.Reverted, err, got, want, sb.OpStrings(), advState(s, "b/1"), advState(s, "d/1"))
	}
}

// The same undo with the old base untouched: the takeover's own update of
// d/1 (to b/0's w@1) fails, so the transaction reverts before b/1's
// update. d/1 still holds v@1 (b/1's value); the undo of b/0 deletes it
// as b/0's derived value: b/1 = v@1 is left without d/1, reported
// CONFIGURED with last operation CREATE though no operation touched it,
// and the transaction reports Reverted.

func TestAdv4RevertOfAFailedTakeoverKeepsTheOldBasesDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	sb.ResetOps()
	sb.FailNext("update", "d/1", errors.New("boom"))
	_, err := s.StartNBTransaction().WithRevert().SetValue("b/0", "w@1").SetValue("b/1", "v@2").Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("Commit %v, want a *TransactionError for the failed update of d/1", err)
	}
	want := map[string]any{"b/1": "v@1", "d/1": "v@1"}
	if got := sb.Values(); len(got) != len(want) || got["b/1"] != want["b/1"] || got["d/1"] != want["d/1"] {
		t.Errorf("after the revert (Reverted %v, error %v) the southbound holds %v, want the state before the transaction %v; ops %v; b/1 %s; d/1 %s",
			te.Reverted, err, got, want, sb.OpStrings(), advState(s, "b/1"), advState(s, "d/1"))
	}
}
