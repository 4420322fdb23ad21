package kvscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

func resync(t *testing.T, s *kvscheduler.Scheduler, typ kvscheduler.ResyncType, kvs ...any) {
	t.Helper()
	txn := s.StartNBTransaction().WithResync(typ)
	for i := 0; i+1 < len(kvs); i += 2 {
		txn.SetValue(kvs[i].(string), kvs[i+1])
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFullResyncEmptySouthbound(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	resync(t, s, kvscheduler.FullResync, "b/1", "x|a/1", "a/1", "x")
	wantOps(t, sb, "create a/1", "create b/1")
	wantSB(t, sb, map[string]any{"a/1": "x", "b/1": "x|a/1"})
}

func TestFullResyncNonEmptySouthbound(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	sb.Set("a/1", "v1", false)
	sb.Set("a/2", "old", false)
	sb.Set("a/9", "obsolete", false)
	sb.Set("a/sb", "owned", true)
	register(t, s, sb.Descriptor("a", "a/"))
	resync(t, s, kvscheduler.FullResync, "a/1", "v1", "a/2", "new", "a/3", "v")
	wantOps(t, sb, "delete a/9", "create a/3", "update a/2")
	wantSB(t, sb, map[string]any{"a/1": "v1", "a/2": "new", "a/3": "v", "a/sb": "owned"})
	wantState(t, s, "a/sb", kvscheduler.Obtained)
	wantState(t, s, "a/1", kvscheduler.Configured)
	// The southbound-owned value is left alone by later resyncs too.
	resync(t, s, kvscheduler.FullResync, "a/1", "v1")
	wantOps(t, sb, "delete a/2", "delete a/3")
	wantSB(t, sb, map[string]any{"a/1": "v1", "a/sb": "owned"})
}

func TestRetrieveOrderFollowsRetrieveDependencies(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	x := sb.Descriptor("x", "x/")
	x.RetrieveDependencies = []string{"y"}
	y := sb.Descriptor("y", "y/")
	y.RetrieveDependencies = []string{"z"}
	register(t, s, x, y, sb.Descriptor("z", "z/"))
	resync(t, s, kvscheduler.FullResync)
	var got []string
	for _, o := range sb.Ops(true) {
		got = append(got, o.Descriptor)
	}
	if !reflect.DeepEqual(got, []string{"z", "y", "x"}) {
		t.Fatalf("retrieve order %v", got)
	}
	w := sb.Descriptor("w", "w/")
	w.RetrieveDependencies = []string{"v"}
	v := sb.Descriptor("v", "v/")
	v.RetrieveDependencies = []string{"w"}
	register(t, s, w)
	if err := s.RegisterDescriptor(context.Background(), v); !errors.Is(err, kvscheduler.ErrInvalidDescriptor) {
		t.Fatalf("cycle accepted: %v", err)
	}
}

func TestUpstreamResync(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "x", "a/2", "x")
	sb.Set("a/9", "unknown", false)
	sb.ResetOps()
	resync(t, s, kvscheduler.UpstreamResync, "a/1", "y")
	wantOps(t, sb, "delete a/2", "update a/1")
	if len(sb.Ops(true)) != 0 {
		t.Fatal("upstream resync retrieved")
	}
	wantSB(t, sb, map[string]any{"a/1": "y", "a/9": "unknown"})
}

func TestDownstreamResyncRepairsDrift(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "a/1", "x", "a/2", "x", "b/1", "x|a/1")
	sb.Remove("a/1")
	sb.Remove("b/1")
	sb.Set("a/2", "drifted", false)
	sb.ResetOps()
	// Values in a downstream resync are ignored: the last desired state wins.
	resync(t, s, kvscheduler.DownstreamResync, "a/7", "ignored")
	wantOps(t, sb, "create a/1", "create b/1", "update a/2")
	wantSB(t, sb, map[string]any{"a/1": "x", "a/2": "x", "b/1": "x|a/1"})
}

func TestNotificationsSatisfyDependencies(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/1", "x|sb/link")
	wantState(t, s, "b/1", kvscheduler.Pending)
	if err := s.PushSBNotification("sb/link", "up", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantOps(t, sb, "create b/1")
	wantState(t, s, "sb/link", kvscheduler.Obtained)
	if err := s.PushSBNotification("sb/link", nil, nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantOps(t, sb, "delete b/1")
	wantState(t, s, "b/1", kvscheduler.Pending)
	wantState(t, s, "sb/link", kvscheduler.NonExistent)
}

// TestRetrieveDuplicatesAndStrangers: a key a Retrieve reports twice is
// taken once (the first time) and the second is an error of the record;
// so is a key the descriptor does not select. Keys are marked as read per
// descriptor: another descriptor's read of the same transaction does not
// count for it.
func TestRetrieveDuplicatesAndStrangers(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.Retrieve = func(context.Context, []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		// a/1 twice with one value: a duplicate, skipped and recorded (twice
		// with different values the read fails: see
		// TestAdv4ContradictoryReadIsNotTakenForTheValue).
		return []kvscheduler.KVWithMetadata{{Key: "a/1", Value: "v1"}, {Key: "a/1", Value: "v1"}, {Key: "b/1", Value: "x"}}, nil
	}
	register(t, s, a, sb.Descriptor("b", "b/"))
	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("a/1", "v1").Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range rec.Errors {
		msgs = append(msgs, e.Error())
	}
	want := []string{`kvscheduler: retrieve a: "a/1" skipped: retrieved twice`,
		`kvscheduler: retrieve a: "b/1" skipped: key not selected by the descriptor`}
	if !reflect.DeepEqual(msgs, want) {
		t.Fatalf("errors %q, want %q", msgs, want)
	}
	// Read as v1, which is wanted: nothing to do for a/1.
	wantOps(t, sb)
	wantState(t, s, "a/1", kvscheduler.Configured)
}
