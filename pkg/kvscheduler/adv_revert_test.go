package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A transaction with revert deletes x/1 and with it y/1, which depends on
// x/1 (y/1's own new request, depending on x/2, comes later and is not
// reached); a later value fails and the revert re-creates x/1 and
// restores y/1's previous request. y/1 is not re-created: it stays
// PENDING with every dependency met, and no later plain transaction
// creates it (only a downstream resync does). When the transaction does
// not change y/1's request, the revert does re-create it.

func TestAdvRevertRecreatesTheDependentItTookDown(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
	mustSet(t, s, "x/1", "a", "x/2", "b", "y/1", "v|x/1")
	sb.ResetOps()

	sb.FailNext("create", "y/9", errors.New("y/9 fails"))
	_, err := s.StartNBTransaction().SetValue("x/1", nil).SetValue("y/1", "w|x/2").SetValue("y/9", "z").
		WithRevert().Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted {
		t.Fatalf("error %v, want a reverted *TransactionError", err)
	}
	t.Logf("ops %v", sb.OpStrings())
	barrier(t, s) // a later transaction re-checks what the previous one left
	want := map[string]any{"x/1": "a", "x/2": "b", "y/1": "v|x/1"}
	if got := sb.Values(); len(got) != len(want) || got["y/1"] != want["y/1"] {
		st := s.GetValueStatus("y/1")
		t.Errorf("after the revert the southbound holds %v, want %v; y/1: %s, unmet dependencies %v, dependencies %+v, NB view %v",
			got, want, advState(s, "y/1"), st.UnmetDependencies, st.Dependencies, s.DumpValues("", "y/", kvscheduler.NBView))
	}
}
