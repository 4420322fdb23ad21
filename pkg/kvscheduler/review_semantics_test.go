package kvscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
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

// B.5 markFailedValue: a value that fails in a transaction with revert
// (outside the revert itself) is FAILED, never RETRYING, even when it was
// reached by cascade and its own request enabled retries.
func TestCascadeFailureInRevertTxnIsNotRetried(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("b/1", "x|a/1").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	sb.FailNext("create", "b/1", errors.New("boom"))
	_, err := s.StartNBTransaction().SetValue("a/1", "x").WithRevert().Commit(ctx)
	if err == nil {
		t.Fatal("no error")
	}
	wantState(t, s, "b/1", kvscheduler.Failed)
}

// B.7: an upstream resync does not read the southbound.
func TestUpstreamResyncDoesNotRetrieve(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	reads := 0
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		reads++
		return retrieve(ctx, c)
	}
	d.RetrieveKeys = nil
	register(t, s, d)
	sb.Set("a/9", "x", false)
	resync(t, s, kvscheduler.UpstreamResync, "a/1", "x")
	if reads != 0 {
		t.Fatalf("%d reads", reads)
	}
	wantSB(t, sb, map[string]any{"a/1": "x", "a/9": "x"})
}

// B.7 origin heuristics: in the first full resync, a retrieved value of
// unknown origin that the transaction requests takes the origin of its
// correlate entry (northbound), not the southbound's.
func TestFirstResyncOriginFromCorrelate(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	d.NBKeyPrefix = ""
	register(t, s, d)
	sb.Set("a/1", "x", false)
	txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("a/1", "x")
	rec, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Executed) != 0 {
		t.Fatalf("executed %+v, want nothing (the value is in sync)", rec.Executed)
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
}

// B.8 (unimplemented values): a value applied when a descriptor for it
// registers is checked against the dependencies and derived values that
// descriptor gives it, not those of the time it had none.
func TestUnimplementedValueGetsItsDescriptorsDependencies(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	mustSet(t, s, "a/1", "x|c/1")
	wantState(t, s, "a/1", kvscheduler.Unimplemented)
	register(t, s, withDeps(sb.Descriptor("a", "a/")))
	barrier(t, s)
	wantOps(t, sb)
	st := wantState(t, s, "a/1", kvscheduler.Pending)
	if len(st.UnmetDependencies) != 1 || st.UnmetDependencies[0] != "c/1" {
		t.Fatalf("unmet %v, want [c/1]", st.UnmetDependencies)
	}
}

// Rule 7: Commit names the INVALID values the transaction leaves, values
// derived from derived values included.
func TestCommitNamesInvalidValuesDerivedTwice(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "b/" + k, Value: v}}
	}
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "c/" + k, Value: v}}
	}
	c := sb.Descriptor("c", "c/")
	c.Validate = func(string, any) error { return errors.New("never valid") }
	register(t, s, a, b, c)
	wantInvalid(t, set(t, s, "a/1", "x"), "c/b/a/1")
}

// B.6: a revert re-applies the value each key had before the transaction,
// a value obtained from the southbound (by a resync) included: it is not
// deleted from the southbound.
func TestRevertRestoresAnObtainedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.Set("a/sb", "theirs", true)
	resync(t, s, kvscheduler.FullResync, "a/z", "old")
	wantState(t, s, "a/sb", kvscheduler.Obtained)
	sb.ResetOps()
	sb.FailNext("update", "a/z", errors.New("boom"))
	_, err := s.StartNBTransaction().SetValue("a/sb", "mine").SetValue("a/z", "new").WithRevert().Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted {
		t.Fatalf("error %v, want a reverted transaction", err)
	}
	wantSB(t, sb, map[string]any{"a/sb": "theirs", "a/z": "old"})
}

// Rule 7 / B.8: every operation of a retry transaction carries the attempt
// and the transaction being retried, not only the value that failed (here
// the property created with the retried value).
func TestRetryOpsAllCarryAttemptAndRetryFor(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "prop/" + k, Value: true}}
	}
	register(t, s, a)
	sb.FailNext("create", "a/1", errors.New("boom"))
	rec, err := s.StartNBTransaction().SetValue("a/1", "y").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	eventually(t, "the retry timer", func() bool { return clk.HasWaiters() })
	clk.Step(time.Second)
	eventually(t, "the retry", func() bool { return retries(s) == 1 })
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type != kvscheduler.RetryFailedOps {
			continue
		}
		for _, op := range r.Executed {
			if !op.Retry || op.Attempt != 1 || op.RetryFor != rec.SeqNum {
				t.Fatalf("retry op %+v, want attempt 1 of txn %d", op, rec.SeqNum)
			}
		}
	}
}
