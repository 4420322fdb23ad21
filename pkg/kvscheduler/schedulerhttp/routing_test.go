package schedulerhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// TestMethodNotAllowed: every path serves one method (GET with HEAD, or
// POST); the others get 405 with Allow and a JSON error, and change
// nothing.
func TestMethodNotAllowed(t *testing.T) {
	f := newFixture(t)
	get := []string{schedulerhttp.TxnHistoryPath, schedulerhttp.KeyTimelinePath, schedulerhttp.StatusPath,
		schedulerhttp.DumpPath, schedulerhttp.GraphPath, schedulerhttp.GraphSnapshotPath}
	for _, path := range get {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			f.wantError(t, method, path, 405, "method "+method+" not allowed on "+path)
			if _, hdr, _ := f.do(t, method, path); hdr.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", method, path, hdr.Get("Allow"))
			}
		}
	}
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		f.wantError(t, method, schedulerhttp.DownstreamResyncPath, 405, "method "+method+" not allowed")
	}
	code, hdr, body := f.do(t, "HEAD", schedulerhttp.DownstreamResyncPath)
	if code != 405 || hdr.Get("Allow") != "POST" || body != "" {
		t.Errorf("HEAD resync: %d Allow=%q %q", code, hdr.Get("Allow"), body)
	}
	// None of the refused requests committed a resync.
	if recs := f.s.TransactionHistory(time.Time{}, time.Time{}); len(recs) != 1 {
		t.Errorf("%d transactions recorded, want only the setup", len(recs))
	}
	// The right methods still work.
	for _, path := range get[:4] {
		if code, _, _ := f.do(t, "HEAD", path+"?key=link/eth0"); code != 200 {
			t.Errorf("HEAD %s: %d", path, code)
		}
	}
}

// TestMountedBelowPrefix: the paths are matched whole, so an API served
// below a prefix is mounted with http.StripPrefix; it then answers there,
// errors included, as at its own paths.
func TestMountedBelowPrefix(t *testing.T) {
	f := newFixture(t)
	mux := http.NewServeMux()
	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug", schedulerhttp.New(f.s)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	g := &fixture{s: f.s, sb: f.sb, srv: srv}

	var st schedulerhttp.StatusJSON
	g.getJSON(t, "GET", "/debug/scheduler/status?key=route/r2", 200, &st)
	if st.State != "PENDING" {
		t.Errorf("status = %+v", st)
	}
	var res schedulerhttp.ResyncResult
	g.getJSON(t, "POST", "/debug/scheduler/downstream-resync", 200, &res)
	if res.SeqNum != 1 || res.ResyncType != "Downstream" {
		t.Errorf("resync = %+v", res)
	}
	var recs []schedulerhttp.TxnJSON
	g.getJSON(t, "GET", "/debug/scheduler/txn-history/?last=1", 200, &recs)
	if len(recs) != 1 || recs[0].SeqNum != 1 {
		t.Errorf("history = %+v", recs)
	}
	g.wantError(t, "DELETE", "/debug/scheduler/status", 405, "DELETE")
	g.wantError(t, "GET", "/debug/scheduler/nope", 404, "no such resource: /scheduler/nope")
	g.wantError(t, "GET", "/debug/scheduler/txn-history?until=9223372036854775807", 400, "parameter until")
	// Unstripped, the API is not there.
	if code, _, _ := g.do(t, "GET", "/scheduler/status"); code != 404 {
		t.Errorf("unprefixed path: %d", code)
	}
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
