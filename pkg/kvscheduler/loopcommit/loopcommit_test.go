package loopcommit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// newScheduler returns a scheduler with one in-memory descriptor for keys
// "a/...", closed when the test ends.
func newScheduler(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	if err := s.RegisterDescriptor(context.Background(), sb.Descriptor("a", "a/")); err != nil {
		t.Fatal(err)
	}
	return s, sb
}

func TestCommitter(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	c := loopcommit.New(s)
	rec, err := c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.FullResync, Description: "startup",
		Values: []eventloop.KeyValue{{Key: "a/1", Value: "v1"}, {Key: "a/2", Value: "v2"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, kept := s.GetRecordedTransaction(rec.SeqNum)
	if !kept || r.Resync != kvscheduler.FullResync || r.Description != "startup" {
		t.Fatalf("summary %+v, scheduler's record %+v", rec, r)
	}
	if rec.Ref != "/scheduler/txn-history?seq-num=0" || len(rec.Ops) != 2 || rec.Ops[0] != (eventloop.TxnOp{Operation: "CREATE", Key: "a/1", State: "CONFIGURED"}) {
		t.Fatalf("summary %+v", rec)
	}
	if got := sb.Values(); len(got) != 2 {
		t.Fatalf("southbound %v", got)
	}
	sb.FailNext("create", "a/3", errors.New("boom"))
	_, err = c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.Update, RevertOnFailure: true,
		Values: []eventloop.KeyValue{{Key: "a/1", Value: nil}, {Key: "a/3", Value: "v3"}}})
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted {
		t.Fatalf("want reverted transaction error, got %v", err)
	}
	if got := sb.Values(); len(got) != 2 || got["a/1"] != "v1" {
		t.Fatalf("southbound after revert %v", got)
	}
	if _, err := c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.DownstreamResync}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.EventMethodType(42)}); err == nil {
		t.Fatal("unknown method accepted")
	}
}

// TestFailedValuesAreToleratedByDefault: one value the southbound refuses for
// good stays FAILED on that value, and the commit (so the loop) goes on; only
// FailOnFailedValues makes it fail the commit.
func TestFailedValuesAreToleratedByDefault(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	c := loopcommit.New(s)
	sb.FailNext("create", "a/1", errors.New("boom"))
	rec, err := c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.Update,
		Values: []eventloop.KeyValue{{Key: "a/1", Value: "v1"}, {Key: "a/2", Value: "v2"}}})
	if err != nil {
		t.Fatalf("a failed value failed the commit: %v", err)
	}
	if rec.FailedOps != 1 || len(rec.Ops) != 2 || rec.Ops[0].Key != "a/1" || rec.Ops[0].State != "FAILED" || rec.Ops[0].Error == "" {
		t.Errorf("the summary does not show the failure: %+v", rec)
	}
	if st := s.GetValueStatus("a/1"); st.State != kvscheduler.Failed || st.Error == nil {
		t.Errorf("a/1: %+v, want FAILED with the error", st)
	}
	if st := s.GetValueStatus("a/2"); st.State != kvscheduler.Configured {
		t.Errorf("a/2: %+v", st)
	}
	// A reverted transaction still fails: the event asked for all or nothing.
	sb.FailNext("create", "a/3", errors.New("boom"))
	_, err = c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.Update, RevertOnFailure: true,
		Values: []eventloop.KeyValue{{Key: "a/3", Value: "v3"}}})
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted {
		t.Fatalf("want reverted transaction error, got %v", err)
	}
	strict := loopcommit.NewWithOptions(s, loopcommit.Options{FailOnFailedValues: true})
	sb.FailNext("create", "a/4", errors.New("boom"))
	_, err = strict.Commit(ctx, eventloop.TxnRequest{Method: eventloop.Update,
		Values: []eventloop.KeyValue{{Key: "a/4", Value: "v4"}}})
	if !errors.As(err, &te) || te.Reverted {
		t.Fatalf("FailOnFailedValues: want the failed value's error, got %v", err)
	}
}

// A resync that could not read the southbound always fails the commit, although
// failed values are tolerated: the loop must heal, not carry on as if the
// view were complete.
func TestFailedRetrieveIsNeverTolerated(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	c := loopcommit.New(s)
	boom := errors.New("list refused")
	sb.FailNext("retrieve", "a", boom)
	_, err := c.Commit(ctx, eventloop.TxnRequest{Method: eventloop.DownstreamResync})
	if !errors.Is(err, boom) {
		t.Fatalf("commit error %v, want the failed retrieve", err)
	}
}
