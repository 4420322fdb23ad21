package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A read that reports one key twice, with different values (a descriptor
// bug, a list that paged over a change), is a read the descriptor cannot
// give, like the empty key or the key without a value that docs/safety.md
// makes a failed read. The scheduler takes the first entry: a downstream
// resync meant to repair drift (a/1 changed to "y" behind its back) reads
// "x" first, finds a/1 in sync, repairs nothing and commits nil; the
// scoped repair does the same without even recording the duplicate. The
// southbound keeps "y" while a/1 is reported CONFIGURED with "x".

func TestAdv4ContradictoryReadIsNotTakenForTheValue(t *testing.T) {
	for _, scoped := range []bool{false, true} {
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		a := sb.Descriptor("a", "a/")
		ret, rk := a.Retrieve, a.RetrieveKeys
		stale := kvscheduler.KVWithMetadata{Key: "a/1", Value: "x"}
		a.Retrieve = func(ctx context.Context, corr []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			out, err := ret(ctx, corr)
			return append([]kvscheduler.KVWithMetadata{stale}, out...), err
		}
		a.RetrieveKeys = func(ctx context.Context, keys []string, corr []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			out, err := rk(ctx, keys, corr)
			return append([]kvscheduler.KVWithMetadata{stale}, out...), err
		}
		register(t, s, a)
		mustSet(t, s, "a/1", "x")
		sb.Set("a/1", "y", false) // drift
		sb.ResetOps()
		txn := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)
		if scoped {
			txn.WithResyncKeys("a/1")
		}
		rec, err := txn.Commit(context.Background())
		if got := sb.Values()["a/1"]; got != "x" && err == nil {
			t.Errorf("downstream resync (scoped %v) of a read reporting a/1 as both \"x\" and \"y\": Commit nil (record errors %v), ops %v, "+
				"the southbound holds %v, a/1 %s (reported %v)", scoped, rec.Errors, sb.OpStrings(), got, advState(s, "a/1"), advSBMismatch(s, sb, "a/"))
		}
	}
}
