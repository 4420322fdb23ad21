package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// readUnknown is skipped by a transaction that requests nothing and
// resyncs nothing, on the ground that it "decides nothing" (process.go).
// It does decide: it resumes what a transaction stopped by its context
// left undone (resume), and that creates values on the strength of values
// a failed read-back left unknown.
//
// x/1 = a is held; the southbound loses it; its update fails and the
// read-back fails: x/1 is unknown (believed held, available). The next
// transaction creates b/1; its read of the unknown x/1 fails again, so
// x/1 stays unknown and nothing this transaction decides counts on it.
// b/1's Create succeeds and its caller gives up (the context ends), so
// c/1, which Requires x/1 and b/1 and waited for b/1, is left for the
// next transaction to check again. The next transaction is empty (a
// barrier, as the event loop and tests use): it does not read x/1, and
// creates c/1, while the southbound holds no x/1.

func TestAdv5EmptyTransactionDoesNotResumeOnAnUnknownValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b := sb.Descriptor("b", "b/")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	create := b.Create
	b.Create = func(cctx context.Context, k string, v any) (any, error) {
		md, err := create(cctx, k, v)
		cancel() // the caller gives up once b/1 is created
		return md, err
	}
	register(t, s, sb.Descriptor("x", "x/"), b, withDeps(sb.Descriptor("c", "c/")))
	mustSet(t, s, "x/1", "a", "c/1", "v|x/1,b/1")
	wantState(t, s, "c/1", kvscheduler.Pending)
	sb.Remove("x/1")
	sb.FailNext("retrieve", "x", errors.New("read fails"), errors.New("read fails again"))
	if _, err := s.StartNBTransaction().SetValue("x/1", "b").Commit(context.Background()); err == nil {
		t.Fatal("the update of x/1 failed and its read-back too, Commit returned nil")
	}
	if _, err := s.StartNBTransaction().SetValue("b/1", "y").Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("the transaction creating b/1 returned %v, want the context's error", err)
	}
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	if _, ok := sb.Values()["c/1"]; ok {
		t.Fatalf("the stopped transaction created c/1 (x/1 unknown): %v", sb.OpStrings())
	}
	sb.ResetOps()
	barrier(t, s)
	got := sb.Values()
	if _, ok := got["c/1"]; ok {
		if _, ok := got["x/1"]; !ok {
			t.Fatalf("an empty transaction created c/1, which Requires x/1, while the southbound holds no x/1 "+
				"(unknown since its read-back failed, not read again): ops %v, southbound %v; x/1 %s; c/1 %s",
				sb.OpStrings(), got, advState(s, "x/1"), advState(s, "c/1"))
		}
	}
}
