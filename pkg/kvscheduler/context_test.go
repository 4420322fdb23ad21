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

// hangGuard bounds waits that only a hang would exceed.
const hangGuard = 20 * time.Second

type commitResult struct {
	rec *kvscheduler.TxnRecord
	err error
}

// commitAsync commits txn with ctx on another goroutine.
func commitAsync(ctx context.Context, txn *kvscheduler.Txn) <-chan commitResult {
	out := make(chan commitResult, 1)
	go func() {
		rec, err := txn.Commit(ctx)
		out <- commitResult{rec, err}
	}()
	return out
}

func await[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// TestCommitCancelEndsTheCallbackInFlight cancels the context of a blocking
// Commit while a Create waits on the southbound: the Create sees its
// context end and returns, the Commit returns an error wrapping
// context.Canceled that names the value cut short and the one not applied,
// the scheduler goes on with the next transaction, and a later resync
// applies both values.
func TestCommitCancelEndsTheCallbackInFlight(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	block := sb.BlockNext("create", "a/1")
	t.Cleanup(block.Release)

	ctx, cancel := context.WithCancel(context.Background())
	committed := commitAsync(ctx, s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "y"))
	await(t, "the create of a/1", block.Entered())
	cancel()
	if err := await(t, "the create to return", block.Returned()); !errors.Is(err, context.Canceled) {
		t.Fatalf("the create returned because of %v, want its context's end", err)
	}
	r := await(t, "Commit to return after its context was cancelled", committed)
	var te *kvscheduler.TransactionError
	if !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &te) {
		t.Fatalf("Commit: %v, want a *TransactionError wrapping context.Canceled", r.err)
	}
	if len(te.Failed) != 1 || te.Failed[0].Key != "a/1" || te.Failed[0].Operation != kvscheduler.OpCreate ||
		!errors.Is(te.Failed[0].Err, context.Canceled) {
		t.Fatalf("failed %v, want the create of a/1, cut short by the context", te.Failed)
	}
	if len(te.NotApplied) != 1 || te.NotApplied[0] != "a/2" || !strings.Contains(r.err.Error(), "a/1") ||
		!strings.Contains(r.err.Error(), "a/2") {
		t.Fatalf("Commit: %v (not applied %v), want a/1 failed and a/2 not applied, both named", r.err, te.NotApplied)
	}
	if te.OnlyFailedValues() {
		t.Fatal("a canceled transaction reports only failed values: the committer would not resync")
	}
	if r.rec == nil || len(r.rec.NotApplied) != 1 {
		t.Fatalf("record %v, want a/2 not applied", r.rec)
	}

	// The scheduler is not stuck in the callback.
	if err := await(t, "the next transaction", commitAsync(context.Background(), s.StartNBTransaction())).err; err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{})
	wantState(t, s, "a/1", kvscheduler.Failed)

	// A later resync applies what the canceled transaction did not.
	_, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "y").
		WithResync(kvscheduler.FullResync).Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"a/1": "x", "a/2": "y"})
	wantState(t, s, "a/1", kvscheduler.Configured)
}

// TestCallbackContexts checks which context callbacks get: a blocking
// Commit's, with its values, that ends with it; for a NonBlocking
// transaction and a retry, the scheduler's lifetime context, which the
// context of the Commit that armed the retry does not end, and Close does.
func TestCallbackContexts(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	seen := make(chan context.Context, 8)
	create := d.Create
	d.Create = func(ctx context.Context, k string, v any) (any, error) {
		seen <- ctx
		return create(ctx, k, v)
	}
	register(t, s, d)

	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "caller"))
	defer cancel()
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-seen
	if got.Value(key{}) != "caller" {
		t.Fatal("the callback of a blocking Commit does not see its context's values")
	}
	if got.Err() == nil {
		t.Fatal("the context of a blocking Commit's callback outlives the Commit")
	}

	if _, err := s.StartNBTransaction().SetValue("a/2", "x").NonBlocking().Commit(ctx); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	if got := <-seen; got.Value(key{}) != nil || got.Err() != nil {
		t.Fatalf("a NonBlocking transaction's callback got the caller's context, or an ended one (%v)", got.Err())
	}

	// The retry of a value whose Commit's context has ended since.
	retryCtx, retryCancel := context.WithCancel(context.Background())
	sb.FailNext("create", "a/3", errors.New("boom"))
	_, err := s.StartNBTransaction().SetValue("a/3", "x").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(retryCtx)
	if err == nil {
		t.Fatal("the first create of a/3 did not fail")
	}
	<-seen
	retryCancel()
	eventually(t, "the retry timer", func() bool { return clk.HasWaiters() })
	clk.Step(time.Second)
	retried := await(t, "the retry's create", seen)
	eventually(t, "the retry", func() bool { return s.GetValueStatus("a/3").State == kvscheduler.Configured })
	if retried.Err() != nil {
		t.Fatalf("the retry's callback got an ended context: %v", retried.Err())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if retried.Err() == nil {
		t.Fatal("the retry's context does not end when the scheduler closes")
	}
}

// TestCloseEndsTheCallbackOfABlockingCommit closes the scheduler while a
// blocking Commit's Create waits on the southbound: its context ends too,
// Close returns without abandoning it, and the Commit's error says the
// scheduler closed.
func TestCloseEndsTheCallbackOfABlockingCommit(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	block := sb.BlockNext("create", "a/1")
	t.Cleanup(block.Release)
	committed := commitAsync(context.Background(), s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "y"))
	await(t, "the create of a/1", block.Entered())
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r := await(t, "Commit", committed)
	var te *kvscheduler.TransactionError
	if !errors.Is(r.err, kvscheduler.ErrClosed) || !errors.As(r.err, &te) || len(te.NotApplied) != 1 {
		t.Fatalf("Commit: %v, want a *TransactionError wrapping ErrClosed, with a/2 not applied", r.err)
	}
	wantSB(t, sb, map[string]any{})
}

// TestCommitCancelStopsTheUndo cancels a transaction with revert while its
// second value's Create waits: that create fails, and the undo of the
// first value, which would need the southbound, is not applied either, so
// the error does not claim a revert and names it.
func TestCommitCancelStopsTheUndo(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	block := sb.BlockNext("create", "a/2")
	t.Cleanup(block.Release)
	ctx, cancel := context.WithCancel(context.Background())
	committed := commitAsync(ctx, s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "y").WithRevert())
	await(t, "the create of a/2", block.Entered())
	cancel()
	r := await(t, "Commit", committed)
	var te *kvscheduler.TransactionError
	if !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &te) {
		t.Fatalf("Commit: %v, want a *TransactionError wrapping context.Canceled", r.err)
	}
	if te.Reverted || len(te.NotApplied) != 1 || te.NotApplied[0] != "a/1" {
		t.Fatalf("Commit: %v (reverted %v, not applied %v), want the undo of a/1 not applied", r.err, te.Reverted, te.NotApplied)
	}
	wantSB(t, sb, map[string]any{"a/1": "x"})
}

// TestCommitCancelWhileQueued cancels a Commit whose transaction waits
// behind another: Commit returns at once, and the transaction applies
// nothing when its turn comes.
func TestCommitCancelWhileQueued(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	block := sb.BlockNext("create", "a/1")
	t.Cleanup(block.Release)
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").NonBlocking().Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	await(t, "the create of a/1", block.Entered())
	ctx, cancel := context.WithCancel(context.Background())
	committed := commitAsync(ctx, s.StartNBTransaction().SetValue("a/2", "y"))
	cancel()
	if r := await(t, "Commit of the queued transaction", committed); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Commit: %v, want context.Canceled", r.err)
	}
	block.Release()
	barrier(t, s)
	wantSB(t, sb, map[string]any{"a/1": "x"})
}

// TestCommitCancelEndsTheRetrieveInFlight cancels a resync while its
// Retrieve waits on the southbound: the Retrieve returns, nothing is
// applied on the strength of a read that did not happen, and the Commit's
// error names the descriptor and wraps context.Canceled.
func TestCommitCancelEndsTheRetrieveInFlight(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "x")
	sb.Remove("a/1") // drift a resync would repair
	block := sb.BlockNext("retrieve", "a")
	t.Cleanup(block.Release)
	ctx, cancel := context.WithCancel(context.Background())
	committed := commitAsync(ctx, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	await(t, "the retrieve", block.Entered())
	cancel()
	r := await(t, "Commit", committed)
	var te *kvscheduler.TransactionError
	if !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &te) || len(te.Retrieve) != 1 || te.Retrieve[0].Descriptor != "a" || te.Canceled == nil {
		t.Fatalf("Commit: %v, want a *TransactionError wrapping context.Canceled that names the retrieve of a", r.err)
	}
	wantSB(t, sb, map[string]any{})
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, map[string]any{"a/1": "x"})
}
