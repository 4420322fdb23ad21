package schedulerhttp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

func TestGraphDOT(t *testing.T) {
	f := newFixture(t)
	code, hdr, body := f.do(t, "GET", "/scheduler/graph?format=dot")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/vnd.graphviz") {
		t.Fatalf("dot: %d %v %s", code, hdr, body)
	}
	for _, want := range []string{
		"digraph kvscheduler {",
		`"link/eth0" [label="link/eth0\nCONFIGURED\n[link]"`,
		`"route/r2" [label="route/r2\nPENDING\n[route]"`,
		`"route/r2" -> "link/eth9" [style=dashed`,
		`"link/eth9" [label="link/eth9\nNONEXISTENT", style=dashed]`,
		`"route/r1" -> "link/eth0";`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("DOT lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "gold") {
		t.Errorf("highlight without txn:\n%s", body)
	}
	_, _, body = f.do(t, "GET", "/scheduler/graph?format=dot&txn=0")
	if !strings.Contains(body, `fillcolor=palegreen, color=gold, penwidth=4];`) || !strings.Contains(body, "transaction #0") {
		t.Errorf("txn=0 not highlighted:\n%s", body)
	}
	if strings.Contains(body, `"route/r2" [label="route/r2\nPENDING\n[route]", fillcolor=khaki, color=gold`) {
		t.Errorf("pending value highlighted although not changed:\n%s", body)
	}
	f.wantError(t, "GET", "/scheduler/graph?format=dot&txn=9", 404, "#9")
	f.wantError(t, "GET", "/scheduler/graph?txn=-1", 400, "txn")
	f.wantError(t, "GET", "/scheduler/graph?format=png", 400, "format")
}

func TestGraphSVGWithoutDot(t *testing.T) {
	f := newFixture(t, schedulerhttp.WithLookPath(func(string) (string, error) { return "", exec.ErrNotFound }))
	f.wantError(t, "GET", "/scheduler/graph", 501, "format=dot")
}

func TestGraphSVGRendering(t *testing.T) {
	// A script echoing its input stands in for dot: the handler must pipe
	// the DOT through the program found and serve its output as SVG.
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the fake dot")
	}
	fake := filepath.Join(t.TempDir(), "dot")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, schedulerhttp.WithLookPath(func(string) (string, error) { return fake, nil }))
	code, hdr, body := f.do(t, "GET", "/scheduler/graph")
	if code != 200 || hdr.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body, "digraph kvscheduler") {
		t.Errorf("svg: %d %v %s", code, hdr, body)
	}
	f2 := newFixture(t, schedulerhttp.WithLookPath(func(string) (string, error) { return "/nonexistent/dot", nil }))
	f2.wantError(t, "GET", "/scheduler/graph", 500, "dot failed")
}

func TestGraphEdges(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "addr/" + strings.TrimPrefix(key, "if/"), Value: v}}
	}
	route := sb.Descriptor("route", "route/")
	route.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{
			{Label: "interface", Key: "if/a"},
			{AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"addr/"}}},
			{Label: "vrf", AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"vrf/"}}},
			{Key: "if/b"},
		}
	}
	register(t, s, ifd, sb.Descriptor("addr", "addr/"), route)
	if _, err := s.StartNBTransaction().SetValue("if/a", "x").SetValue("route/1", "r").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := serve(t, s, sb)
	code, _, body := f.do(t, "GET", "/scheduler/graph?format=dot")
	if code != 200 {
		t.Fatalf("dot: %d %s", code, body)
	}
	for _, want := range []string{
		`"route/1" -> "if/a" [label="interface"];`,
		`"route/1" -> "addr/a" [label="any-ofaddr/"];`,
		`"route/1" -> "vrf" [style=dashed, color=red, label="unmet vrf"];`,
		`"route/1" -> "if/b" [style=dashed, color=red, label="unmet"];`,
		`"addr/a" -> "if/a" [style=dotted, label="derived from"];`,
		`"vrf" [label="vrf\nNONEXISTENT", style=dashed];`,
		`"if/b" [label="if/b\nNONEXISTENT", style=dashed];`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("DOT lacks %q:\n%s", want, body)
		}
	}
	if strings.Count(body, "->") != 5 {
		t.Errorf("want 5 edges:\n%s", body)
	}
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=addr/a", 200, &st)
	if st.BaseKey != "if/a" || !st.Derived {
		t.Errorf("derived status = %+v", st)
	}
	f.getJSON(t, "GET", "/scheduler/status?key=route/1", 200, &st)
	if len(st.Dependencies) != 4 || !st.Dependencies[1].Met || len(st.Dependencies[1].Keys) != 1 ||
		st.Dependencies[1].Keys[0] != "addr/a" || st.Dependencies[2].Met || st.Dependencies[2].Label != "vrf" {
		t.Errorf("route dependencies = %+v", st.Dependencies)
	}
}
