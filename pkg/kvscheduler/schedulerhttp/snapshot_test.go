package schedulerhttp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
	clocktesting "k8s.io/utils/clock/testing"
)

// newSnapshotFixture applies route/r1 via the missing link/eth0 at t=1000
// (PENDING) and link/eth0 at t=1010, which makes the route CONFIGURED.
func newSnapshotFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s, err := kvscheduler.New(kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour, HistoryMaxAge: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	routes := sb.Descriptor("route", "route/")
	routes.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		via, _ := v.(string)
		return []kvscheduler.Dependency{{Key: "link/" + via}}
	}
	for _, d := range []*kvscheduler.Descriptor{sb.Descriptor("link", "link/"), routes} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.StartNBTransaction().SetValue("route/r1", "eth0").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if _, err := s.StartNBTransaction().SetValue("link/eth0", "up").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(schedulerhttp.New(s))
	t.Cleanup(srv.Close)
	return &fixture{s: s, sb: sb, srv: srv}
}

func TestGraphSnapshotJSON(t *testing.T) {
	f := newSnapshotFixture(t)
	var snap schedulerhttp.GraphSnapshotJSON
	f.getJSON(t, "GET", "/scheduler/graph-snapshot?time=1005", 200, &snap)
	if len(snap.Values) != 1 || snap.Values[0].Key != "route/r1" || snap.Values[0].State != "PENDING" ||
		len(snap.Values[0].Dependencies) != 1 || snap.Values[0].Dependencies[0].Met ||
		!snap.Time.Equal(time.Unix(1000, 0)) {
		t.Fatalf("at 1005: %+v", snap)
	}
	f.getJSON(t, "GET", "/scheduler/graph-snapshot?time=1010", 200, &snap)
	if len(snap.Values) != 2 || snap.Values[1].Key != "route/r1" || snap.Values[1].State != "CONFIGURED" ||
		!snap.Values[1].Dependencies[0].Met || snap.Values[0].State != "CONFIGURED" {
		t.Fatalf("at 1010: %+v", snap)
	}
	var bySeq schedulerhttp.GraphSnapshotJSON
	f.getJSON(t, "GET", "/scheduler/graph-snapshot?seq-num="+itoa(snap.SeqNum), 200, &bySeq)
	if bySeq.SeqNum != snap.SeqNum || len(bySeq.Values) != 2 {
		t.Fatalf("by seq: %+v", bySeq)
	}
	f.wantError(t, "GET", "/scheduler/graph-snapshot?time=999", 404, "before the oldest retained transaction")
	f.wantError(t, "GET", "/scheduler/graph-snapshot?seq-num=99", 404, "not retained")
	f.wantError(t, "GET", "/scheduler/graph-snapshot?time=soon", 400, "time")
	f.wantError(t, "GET", "/scheduler/graph-snapshot", 400, "required")
	f.wantError(t, "GET", "/scheduler/graph-snapshot?time=1&seq-num=1", 400, "exclusive")
}

func TestGraphDOTAtTime(t *testing.T) {
	f := newSnapshotFixture(t)
	code, _, body := f.do(t, "GET", "/scheduler/graph?format=dot&time=1005")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	for _, want := range []string{
		`"route/r1" [label="route/r1\nPENDING\n[route]"`,
		`"route/r1" -> "link/eth0" [style=dashed`,
		`"link/eth0" [label="link/eth0\nNONEXISTENT", style=dashed]`,
		"values after transaction #",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("DOT at 1005 lacks %q:\n%s", want, body)
		}
	}
	_, _, body = f.do(t, "GET", "/scheduler/graph?format=dot&time=1010")
	if !strings.Contains(body, `"route/r1" -> "link/eth0";`) || !strings.Contains(body, `link/eth0\nCONFIGURED`) {
		t.Errorf("DOT at 1010:\n%s", body)
	}
	f.wantError(t, "GET", "/scheduler/graph?format=dot&time=999", 404, "before the oldest")
	f.wantError(t, "GET", "/scheduler/graph?format=dot&time=x", 400, "time")
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

type jsonLink struct {
	Name string `json:"name"`
	MTU  int    `json:"mtu"`
}

// failingJSON has a MarshalJSON that fails, and panicJSON one that panics:
// values are opaque to the scheduler and may do either.
type failingJSON struct{ N int }

func (failingJSON) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON") }

type panicJSON struct{ N int }

func (panicJSON) MarshalJSON() ([]byte, error) { panic("no JSON") }

func TestHistoryValuesAsJSON(t *testing.T) {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	if err := s.RegisterDescriptor(ctx, sb.Descriptor("v", "v/")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartNBTransaction().SetValue("v/1", jsonLink{Name: "eth0", MTU: 1500}).
		SetValue("v/2", failingJSON{N: 7}).SetValue("v/3", &panicJSON{N: 8}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(schedulerhttp.New(s))
	t.Cleanup(srv.Close)
	f := &fixture{s: s, sb: sb, srv: srv}
	// Decoded generically, so that a JSON object and a string are told apart.
	var recs []struct {
		Values []struct {
			Key   string
			Value any
		} `json:"values"`
		Executed []struct {
			Key      string `json:"key"`
			NewValue any    `json:"newValue"`
		} `json:"executed"`
	}
	f.getJSON(t, "GET", "/scheduler/txn-history", 200, &recs)
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	want := map[string]any{
		"v/1": map[string]any{"name": "eth0", "mtu": float64(1500)},
		"v/2": "{N:7}",
		"v/3": "&{N:8}",
	}
	check := func(where, key string, got any) {
		t.Helper()
		if w, ok := want[key]; !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("%s %s = %#v, want %#v", where, key, got, w)
		}
	}
	for _, kv := range recs[0].Values {
		check("value", kv.Key, kv.Value)
	}
	if len(recs[0].Executed) != 3 {
		t.Fatalf("executed %+v", recs[0].Executed)
	}
	for _, op := range recs[0].Executed {
		check("executed", op.Key, op.NewValue)
	}
}
