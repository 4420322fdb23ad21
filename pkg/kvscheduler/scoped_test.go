package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// retrieved lists what the southbound was asked to read since the last
// ResetOps: a key per value for RetrieveKeys, the descriptor's name for a
// whole Retrieve.
func retrieved(sb *kvtest.Southbound) []string {
	var out []string
	for _, o := range sb.Ops(true) {
		if o.Operation == "retrieve" {
			out = append(out, o.Key)
		}
	}
	return out
}

func repair(s *kvscheduler.Scheduler, keys ...string) (*kvscheduler.TxnRecord, error) {
	return s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys(keys...).Commit(context.Background())
}

// TestScopedDownstreamResyncRepairsOnlyItsKeys damages three values out of
// band and repairs two: only those two are read back and repaired, the
// third stays as it is until a resync of its own, and nothing else is
// read. Before WithResyncKeys, a repair was a downstream resync of
// everything: it read every value and repaired all three.
func TestScopedDownstreamResyncRepairsOnlyItsKeys(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), sb.Descriptor("b", "b/"))
	for i := range 50 {
		mustSet(t, s, fmt.Sprintf("a/%d", i), "v", fmt.Sprintf("b/%d", i), "v")
	}
	sb.ResetOps()
	sb.Remove("a/1")
	sb.Set("b/2", "drifted", false)
	sb.Remove("a/3")

	rec, err := repair(s, "a/1", "b/2")
	if err != nil {
		t.Fatal(err)
	}
	if got := retrieved(sb); !slices.Equal(got, []string{"a/1", "b/2"}) {
		t.Errorf("the repair read %d values: %v, want only a/1 and b/2", len(got), got)
	}
	wantOps(t, sb, "create a/1", "update b/2")
	if !slices.Equal(rec.ResyncKeys, []string{"a/1", "b/2"}) {
		t.Errorf("record's resync keys %v", rec.ResyncKeys)
	}
	if _, ok := sb.Values()["a/3"]; ok {
		t.Fatal("a/3 was repaired by a resync not scoped to it")
	}
	wantState(t, s, "a/3", kvscheduler.Configured) // as far as the scheduler knows

	// Its own repair brings it back.
	if _, err := repair(s, "a/3"); err != nil {
		t.Fatal(err)
	}
	wantOps(t, sb, "create a/3")
	wantState(t, s, "a/3", kvscheduler.Configured)
}

// TestScopedDownstreamResyncWithoutRetrieveKeys falls back to Retrieve for
// a descriptor without RetrieveKeys and still touches only its keys.
func TestScopedDownstreamResyncWithoutRetrieveKeys(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	d.RetrieveKeys = nil
	register(t, s, d)
	mustSet(t, s, "a/1", "v", "a/2", "v")
	sb.ResetOps()
	sb.Remove("a/1")
	sb.Remove("a/2")
	if _, err := repair(s, "a/2"); err != nil {
		t.Fatal(err)
	}
	if got := retrieved(sb); !slices.Equal(got, []string{"a"}) {
		t.Errorf("retrieved %v, want one Retrieve of a", got)
	}
	wantOps(t, sb, "create a/2")
}

// TestScopedDownstreamResyncThatCannotReadChangesNothing: as for a whole
// resync, a failed read is the transaction's error and the descriptor's
// values get no operation on the strength of it.
func TestScopedDownstreamResyncThatCannotReadChangesNothing(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "v")
	sb.ResetOps()
	sb.Remove("a/1")
	sb.FailNext("retrieve", "a", errors.New("cache not synced"))
	_, err := repair(s, "a/1")
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Retrieve) != 1 || te.Retrieve[0].Descriptor != "a" {
		t.Fatalf("error %v, want a TransactionError naming the unread descriptor a", err)
	}
	wantOps(t, sb)
	if _, err := repair(s, "a/1"); err != nil {
		t.Fatal(err)
	}
	wantOps(t, sb, "create a/1")
}

// TestScopedResyncKeysNeedADownstreamResync: keys with another resync
// type are a mistake, not silently ignored.
func TestScopedResyncKeysNeedADownstreamResync(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	for _, r := range []kvscheduler.ResyncType{kvscheduler.NoResync, kvscheduler.FullResync, kvscheduler.UpstreamResync} {
		if _, err := s.StartNBTransaction().WithResync(r).WithResyncKeys("a/1").Commit(context.Background()); err == nil {
			t.Errorf("%s resync with keys: no error", r)
		}
	}
}

// TestFailedOperationRereadsOnlyItsKey: after an operation fails, the
// scheduler reads back what it left behind through RetrieveKeys (that one
// key), not by reading every value of the descriptor.
func TestFailedOperationRereadsOnlyItsKey(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	for i := range 50 {
		mustSet(t, s, fmt.Sprintf("a/%d", i), "v")
	}
	sb.ResetOps()
	sb.FailNext("update", "a/1", errors.New("southbound down"))
	if _, err := s.StartNBTransaction().SetValue("a/1", "w").Commit(context.Background()); err == nil {
		t.Fatal("the update did not fail")
	}
	if got := retrieved(sb); !slices.Equal(got, []string{"a/1"}) {
		t.Errorf("after the failed update the scheduler read %v, want only a/1", got)
	}
}
