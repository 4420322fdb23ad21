package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

func snapValue(snap kvscheduler.GraphSnapshot, key string) (kvscheduler.ValueStatus, bool) {
	for _, v := range snap.Values {
		if v.Key == key {
			return v, true
		}
	}
	return kvscheduler.ValueStatus{}, false
}

func TestGraphSnapshot(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour, HistoryMaxAge: 24 * time.Hour})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("if", "if/")))

	if _, err := s.GraphSnapshot(clk.Now()); !errors.Is(err, kvscheduler.ErrOutsideHistory) {
		t.Fatalf("before any transaction: %v", err)
	}
	mustSet(t, s, "if/a", "a|if/b") // t=1000: a pending on b
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/c", "c") // t=1010: c configured
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/b", "b") // t=1020: b configured, a configured
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/c", nil) // t=1030: c removed

	for _, tc := range []struct {
		at   int64
		vals map[string]kvscheduler.ValueState
		aMet bool
	}{
		{1005, map[string]kvscheduler.ValueState{"if/a": kvscheduler.Pending}, false},
		{1010, map[string]kvscheduler.ValueState{"if/a": kvscheduler.Pending, "if/c": kvscheduler.Configured}, false},
		{1025, map[string]kvscheduler.ValueState{"if/a": kvscheduler.Configured, "if/b": kvscheduler.Configured, "if/c": kvscheduler.Configured}, true},
		{5000, map[string]kvscheduler.ValueState{"if/a": kvscheduler.Configured, "if/b": kvscheduler.Configured}, true},
	} {
		snap, err := s.GraphSnapshot(time.Unix(tc.at, 0))
		if err != nil {
			t.Fatalf("t=%d: %v", tc.at, err)
		}
		if len(snap.Values) != len(tc.vals) {
			t.Fatalf("t=%d: values %+v, want %v", tc.at, snap.Values, tc.vals)
		}
		for k, st := range tc.vals {
			v, ok := snapValue(snap, k)
			if !ok || v.State != st || v.Descriptor != "if" {
				t.Fatalf("t=%d: %s = %+v, want %s", tc.at, k, v, st)
			}
		}
		a, _ := snapValue(snap, "if/a")
		if len(a.Dependencies) != 1 || a.Dependencies[0].Key != "if/b" || a.Dependencies[0].Met != tc.aMet {
			t.Fatalf("t=%d: a dependencies %+v, want met=%v", tc.at, a.Dependencies, tc.aMet)
		}
		if snap.Time.After(time.Unix(tc.at, 0)) {
			t.Fatalf("t=%d: snapshot of %s", tc.at, snap.Time)
		}
		// The same point by sequence number.
		bySeq, err := s.GraphSnapshotAt(snap.SeqNum)
		if err != nil || len(bySeq.Values) != len(snap.Values) || !bySeq.Time.Equal(snap.Time) {
			t.Fatalf("t=%d: by seq %+v, %v", tc.at, bySeq, err)
		}
	}
	if _, err := s.GraphSnapshot(time.Unix(999, 0)); !errors.Is(err, kvscheduler.ErrOutsideHistory) {
		t.Fatalf("before the first transaction: %v", err)
	}
	if _, err := s.GraphSnapshotAt(1 << 40); !errors.Is(err, kvscheduler.ErrOutsideHistory) {
		t.Fatalf("unknown seq: %v", err)
	}
}

func TestGraphSnapshotTrimmedAndDerived(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour, HistoryMaxCount: 2})
	sb := kvtest.New()
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "addr/" + key[3:], Value: v}}
	}
	register(t, s, ifd, sb.Descriptor("addr", "addr/"))
	mustSet(t, s, "if/a", "x") // t=1000, trimmed below
	clk.Step(time.Second)
	mustSet(t, s, "if/b", "y") // t=1001
	clk.Step(time.Second)
	mustSet(t, s, "if/b", nil) // t=1002
	if _, err := s.GraphSnapshot(time.Unix(1000, 0)); !errors.Is(err, kvscheduler.ErrOutsideHistory) {
		t.Fatalf("trimmed point: %v", err)
	}
	snap, err := s.GraphSnapshot(time.Unix(1001, 0))
	if err != nil {
		t.Fatal(err)
	}
	// if/a was last changed by a trimmed record but is still in the graph.
	for _, k := range []string{"if/a", "addr/a", "if/b", "addr/b"} {
		if v, ok := snapValue(snap, k); !ok || v.State != kvscheduler.Configured {
			t.Fatalf("%s = %+v in %+v", k, v, snap.Values)
		}
	}
	if v, _ := snapValue(snap, "addr/b"); !v.Derived || v.BaseKey != "if/b" {
		t.Fatalf("derived %+v", v)
	}
	snap, err = s.GraphSnapshot(time.Unix(1002, 0))
	if err != nil || len(snap.Values) != 2 {
		t.Fatalf("%+v %v", snap, err)
	}
}

func TestGraphSnapshotHistoryDisabled(t *testing.T) {
	s := newSched(t, kvscheduler.Options{HistoryMaxCount: -1})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("if", "if/"))
	mustSet(t, s, "if/a", "x")
	if _, err := s.GraphSnapshot(time.Now()); !errors.Is(err, kvscheduler.ErrOutsideHistory) {
		t.Fatal(err)
	}
}

// TestGraphSnapshotSmallChanges covers transactions changing few values of
// a larger graph, whose statuses the history copies rather than references.
func TestGraphSnapshotSmallChanges(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour, HistoryMaxAge: 24 * time.Hour})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("if", "if/")))
	var kvs []any
	for i := range 10 {
		kvs = append(kvs, fmt.Sprintf("if/%d", i), "x")
	}
	mustSet(t, s, append(kvs, "if/p", "p|if/q")...) // t=1000
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/q", "q") // t=1010
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/p", "p2|if/q,if/r") // t=1020
	clk.Step(10 * time.Second)
	mustSet(t, s, "if/3", nil) // t=1030

	for _, tc := range []struct {
		at    int64
		n     int
		state kvscheduler.ValueState
		met   []bool
	}{
		{1000, 11, kvscheduler.Pending, []bool{false}},
		{1015, 12, kvscheduler.Configured, []bool{true}},
		{1020, 12, kvscheduler.Pending, []bool{true, false}},
		{1030, 11, kvscheduler.Pending, []bool{true, false}},
	} {
		snap, err := s.GraphSnapshot(time.Unix(tc.at, 0))
		if err != nil {
			t.Fatalf("t=%d: %v", tc.at, err)
		}
		if len(snap.Values) != tc.n {
			t.Fatalf("t=%d: %d values: %+v", tc.at, len(snap.Values), snap.Values)
		}
		p, _ := snapValue(snap, "if/p")
		if p.State != tc.state || len(p.Dependencies) != len(tc.met) {
			t.Fatalf("t=%d: if/p = %+v", tc.at, p)
		}
		for i, d := range p.Dependencies {
			if d.Met != tc.met[i] || len(d.Keys) != 1 || d.Keys[0] != d.Key {
				t.Fatalf("t=%d: if/p dependency %d = %+v", tc.at, i, d)
			}
		}
		if v, ok := snapValue(snap, "if/3"); ok != (tc.at < 1030) || ok && v.State != kvscheduler.Configured {
			t.Fatalf("t=%d: if/3 = %+v, %v", tc.at, v, ok)
		}
	}
}

// TestGraphSnapshotConcurrent reads snapshots while transactions run and
// the history is trimmed, for the race detector.
func TestGraphSnapshotConcurrent(t *testing.T) {
	s := newSched(t, kvscheduler.Options{HistoryMaxCount: 5})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("if", "if/")))
	mustSet(t, s, "if/base", "x")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			_ = set(t, s, fmt.Sprintf("if/%d", i%7), fmt.Sprintf("v%d|if/base", i))
		}
	}()
	for {
		select {
		case <-done:
			snap, err := s.GraphSnapshot(time.Now())
			if err != nil || len(snap.Values) != 8 {
				t.Fatalf("final snapshot %+v, %v", snap, err)
			}
			return
		default:
			recs := s.TransactionHistory(time.Time{}, time.Time{})
			if len(recs) > 0 {
				if _, err := s.GraphSnapshotAt(recs[0].SeqNum); err != nil && !errors.Is(err, kvscheduler.ErrOutsideHistory) {
					t.Fatal(err)
				}
			}
			_, _ = s.GraphSnapshot(time.Now())
		}
	}
}

// TestGraphSnapshotMatchesPublished checks every snapshot against the
// statuses read right after its transaction, over transactions changing
// few or many values.
func TestGraphSnapshotMatchesPublished(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("if", "if/")))
	type point struct {
		seq uint64
		sts []kvscheduler.ValueStatus
	}
	var points []point
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		txn := s.StartNBTransaction()
		for range 1 + rng.IntN(3)*rng.IntN(8) {
			k := fmt.Sprintf("if/%d", rng.IntN(20))
			switch rng.IntN(4) {
			case 0:
				txn.SetValue(k, nil)
			case 1:
				txn.SetValue(k, fmt.Sprintf("%d|if/%d,if/1*", i, rng.IntN(20)))
			default:
				txn.SetValue(k, fmt.Sprint(i))
			}
		}
		rec, err := txn.Commit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sts := s.ValueStatuses(nil)
		sort.Slice(sts, func(a, b int) bool { return sts[a].Key < sts[b].Key })
		points = append(points, point{rec.SeqNum, sts})
	}
	for _, p := range points {
		snap, err := s.GraphSnapshotAt(p.seq)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(snap.Values, p.sts) {
			t.Fatalf("#%d: snapshot\n%+v\nwant\n%+v", p.seq, snap.Values, p.sts)
		}
	}
}
