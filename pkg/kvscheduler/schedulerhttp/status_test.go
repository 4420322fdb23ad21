package schedulerhttp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

func TestStatusExplainsPending(t *testing.T) {
	f := newFixture(t)
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=route/r2", 200, &st)
	if st.State != "PENDING" || st.Descriptor != "route" || len(st.WaitingFor) != 1 {
		t.Fatalf("status = %+v", st)
	}
	if w := st.WaitingFor[0]; w.Key != "link/eth9" || w.State != "NONEXISTENT" || w.Dependency != "link/eth9" {
		t.Errorf("waiting for %+v", w)
	}
	var r1 schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=route/r1", 200, &r1)
	if r1.State != "CONFIGURED" || r1.LastOp != "CREATE" || r1.WaitingFor != nil {
		t.Errorf("configured status = %+v", r1)
	}

	var all []schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status", 200, &all)
	if len(all) != 3 || all[0].Key != "link/eth0" || all[2].Key != "route/r2" || len(all[2].WaitingFor) != 1 {
		t.Errorf("all = %+v", all)
	}
	f.getJSON(t, "GET", "/scheduler/status?descriptor=route", 200, &all)
	if len(all) != 2 || all[0].Key != "route/r1" || all[1].Key != "route/r2" {
		t.Errorf("routes = %+v", all)
	}
	f.getJSON(t, "GET", "/scheduler/status?descriptor=none", 200, &all)
	if len(all) != 0 {
		t.Errorf("unknown descriptor = %+v", all)
	}
	f.wantError(t, "GET", "/scheduler/status?key=nope", 404, "nope")
	f.wantError(t, "GET", "/scheduler/status?key=", 400, "key")
	f.wantError(t, "GET", "/scheduler/status?key=a&descriptor=b", 400, "exclusive")
	f.wantError(t, "POST", "/scheduler/status", 405, "POST")
}

func TestStatusPendingChainAndAnyOf(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	a := sb.Descriptor("a", "a/")
	a.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Key: "b/1"}, {AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"c/"}}}}
	}
	b := sb.Descriptor("b", "b/")
	b.Dependencies = func(string, any) []kvscheduler.Dependency { return []kvscheduler.Dependency{{Key: "d/1"}} }
	register(t, s, a, b)
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("b/1", "y").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := serve(t, s, sb)
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=a/1", 200, &st)
	if st.State != "PENDING" || len(st.WaitingFor) != 2 {
		t.Fatalf("status = %+v", st)
	}
	w := st.WaitingFor[0]
	if w.Key != "b/1" || w.State != "PENDING" || len(w.UnmetDependencies) != 1 || w.UnmetDependencies[0] != "d/1" {
		t.Errorf("chained dependency = %+v", w)
	}
	w = st.WaitingFor[1]
	if w.Key != "" || len(w.AnyOfPrefixes) != 1 || w.AnyOfPrefixes[0] != "c/" || len(w.Candidates) != 0 {
		t.Errorf("any-of dependency = %+v", w)
	}
}

func TestStatusLabeledDependencies(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	a := sb.Descriptor("a", "a/")
	a.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{
			{Label: "uplink", Key: "b/1"},
			{Label: "some c", AnyOf: kvscheduler.AnyOfDependency{KeySelector: func(k string) bool { return strings.HasPrefix(k, "c/") }}},
			{AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"d/"}}},
		}
	}
	c := sb.Descriptor("c", "c/")
	c.Dependencies = func(string, any) []kvscheduler.Dependency { return []kvscheduler.Dependency{{Key: "x/1"}} }
	d := sb.Descriptor("d", "d/")
	d.Validate = func(string, any) error { return errors.New("never valid") }
	register(t, s, a, sb.Descriptor("b", "b/"), c, d)
	_, _ = s.StartNBTransaction().SetValue("a/1", "x").SetValue("c/1", "y").SetValue("d/1", "z").Commit(ctx)
	f := serve(t, s, sb)
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=a/1", 200, &st)
	if st.State != "PENDING" || len(st.WaitingFor) != 3 {
		t.Fatalf("status = %+v", st)
	}
	if w := st.WaitingFor[0]; w.Dependency != "uplink" || w.Key != "b/1" || w.State != "NONEXISTENT" {
		t.Errorf("labeled key dependency = %+v", w)
	}
	if w := st.WaitingFor[1]; w.Dependency != "some c" || w.Key != "" || len(w.Candidates) != 1 ||
		w.Candidates[0] != (schedulerhttp.KeyStateJSON{Key: "c/1", State: "PENDING"}) {
		t.Errorf("labeled any-of dependency = %+v", w)
	}
	// The invalid value never joined the graph, but the prefixes find it.
	if w := st.WaitingFor[2]; len(w.AnyOfPrefixes) != 1 || len(w.Candidates) != 1 ||
		w.Candidates[0] != (schedulerhttp.KeyStateJSON{Key: "d/1", State: "INVALID"}) {
		t.Errorf("any-of dependency on an invalid value = %+v", w)
	}
}
