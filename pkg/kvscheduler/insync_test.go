package kvscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// The tests of this file pin the cases in which a resync must walk a
// value the southbound holds as requested (see insync.go): the in-sync
// shortcut must not take them.

// hashDescriptor compares values "x#n" by the part before "#" only, and
// derives from a value "a/k" the value "d/k" holding the part after it:
// two values it calls equal may derive different values.
func hashDescriptor(sb *kvtest.Southbound) *kvscheduler.Descriptor {
	d := sb.Descriptor("a", "a/")
	head := func(v any) string { h, _, _ := strings.Cut(v.(string), "#"); return h }
	d.ValueComparator = func(_ string, a, b any) bool { return head(a) == head(b) }
	d.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		_, tail, _ := strings.Cut(v.(string), "#")
		return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(key, "a/"), Value: tail}}
	}
	return d
}

func dump(s *kvscheduler.Scheduler, view kvscheduler.View, key string) (kvscheduler.KVWithMetadata, bool) {
	for _, kv := range s.DumpValues("", key, view) {
		if kv.Key == key {
			return kv, true
		}
	}
	return kvscheduler.KVWithMetadata{}, false
}

// A value equal to the one in the southbound whose derived values differ:
// the derived value is updated.
func TestResyncInSyncValueWithChangedDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, hashDescriptor(sb), sb.Descriptor("d", "d/"))
	mustSet(t, s, "a/1", "x#1")
	wantSB(t, sb, map[string]any{"a/1": "x#1", "d/1": "1"})
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/1", "x#2")
	wantOps(t, sb, "update d/1")
	wantSB(t, sb, map[string]any{"a/1": "x#1", "d/1": "2"})
}

// A value in sync records the request as the walk would: the northbound's
// value and the applied (cached) value are the request; the SB view keeps
// the value the southbound holds, which no Update replaced (see
// TestAdv4EquivalentRequestIsNotReportedAsHeld).
func TestResyncInSyncValueRecordsTheRequest(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	head := func(v any) string { h, _, _ := strings.Cut(v.(string), "#"); return h }
	d.ValueComparator = func(_ string, a, b any) bool { return head(a) == head(b) }
	register(t, s, d)
	mustSet(t, s, "a/1", "x#1")
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/1", "x#2")
	wantOps(t, sb)
	for _, view := range []kvscheduler.View{kvscheduler.NBView, kvscheduler.CachedView} {
		if kv, _ := dump(s, view, "a/1"); kv.Value != "x#2" {
			t.Fatalf("%s view: %+v, want the request x#2", view, kv)
		}
	}
	if kv, _ := dump(s, kvscheduler.SBView, "a/1"); kv.Value != "x#1" {
		t.Fatalf("SB view: %+v, want x#1, which the southbound holds", kv)
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
}

// A value whose update failed although the southbound took it: the
// resync finds it as requested and clears the failure.
func TestResyncInSyncValueClearsFailure(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "v1")
	sb.FailNext("update", "a/1", errors.New("lost reply"))
	if err := set(t, s, "a/1", "v2"); err == nil {
		t.Fatal("no error")
	}
	wantState(t, s, "a/1", kvscheduler.Failed)
	sb.Set("a/1", "v2", false)
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/1", "v2")
	wantOps(t, sb)
	if st := wantState(t, s, "a/1", kvscheduler.Configured); st.Error != nil {
		t.Fatalf("status %+v", st)
	}
}

// The same with a retry armed: the resync clears it, and no retry runs.
func TestResyncInSyncValueDisarmsRetry(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "v1")
	sb.FailNext("update", "a/1", errors.New("lost reply"))
	_, err := s.StartNBTransaction().SetValue("a/1", "v2").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	wantState(t, s, "a/1", kvscheduler.Retrying)
	sb.Set("a/1", "v2", false)
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/1", "v2")
	wantState(t, s, "a/1", kvscheduler.Configured)
	clk.Step(time.Minute)
	barrier(t, s)
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type == kvscheduler.RetryFailedOps {
			t.Fatalf("a retry ran: %v", r)
		}
	}
	wantOps(t, sb)
}

// A PENDING value found in the southbound as requested: its dependency
// is still missing, so it is deleted.
func TestResyncInSyncPendingValueIsDeleted(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/1", "x|a/1")
	wantState(t, s, "b/1", kvscheduler.Pending)
	sb.Set("b/1", "x|a/1", false)
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "b/1", "x|a/1")
	wantOps(t, sb, "delete b/1")
	wantState(t, s, "b/1", kvscheduler.Pending)
}

// A value in sync whose metadata the read returns changed: what
// DumpValues shows has the new metadata.
func TestResyncInSyncValueMetadataChanged(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "v")
	before, _ := dump(s, kvscheduler.SBView, "a/1")
	sb.Set("a/1", "v", false) // the same value, with new metadata
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "a/1", "v")
	wantOps(t, sb)
	after, _ := dump(s, kvscheduler.SBView, "a/1")
	md, _ := s.MetadataMap("a")
	got, _ := md.Get("1")
	if reflect.DeepEqual(after.Metadata, before.Metadata) || after.Metadata != got {
		t.Fatalf("metadata %v before, %v after, %v in the map", before.Metadata, after.Metadata, got)
	}
}

// A value in sync whose dependency the same resync finds gone (and no
// longer wants): the value is deleted into PENDING.
func TestResyncInSyncValueWithDependencyGone(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "a/1", "x", "b/1", "y|a/1")
	wantState(t, s, "b/1", kvscheduler.Configured)
	sb.Remove("a/1")
	sb.ResetOps()
	resync(t, s, kvscheduler.FullResync, "b/1", "y|a/1")
	wantOps(t, sb, "delete b/1")
	if st := wantState(t, s, "b/1", kvscheduler.Pending); !reflect.DeepEqual(st.UnmetDependencies, []string{"a/1"}) {
		t.Fatalf("status %+v", st)
	}
}
