package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A Retrieve that reports a key with no value (a descriptor bug, or a
// southbound object it could not decode) used to have its entry skipped
// ("skipped: nil value" in the record). The key was then taken for gone:
// the resync created a value the southbound holds, as if a partial view
// meant that nothing exists there. Such a read is now a failed read of
// the descriptor: its values stay as believed, and Commit names the read.

// advWantReadFailed fails the test unless err reports descriptor x's read
// as failed.
func advWantReadFailed(t *testing.T, err error) {
	t.Helper()
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Retrieve) != 1 || te.Retrieve[0].Descriptor != "x" {
		t.Errorf("error %v, want a *TransactionError naming the failed read of x", err)
	}
}

func TestAdvGarbledReadIsNotTakenForAbsence(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	x := sb.Descriptor("x", "x/")
	retrieve := x.Retrieve
	x.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		out, err := retrieve(ctx, c)
		for i := range out {
			if out[i].Key == "x/1" {
				out[i].Value = nil // reported, but not decoded
			}
		}
		return out, err
	}
	register(t, s, x)
	mustSet(t, s, "x/1", "a")
	sb.ResetOps()

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the resync ran %v on x/1, which the southbound holds as requested (error %v, record errors %v); x/1: %s",
			ops, err, rec.Errors, advState(s, "x/1"))
	}
	advWantReadFailed(t, err)
}

func TestAdvGarbledScopedReadIsNotTakenForAbsence(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	x := sb.Descriptor("x", "x/")
	retrieveKeys := x.RetrieveKeys
	x.RetrieveKeys = func(ctx context.Context, keys []string, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		out, err := retrieveKeys(ctx, keys, c)
		for i := range out {
			out[i].Value = nil // reported, but not decoded
		}
		return out, err
	}
	register(t, s, x, withDeps(sb.Descriptor("y", "y/")))
	mustSet(t, s, "x/1", "a", "y/1", "v|x/1")
	sb.ResetOps()

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("x/1").Commit(context.Background())
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the scoped resync ran %v although x/1 and y/1 are in the southbound as requested (error %v, record errors %v); x/1: %s; y/1: %s",
			ops, err, rec.Errors, advState(s, "x/1"), advState(s, "y/1"))
	}
	advWantReadFailed(t, err)
	advWantAgree(t, s, sb, "after the scoped resync", "x/", "y/")
}
