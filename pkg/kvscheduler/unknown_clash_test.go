package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A create that did its work and then failed, whose read-back failed: the
// value is unknown, not absent. Its retry reads it before deciding (as
// every kind of transaction does, see readUnknown), finds it, and does
// not create it a second time (which the southbound would refuse: it
// exists), leaving it CONFIGURED.
func TestRetryReadsWhatAFailedReadBackLeftUnknown(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	create := a.Create
	halfDone := true
	a.Create = func(ctx context.Context, k string, v any) (any, error) {
		md, err := create(ctx, k, v)
		if halfDone && err == nil {
			halfDone = false
			return md, errors.New("timeout (after the southbound created it)")
		}
		return md, err
	}
	register(t, s, a)
	sb.FailNext("retrieve", "a", errors.New("read fails"))
	_, err := s.StartNBTransaction().SetValue("a/1", "x").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}).Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Retrieve) == 0 {
		t.Fatalf("Commit returned %v, want a *TransactionError naming the failed read-back", err)
	}
	wantState(t, s, "a/1", kvscheduler.Retrying)
	clk.Step(time.Second)
	eventually(t, "the retry", func() bool { return retries(s) == 1 })
	if n := creates(sb); n != 1 {
		t.Fatalf("%d creates of a/1, want 1 (the retry read it first and found it); ops %v", n, sb.OpStrings())
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"a/1": "x"})
}

// A base INVALID because it derives a key the southbound notified as its
// own is applied once the southbound withdraws the value: the clash is
// gone with the notification, and nothing waits for a resync.
func TestClashWithANotifiedKeyEndsWhenTheSouthboundWithdrawsIt(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	sb.Set("d/2", "z", true)
	if err := s.PushSBNotification("d/2", "z", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	_, err := s.StartNBTransaction().SetValue("b/2", "v").Commit(ctx)
	if err == nil || !strings.Contains(err.Error(), "southbound notified") {
		t.Fatalf("b/2 derives d/2, the southbound's own value: Commit %v, want INVALID naming the notification", err)
	}
	wantState(t, s, "b/2", kvscheduler.Invalid)
	sb.Remove("d/2")
	if err := s.PushSBNotification("d/2", nil, nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantState(t, s, "b/2", kvscheduler.Configured)
	wantSB(t, sb, map[string]any{"b/2": "v", "d/2": "v"})
	// By the notification's own transaction, not by the next one.
	var notified *kvscheduler.TxnRecord
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type == kvscheduler.SBNotification && len(r.Values) == 1 && r.Values[0].Value == nil {
			notified = r
		}
	}
	created := false
	for _, op := range notifiedOps(notified) {
		created = created || op.Key == "b/2" && op.Operation == kvscheduler.OpCreate && op.NewState == kvscheduler.Configured
	}
	if !created {
		t.Fatalf("the withdrawal's transaction did not create b/2: %v", notifiedOps(notified))
	}
}

func notifiedOps(r *kvscheduler.TxnRecord) []kvscheduler.RecordedOp {
	if r == nil {
		return nil
	}
	return r.Executed
}
