package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// B.5/B.6: an INVALID value of a transaction with revert fails it like a
// failed operation (the reference's applyCreate returns the validation
// error): the values applied before it are reverted, and the error names
// the invalid value.
func TestRevertOnInvalidValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	d.Validate = func(_ string, v any) error {
		if v == "bad" {
			return errors.New("bad value")
		}
		return nil
	}
	register(t, s, d)
	mustSet(t, s, "a/1", "old")
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("a/1", "new").SetValue("a/2", "bad").WithRevert().Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted || len(te.Invalid) != 1 || te.Invalid[0].Key != "a/2" {
		t.Fatalf("error %v, want a reverted transaction naming a/2 invalid", err)
	}
	wantSB(t, sb, map[string]any{"a/1": "old"})
	wantState(t, s, "a/1", kvscheduler.Configured)
}
