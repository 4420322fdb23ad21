package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A resync whose Retrieve failed must not act on what the scheduler last
// believed: the descriptor's values are neither deleted nor created, the
// commit says why, and a later resync that can read does the work.
func TestFailedRetrieveChangesNothing(t *testing.T) {
	for _, resync := range []kvscheduler.ResyncType{kvscheduler.FullResync, kvscheduler.DownstreamResync} {
		t.Run(resync.String(), func(t *testing.T) {
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, sb.Descriptor("a", "a/"), sb.Descriptor("b", "b/"))
			mustSet(t, s, "a/1", "v1", "a/2", "v1", "b/1", "v1")
			// a/1 vanished behind the scheduler's back; a resync that
			// cannot read "a" must not re-create it, and a full resync
			// that no longer names a/2 must not delete it on a stale view.
			sb.Remove("a/1")
			sb.ResetOps()
			boom := errors.New("list a: connection refused")
			sb.FailNext("retrieve", "a", boom)
			txn := s.StartNBTransaction().WithResync(resync)
			if resync == kvscheduler.FullResync {
				txn.SetValue("a/1", "v1").SetValue("a/3", "v1").SetValue("b/1", "v2")
			}
			_, err := txn.Commit(context.Background())
			var te *kvscheduler.TransactionError
			if !errors.As(err, &te) || !errors.Is(err, boom) || len(te.Retrieve) != 1 || te.Retrieve[0].Descriptor != "a" {
				t.Fatalf("commit error %v, want a TransactionError naming the failed retrieve of a", err)
			}
			if te.OnlyFailedValues() {
				t.Fatal("a failed retrieve counts as a failed value only: the loop would not heal")
			}
			for _, o := range sb.OpStrings() {
				if strings.HasPrefix(o, "create a/") || strings.HasPrefix(o, "delete a/") || strings.HasPrefix(o, "update a/") {
					t.Fatalf("operation %q on a descriptor whose state could not be read (ops %v)", o, sb.OpStrings())
				}
			}
			if _, ok := sb.Values()["a/2"]; !ok {
				t.Fatal("a/2 deleted on the strength of a failed read")
			}
			if resync == kvscheduler.FullResync {
				// The readable descriptor converges as usual.
				if got := sb.Values()["b/1"]; got != "v2" {
					t.Fatalf("b/1 = %v, want v2", got)
				}
				if st := s.GetValueStatus("a/3"); st.State != kvscheduler.Failed || !errors.Is(st.Error, boom) {
					t.Fatalf("a/3 status %+v, want FAILED with the retrieve error", st)
				}
			}
			// Healing: the next downstream resync reads "a" and repairs.
			sb.ResetOps()
			if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"a/1": "v1", "a/2": "v1", "b/1": "v1"}
			if resync == kvscheduler.FullResync {
				want = map[string]any{"a/1": "v1", "a/3": "v1", "b/1": "v2"}
			}
			wantSB(t, sb, want)
		})
	}
}

// A transaction whose revert could not undo everything says so, names the
// failed undo and leaves that value FAILED, so that the loop heals.
func TestFailedRevertIsReported(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	retry := kvscheduler.RetryOptions{Period: 3600e9}
	if _, err := s.StartNBTransaction().SetValue("a/1", "v1").SetValue("a/2", "v1").WithRetry(retry).Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	sb.ResetOps()
	sb.FailNext("update", "a/2", errors.New("update refused"))
	// a/1 is updated, a/2 fails; undoing a/1 fails twice (the revert, then
	// the convergence on the restored desired state).
	undo := errors.New("undo refused")
	sb.FailNext("update", "a/1", nil)
	sb.FailNext("update", "a/1", undo, undo)
	_, err := s.StartNBTransaction().SetValue("a/1", "v2").SetValue("a/2", "v2").
		WithRevert().Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("error %v", err)
	}
	if te.Reverted || len(te.RevertFailed) != 1 || te.RevertFailed[0].Key != "a/1" || !errors.Is(err, undo) {
		t.Fatalf("error %v (%+v): want not reverted, with the failed undo of a/1", err, te)
	}
	if !strings.Contains(err.Error(), "not fully reverted") {
		t.Fatalf("error text %q does not say the revert was incomplete", err)
	}
	if te.OnlyFailedValues() {
		t.Fatal("an incomplete revert counts as failed values only: the loop would not heal")
	}
	if st := s.GetValueStatus("a/1"); st.State != kvscheduler.Retrying || !errors.Is(st.Error, undo) {
		t.Fatalf("a/1 status %+v, want RETRYING with the undo's error", st)
	}
}

// A resync attempts failed values again but does not forget their failures:
// the attempt counts and their backoff go on, so that MaxAttempts still ends
// the retries of a value that every healing fails again.
func TestResyncKeepsRetryCounts(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	refused := errors.New("refused for good")
	sb.FailNext("create", "a/1", refused, refused)
	_, err := s.StartNBTransaction().SetValue("a/1", "v1").
		WithRetry(kvscheduler.RetryOptions{Period: 3600e9, MaxAttempts: 1}).Commit(context.Background())
	if err == nil {
		t.Fatal("create did not fail")
	}
	wantState(t, s, "a/1", kvscheduler.Retrying)
	// A healing resync tries again; that was the one retry allowed.
	_, _ = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
	if st := wantState(t, s, "a/1", kvscheduler.Failed); !errors.Is(st.Error, refused) {
		t.Fatalf("a/1 status %+v", st)
	}
	wantOps(t, sb, "create a/1", "create a/1")
}
