package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A failed read holds back what is decided on it (rule 7): for an any-of
// dependency, unreadDeps asks whether a provider that was read meets it
// (unreadFor of each provider). A provider the southbound notified under
// a key no descriptor claims (accepted, "as a value that only satisfies
// dependencies") has no descriptor, and unreadFor reads its descriptor's
// name: the scheduler's goroutine panics on a nil pointer, and the
// process dies.
//
// n/1 is notified (no descriptor); a full resync whose read of x fails
// requests y/1, which depends on any of n/*.

func TestAdv5FailedReadWithANotifiedAnyOfProviderDoesNotCrash(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
	if err := s.PushSBNotification("n/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	sb.FailNext("retrieve", "x", errors.New("read fails"))
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("y/1", "v|n/*").Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Retrieve) == 0 {
		t.Fatalf("Commit returned %v, want a *TransactionError naming the failed read of x", err)
	}
	if got := sb.Values()["y/1"]; got != "v|n/*" {
		t.Errorf("y/1's dependency is met by n/1, a value that was not read by x: want it created, the southbound holds %v (%s)", got, advState(s, "y/1"))
	}
}

// The same nil descriptor through another path: a notification that
// removes a notified value (no descriptor), in a walk where a read failed
// (readUnknown's read of what an earlier failed read-back left unknown):
// holdUnread asks unreadFor about the notified value itself.
func TestAdv5NotifiedRemovalAfterAFailedReadDoesNotCrash(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("x", "x/"))
	if err := s.PushSBNotification("n/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "x/1", "a")
	sb.Remove("x/1")
	sb.FailNext("retrieve", "x", errors.New("read fails"), errors.New("read fails again"))
	if _, err := s.StartNBTransaction().SetValue("x/1", "b").Commit(ctx); err == nil {
		t.Fatal("the update of x/1 failed and its read-back too, Commit returned nil")
	}
	if err := s.PushSBNotification("n/1", nil, nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	if st := s.GetValueStatus("n/1"); st.State != kvscheduler.NonExistent {
		t.Errorf("n/1's removal was notified: %s", advState(s, "n/1"))
	}
}

// The most common setup of all: a property (a derived value no descriptor
// claims, the reference's usual way of exposing a value's state) goes with
// its base in a resync in which another descriptor's read failed. The
// delete of the property asks holdUnread, which asks unreadFor about the
// property's (nil) descriptor: the scheduler's goroutine panics.
//
// b/1 = v derives the property p/1; a full resync whose read of x fails
// no longer requests b/1.
func TestAdv5PropertyDeletedInAResyncWithAFailedReadDoesNotCrash(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(string, any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "p/1", Value: "up"}}
	}
	register(t, s, sb.Descriptor("x", "x/"), b)
	mustSet(t, s, "b/1", "v")
	wantState(t, s, "p/1", kvscheduler.Configured)
	sb.FailNext("retrieve", "x", errors.New("read fails"))
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Retrieve) == 0 {
		t.Fatalf("Commit returned %v, want a *TransactionError naming the failed read of x", err)
	}
	if _, ok := sb.Values()["b/1"]; ok {
		t.Errorf("b/1 is no longer requested and its descriptor was read: want it deleted (%s)", advState(s, "b/1"))
	}
}
