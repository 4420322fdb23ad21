package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// Issue 25, case 4: the record says what the reference's says. Each test
// names the part of the reference's record it pins.

// opLine formats the recorded operations as "CREATE a/1 PENDING" lines,
// with the flags the tests look at.
func opLines(ops []kvscheduler.RecordedOp) string {
	var out []string
	for _, op := range ops {
		l := fmt.Sprintf("%s %s %s->%s", op.Operation, op.Key, op.PrevState, op.NewState)
		if op.Recreate {
			l += " recreate"
		}
		out = append(out, l)
	}
	return strings.Join(out, ", ")
}

func wantRecord(t *testing.T, rec *kvscheduler.TxnRecord, want ...string) {
	t.Helper()
	if got := opLines(rec.Executed); got != strings.Join(want, ", ") {
		t.Errorf("recorded:\n got  %s\n want %s", got, strings.Join(want, ", "))
	}
}

// The first transaction is number 0, as in the reference (its tests expect
// seqNum 0 from the first Commit).
func TestFirstTransactionIsNumberZero(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.FailNext("create", "a/1", errors.New("boom"))
	rec, err := s.StartNBTransaction().SetValue("a/1", "x").Commit(context.Background())
	if rec.SeqNum != 0 || !strings.Contains(fmt.Sprint(err), "transaction #0 failed") {
		t.Errorf("first transaction #%d (error %v), want #0", rec.SeqNum, err)
	}
	rec, _ = s.StartNBTransaction().SetValue("a/2", "x").Commit(context.Background())
	if rec.SeqNum != 1 {
		t.Errorf("second transaction #%d, want #1", rec.SeqNum)
	}
	if got, ok := s.GetRecordedTransaction(0); !ok || got.SeqNum != 0 || len(got.Executed) != 1 {
		t.Errorf("transaction #0 in the history: %v %v", got, ok)
	}
}

// The derived values of a re-created base are flagged as re-created, as
// the reference marks the base's derived keys while it re-creates it
// (txn_exec.go, args.recreating; datachange_test.go
// TestDataChangeTransactions checks IsRecreate on them): those the old
// value derived, not a new one.
func TestRecreatedBaseFlagsItsDerivedValues(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := arrayDescriptor(sb, "a", "a/")
	a.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	register(t, s, a)
	mustSet(t, s, "a/1", "x,y")
	rec, err := s.StartNBTransaction().SetValue("a/1", "x,z").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantRecord(t, rec,
		"DELETE a/1/x CONFIGURED->REMOVED recreate", "DELETE a/1/y CONFIGURED->REMOVED recreate",
		"DELETE a/1 CONFIGURED->REMOVED recreate", "CREATE a/1 REMOVED->CONFIGURED recreate",
		"CREATE a/1/x REMOVED->CONFIGURED recreate", "CREATE a/1/z NONEXISTENT->CONFIGURED")
}

// A value whose retry is armed is recorded RETRYING at its operation, as
// the reference's record does (notification_test.go
// TestNotificationsWithRetry: NewState RETRYING), not only in its status.
func TestArmedRetryIsRecordedRetrying(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	sb.FailNext("create", "a/1", errors.New("busy"))
	sb.FailNext("create", "a/2", errors.New("busy"))
	rec, _ := s.StartNBTransaction().SetValue("a/1", "x").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}).Commit(context.Background())
	wantState(t, s, "a/1", kvscheduler.Retrying)
	wantRecord(t, rec, "CREATE a/1 NONEXISTENT->RETRYING")
	rec, _ = s.StartNBTransaction().SetValue("a/2", "x").Commit(context.Background())
	wantState(t, s, "a/2", kvscheduler.Failed)
	wantRecord(t, rec, "CREATE a/2 NONEXISTENT->FAILED")
}

// Operations are compressed as the reference's compressTxnOps does: a
// CREATE that left a value PENDING is dropped when a later CREATE of the
// key follows in the transaction (the later one takes its previous
// state), and a delete from PENDING to REMOVED merges into the earlier
// delete that left the value PENDING.
func TestRecordCompressesPendingOperations(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")), sb.Descriptor("b", "b/"), withDeps(sb.Descriptor("c", "c/")))
	// a/1 comes first in the transaction and waits for b/1, created next.
	rec, err := s.StartNBTransaction().SetValue("a/1", "x|b/1").SetValue("b/1", "y").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantRecord(t, rec, "CREATE b/1 NONEXISTENT->CONFIGURED", "CREATE a/1 NONEXISTENT->CONFIGURED")
	// c/1 goes PENDING with b/1, then is removed by its own delete.
	mustSet(t, s, "c/1", "z|b/1")
	rec, err = s.StartNBTransaction().SetValue("b/1", nil).SetValue("c/1", nil).Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantRecord(t, rec, "DELETE a/1 CONFIGURED->PENDING", "DELETE c/1 CONFIGURED->REMOVED", "DELETE b/1 CONFIGURED->REMOVED")
}

// The NB view of a dump carries the values' metadata, as the reference's
// (plugin_scheduler.go, DumpValuesByDescriptor with NBView).
func TestNBViewCarriesMetadata(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "x")
	kv, ok := dump(s, kvscheduler.NBView, "a/1")
	if !ok || kv.Metadata == nil {
		t.Errorf("NB view of a/1: %+v (%v), want its metadata", kv, ok)
	}
}

// A value obtained from the southbound (notified, or retrieved as the
// southbound's) has no last northbound operation, as in the reference
// (its ValueStatus.LastOperation is UNDEFINED for OBTAINED values).
func TestObtainedValueHasNoLastOperation(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, arrayDescriptor(sb, "a", "a/"))
	if err := s.PushSBNotification("a/1", "x", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	for _, k := range []string{"a/1", "a/1/x"} {
		if st := wantState(t, s, k, kvscheduler.Obtained); st.LastOp != kvscheduler.OpNone {
			t.Errorf("%s: last operation %s, want none", k, st.LastOp)
		}
	}
}
