package schedulerhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

type fixture struct {
	s   *kvscheduler.Scheduler
	sb  *kvtest.Southbound
	srv *httptest.Server
}

// newFixture starts a scheduler with links and routes (a route depends on
// the link it goes via) and applies link/eth0, route/r1 via eth0 and
// route/r2 via the missing eth9 in transaction #1.
func newFixture(t *testing.T, opts ...schedulerhttp.Option) *fixture {
	t.Helper()
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
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
	if _, err := s.StartNBTransaction().SetValue("link/eth0", "up").SetValue("route/r1", "eth0").
		SetValue("route/r2", "eth9").WithDescription("setup").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(schedulerhttp.New(s, opts...))
	t.Cleanup(srv.Close)
	return &fixture{s: s, sb: sb, srv: srv}
}

func (f *fixture) do(t *testing.T, method, path string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// getJSON requests path and decodes the JSON answer into v after checking
// the status code.
func (f *fixture) getJSON(t *testing.T, method, path string, want int, v any) {
	t.Helper()
	code, hdr, body := f.do(t, method, path)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, code, want, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, body)
		}
	}
}

// wantError checks that the request fails with status code and a JSON
// error containing substr.
func (f *fixture) wantError(t *testing.T, method, path string, code int, substr string) {
	t.Helper()
	var e map[string]string
	f.getJSON(t, method, path, code, &e)
	if !strings.Contains(e["error"], substr) {
		t.Errorf("%s %s: error %q does not contain %q", method, path, e["error"], substr)
	}
}

func TestTxnHistory(t *testing.T) {
	f := newFixture(t)
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history", 200, &all)
	if len(all) != 1 || all[0].SeqNum != 1 || all[0].Description != "setup" || len(all[0].Executed) != 2 {
		t.Fatalf("history = %+v", all)
	}
	if all[0].Executed[0].Operation != "CREATE" || all[0].Executed[0].NewState != "CONFIGURED" {
		t.Errorf("first op = %+v", all[0].Executed[0])
	}

	var one schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?seq-num=1", 200, &one)
	if one.SeqNum != 1 || one.TxnType != "NB transaction" || len(one.Values) != 3 {
		t.Errorf("seq-num=1: %+v", one)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=99", 404, "#99")
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=x", 400, "seq-num")
	f.wantError(t, "GET", "/scheduler/txn-history?format=xml", 400, "format")
	f.wantError(t, "GET", "/scheduler/txn-history?since=a", 400, "since")
	if code, _, body := f.do(t, "HEAD", "/scheduler/txn-history"); code != 200 || body != "" {
		t.Errorf("HEAD: %d %q", code, body)
	}
	if code, _, body := f.do(t, "GET", "/scheduler/txn-history?format=TEXT"); code != 200 || !strings.Contains(body, "Transaction #1") {
		t.Errorf("text history: %d %q", code, body)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?until=b", 400, "until")
	f.wantError(t, "GET", "/scheduler/txn-history?since=100&until=50", 400, "before")
	f.wantError(t, "DELETE", "/scheduler/txn-history", 405, "DELETE")

	now := time.Now().Unix()
	var win []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?since="+strconv.FormatInt(now+3600, 10), 200, &win)
	if len(win) != 0 {
		t.Errorf("future window: %+v", win)
	}
	f.getJSON(t, "GET", "/scheduler/txn-history?until="+strconv.FormatInt(now-3600, 10), 200, &win)
	if len(win) != 0 {
		t.Errorf("past window: %+v", win)
	}
	f.getJSON(t, "GET", "/scheduler/txn-history?since="+strconv.FormatInt(now-60, 10)+
		"&until="+strconv.FormatInt(now+60, 10), 200, &win)
	if len(win) != 1 {
		t.Errorf("current window: %+v", win)
	}

	code, hdr, body := f.do(t, "GET", "/scheduler/txn-history?format=text&seq-num=1")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("text: %d %v", code, hdr)
	}
	rec, _ := f.s.GetRecordedTransaction(1)
	if body != rec.String() || !strings.Contains(body, "Transaction #1") {
		t.Errorf("text log = %q", body)
	}
}

func TestKeyTimeline(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.s.StartNBTransaction().SetValue("link/eth0", "down").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var tl schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=link/eth0", 200, &tl)
	if tl.Key != "link/eth0" || tl.Current.State != "CONFIGURED" || len(tl.Timeline) != 4 {
		t.Fatalf("timeline = %+v", tl)
	}
	wantEvents := []struct {
		seq          uint64
		event, op    string
		value, state string
	}{
		{1, "requested", "", `"up"`, ""},
		{1, "executed", "CREATE", `"up"`, "CONFIGURED"},
		{2, "requested", "", `"down"`, ""},
		{2, "executed", "UPDATE", `"down"`, "CONFIGURED"},
	}
	for i, w := range wantEvents {
		e := tl.Timeline[i]
		if e.SeqNum != w.seq || e.Event != w.event {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
			continue
		}
		if w.event == "requested" {
			if string(mustJSON(t, e.Value)) != w.value || e.OpJSON != nil {
				t.Errorf("entry %d = %+v, want %+v", i, e, w)
			}
			continue
		}
		if e.OpJSON == nil || e.Operation != w.op || string(mustJSON(t, e.NewValue)) != w.value || e.NewState != w.state {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}

	// A pending value was requested but nothing was executed yet.
	var pending schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=route/r2", 200, &pending)
	if len(pending.Timeline) != 1 || pending.Timeline[0].Event != "requested" || pending.Current.State != "PENDING" {
		t.Errorf("pending timeline = %+v", pending)
	}

	// The southbound provides the missing link: it is notified, and the
	// route waiting for it is created.
	if err := f.s.PushSBNotification("link/eth9", "up", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StartNBTransaction().Commit(ctx); err != nil { // waits for the notification
		t.Fatal(err)
	}
	var notified schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=link/eth9", 200, &notified)
	if len(notified.Timeline) != 1 || notified.Timeline[0].Event != "notified" || notified.Current.State != "OBTAINED" {
		t.Errorf("notified timeline = %+v", notified)
	}
	var created schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=route/r2", 200, &created)
	if n := len(created.Timeline); n != 2 || created.Timeline[1].Operation != "CREATE" || created.Current.State != "CONFIGURED" {
		t.Errorf("route/r2 timeline = %+v", created)
	}
	var d schedulerhttp.DumpView
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=link/eth9", 200, &d)
	if len(d.Values) != 1 || string(mustJSON(t, d.Values[0].Value)) != `"up"` || d.Values[0].ValueSeqNum != 3 {
		t.Errorf("dump of notified value = %+v", d)
	}

	f.wantError(t, "GET", "/scheduler/key-timeline", 400, "key")
	f.wantError(t, "GET", "/scheduler/key-timeline?key=nope", 404, "nope")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Key: "b/1"}, {AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{"c/"}}}}
	}
	b := sb.Descriptor("b", "b/")
	b.Dependencies = func(string, any) []kvscheduler.Dependency { return []kvscheduler.Dependency{{Key: "d/1"}} }
	for _, d := range []*kvscheduler.Descriptor{a, b} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("b/1", "y").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(schedulerhttp.Handler(s))
	defer srv.Close()
	f := &fixture{s: s, sb: sb, srv: srv}
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

func TestDump(t *testing.T) {
	f := newFixture(t)
	var d schedulerhttp.DumpView
	f.getJSON(t, "GET", "/scheduler/dump", 200, &d)
	if d.View != "cached" || len(d.Values) != 3 {
		t.Fatalf("dump = %+v", d)
	}
	if v := d.Values[0]; v.Key != "link/eth0" || string(mustJSON(t, v.Value)) != `"up"` || v.ValueSeqNum != 1 {
		t.Errorf("link = %+v", v)
	}
	// The cached view holds a pending value as it waits to be created.
	if v := d.Values[2]; v.Key != "route/r2" || string(mustJSON(t, v.Value)) != `"eth9"` || v.State != "PENDING" ||
		len(v.WaitingFor) != 1 || v.Origin != "NB" || v.Metadata != nil || v.ValueSeqNum != 0 {
		t.Errorf("pending route = %+v", v)
	}
	if v := d.Values[0]; v.Origin != "NB" || string(mustJSON(t, v.Metadata)) != "1" {
		t.Errorf("link metadata = %+v", v)
	}
	if deps := d.Values[1].Dependencies; len(deps) != 1 || deps[0].Key != "link/eth0" || !deps[0].Met {
		t.Errorf("route/r1 dependencies = %+v", deps)
	}
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=route/&view=internal", 200, &d)
	if len(d.Values) != 2 || d.Metadata != nil {
		t.Errorf("routes = %+v", d)
	}
	f.getJSON(t, "GET", "/scheduler/dump?descriptor=link", 200, &d)
	if len(d.Values) != 1 || d.Values[0].Key != "link/eth0" || len(d.Metadata) != 1 || d.Metadata["eth0"] == nil {
		t.Errorf("links = %+v", d)
	}
	f.wantError(t, "GET", "/scheduler/dump?view=x", 400, "view")

	// The southbound owns link/eth1; the northbound changes link/eth0,
	// which fails, so the views differ.
	f.sb.Set("link/eth1", "sb", true)
	if _, err := f.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.sb.FailNext("update", "link/eth0", errors.New("boom"))
	if _, err := f.s.StartNBTransaction().SetValue("link/eth0", "down").Commit(t.Context()); err == nil {
		t.Fatal("update did not fail")
	}
	values := func(d schedulerhttp.DumpView) string {
		var b strings.Builder
		for _, v := range d.Values {
			b.WriteString(v.Key + "=" + string(mustJSON(t, v.Value)) + "/" + v.Origin + "/" + v.State + " ")
		}
		return b.String()
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=nb&descriptor=link", 200, &d)
	if got := values(d); d.View != "NB" || got != `link/eth0="down"/NB/FAILED ` || d.Metadata == nil {
		t.Errorf("NB view = %s (%+v)", got, d)
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=SB&key-prefix=link/", 200, &d)
	if got := values(d); d.View != "SB" || got != `link/eth0="up"/NB/FAILED link/eth1="sb"/SB/OBTAINED ` {
		t.Errorf("SB view = %s", got)
	}
	if d.Values[1].Metadata == nil {
		t.Errorf("obtained value without metadata: %+v", d.Values[1])
	}
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=link/", 200, &d)
	if got := values(d); d.View != "cached" || got != `link/eth0="up"/NB/FAILED link/eth1="sb"/SB/OBTAINED ` {
		t.Errorf("cached view = %s", got)
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=SB&key-prefix=route/r2", 200, &d)
	if len(d.Values) != 0 {
		t.Errorf("pending value in SB view: %+v", d)
	}
}

func TestDownstreamResyncRepairsDrift(t *testing.T) {
	f := newFixture(t)
	f.sb.Remove("link/eth0")
	f.sb.ResetOps()
	var rec schedulerhttp.TxnJSON
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &rec)
	if rec.ResyncType != "Downstream" || rec.SeqNum != 2 {
		t.Errorf("record = %+v", rec)
	}
	if got := f.sb.Values()["link/eth0"]; got != "up" {
		t.Errorf("link/eth0 in southbound = %v; ops %v", got, f.sb.OpStrings())
	}
	if st := f.s.GetValueStatus("link/eth0"); st.State != kvscheduler.Configured {
		t.Errorf("status = %+v", st)
	}
	// The scheduler retries a value with the options of the transaction
	// that set it, so a resync cannot ask for retries: the parameter it
	// once had is refused rather than ignored, and nothing is committed.
	for _, v := range []string{"true", "1", "false", "maybe", ""} {
		f.wantError(t, "POST", "/scheduler/downstream-resync?retry="+v, 400, "parameter retry is not supported")
	}
	if recs := f.s.TransactionHistory(time.Time{}, time.Time{}); len(recs) != 2 {
		t.Errorf("%d transactions after refused resyncs, want 2", len(recs))
	}

	// A failed re-create is reported, and the answer says that the
	// scheduler does not retry it (the value was set without retry
	// options, which are the ones the scheduler applies).
	f.sb.Remove("link/eth0")
	f.sb.FailNext("create", "link/eth0", errors.New("boom"))
	var failed schedulerhttp.ResyncResult
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &failed)
	if len(failed.Errors) != 1 || !strings.Contains(failed.Errors[0], "boom") ||
		len(failed.NotRetrying) != 1 || failed.NotRetrying[0] != "link/eth0" {
		t.Errorf("failed resync = %+v", failed)
	}
	// The route over the link is removed with it and waits for it; the
	// explanation shows that the link failed, and why.
	var r1 schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=route/r1", 200, &r1)
	if r1.State != "PENDING" || len(r1.WaitingFor) != 1 || r1.WaitingFor[0].Key != "link/eth0" ||
		r1.WaitingFor[0].State != "FAILED" || r1.WaitingFor[0].Error != "boom" {
		t.Errorf("route over the failed link = %+v", r1)
	}
	f.wantError(t, "GET", "/scheduler/downstream-resync", 405, "GET")
	code, hdr, _ := f.do(t, "GET", "/scheduler/downstream-resync")
	if code != 405 || hdr.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow=%q", code, hdr.Get("Allow"))
	}
}

func TestDownstreamResyncClosed(t *testing.T) {
	f := newFixture(t)
	_ = f.s.Close()
	f.wantError(t, "POST", "/scheduler/downstream-resync", 503, "closed")
}

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
	_, _, body = f.do(t, "GET", "/scheduler/graph?format=dot&txn=1")
	if !strings.Contains(body, `fillcolor=palegreen, color=gold, penwidth=4];`) || !strings.Contains(body, "transaction #1") {
		t.Errorf("txn=1 not highlighted:\n%s", body)
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

func TestUnknownPath(t *testing.T) {
	f := newFixture(t)
	f.wantError(t, "GET", "/scheduler/nope", 404, "no such resource")
	f.wantError(t, "GET", "/scheduler", 404, "no such resource")
	// Paths are matched whole (see TestMountedBelowPrefix); a trailing
	// slash is ignored.
	f.wantError(t, "GET", "/api/scheduler/status", 404, "StripPrefix")
	var all []schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status/", 200, &all)
}

func TestValuesThatDoNotMarshal(t *testing.T) {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sb := kvtest.New()
	if err := s.RegisterDescriptor(ctx, sb.Descriptor("ch", "ch/")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartNBTransaction().SetValue("ch/1", make(chan int)).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, sb: sb, srv: httptest.NewServer(schedulerhttp.Handler(s))}
	defer f.srv.Close()
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history", 200, &all)
	if v, ok := all[0].Values[0].Value.(string); !ok || !strings.HasPrefix(v, "0x") {
		t.Errorf("channel value = %#v", all[0].Values[0].Value)
	}
}

func TestDownstreamResyncValueWithRetry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// The value's own retry options are the ones the scheduler applies; a
	// long period keeps the retry from running during the test.
	if _, err := f.s.StartNBTransaction().SetValue("link/eth1", "up").
		WithRetry(kvscheduler.RetryOptions{Period: time.Hour}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.sb.Remove("link/eth1")
	f.sb.FailNext("create", "link/eth1", errors.New("boom"))
	var res schedulerhttp.ResyncResult
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &res)
	if len(res.Errors) != 1 || len(res.NotRetrying) != 0 {
		t.Errorf("resync = %+v", res)
	}
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=link/eth1", 200, &st)
	if st.State != "RETRYING" || st.Error != "boom" {
		t.Errorf("status = %+v", st)
	}
}

func TestNilScheduler(t *testing.T) {
	srv := httptest.NewServer(schedulerhttp.Handler(nil))
	defer srv.Close()
	f := &fixture{srv: srv}
	f.wantError(t, "GET", "/scheduler/status", 503, "no KV scheduler")
}

func TestGraphEdges(t *testing.T) {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sb := kvtest.New()
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
	for _, d := range []*kvscheduler.Descriptor{ifd, sb.Descriptor("addr", "addr/"), route} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.StartNBTransaction().SetValue("if/a", "x").SetValue("route/1", "r").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, sb: sb, srv: httptest.NewServer(schedulerhttp.Handler(s))}
	defer f.srv.Close()
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

func TestTxnHistoryRanges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 4 { // transactions #2 to #5
		if _, err := f.s.StartNBTransaction().SetValue("link/eth0", strconv.Itoa(i)).Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(query string) string {
		t.Helper()
		var recs []schedulerhttp.TxnJSON
		f.getJSON(t, "GET", "/scheduler/txn-history?"+query, 200, &recs)
		var out []string
		for _, r := range recs {
			out = append(out, strconv.FormatUint(r.SeqNum, 10))
		}
		return strings.Join(out, ",")
	}
	now := time.Now().Unix()
	window := "since=" + strconv.FormatInt(now-60, 10) + "&until=" + strconv.FormatInt(now+60, 10)
	for query, want := range map[string]string{
		"":                   "1,2,3,4,5",
		"from=2&to=4":        "2,3,4",
		"from=4":             "4,5",
		"to=2":               "1,2",
		"from=9":             "",
		"first=2":            "1,2",
		"first=0":            "",
		"first=99":           "1,2,3,4,5",
		"last=2":             "4,5",
		"last=99":            "1,2,3,4,5",
		"first=1&last=1":     "1",
		"from=3&first=1":     "3,4,5",
		"from=5&to=5&last=3": "5",
		window + "&from=5":   "1,2,3,4,5",
		"since=" + strconv.FormatInt(now+3600, 10) + "&first=2": "",
	} {
		if got := seqs(query); got != want {
			t.Errorf("%q: got %q, want %q", query, got, want)
		}
	}
	// seq-num wins over everything.
	var one schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?seq-num=3&from=1&first=2&"+window, 200, &one)
	if one.SeqNum != 3 {
		t.Errorf("seq-num with ranges = %+v", one)
	}
	if code, _, body := f.do(t, "GET", "/scheduler/txn-history?format=text&last=1"); code != 200 ||
		!strings.Contains(body, "Transaction #5") || strings.Contains(body, "Transaction #4") {
		t.Errorf("text last=1: %d %q", code, body)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?from=4&to=2", 400, "before")
	f.wantError(t, "GET", "/scheduler/txn-history?from=x", 400, "from")
	f.wantError(t, "GET", "/scheduler/txn-history?to=-1", 400, "to")
	f.wantError(t, "GET", "/scheduler/txn-history?first=a", 400, "first")
	f.wantError(t, "GET", "/scheduler/txn-history?last=1.5", 400, "last")
	// A malformed parameter is reported even when another selection wins.
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=1&last=x", 400, "last")
}

func TestStatusLabeledDependencies(t *testing.T) {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sb := kvtest.New()
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
	for _, desc := range []*kvscheduler.Descriptor{a, sb.Descriptor("b", "b/"), c, d} {
		if err := s.RegisterDescriptor(ctx, desc); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = s.StartNBTransaction().SetValue("a/1", "x").SetValue("c/1", "y").SetValue("d/1", "z").Commit(ctx)
	f := &fixture{s: s, sb: sb, srv: httptest.NewServer(schedulerhttp.Handler(s))}
	defer f.srv.Close()
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

// TestTimeBoundsOutOfRange: a time that parses as int64 Unix seconds but
// lies outside what time.Time and JSON can represent (years 1 to 9999)
// wraps around in time.Unix and so selects nothing, or everything; it is
// answered with a 400 naming the parameter instead.
func TestTimeBoundsOutOfRange(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ query, param string }{
		{"/scheduler/txn-history?until=9223372036854775000", "until"},
		{"/scheduler/txn-history?since=-9223372036854775808", "since"},
		{"/scheduler/txn-history?since=0&until=9223372036854775807", "until"},
		{"/scheduler/txn-history?until=253402300800", "until"},
		{"/scheduler/txn-history?since=-62135596801", "since"},
		{"/scheduler/txn-history?since=99999999999999999999", "since"},
		{"/scheduler/graph-snapshot?time=9223372036854775000", "time"},
		{"/scheduler/graph?format=dot&time=-9223372036854775808", "time"},
	} {
		t.Run(c.query, func(t *testing.T) { f.wantError(t, "GET", c.query, 400, "parameter "+c.param) })
	}
	// The bounds of the range itself are accepted.
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?since=-62135596800&until=253402300799", 200, &all)
	if len(all) != 1 {
		t.Errorf("widest window = %+v", all)
	}
}
