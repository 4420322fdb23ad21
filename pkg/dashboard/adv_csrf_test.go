package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// TestAdvAnotherSiteCannotWriteThroughTheDashboardsListener: docs/dashboard.md
// says the dashboard is read-only and that the existing resync request
// (POST /scheduler/downstream-resync) "is not reachable from the page". The
// example operator serves it on the dashboard's own listener and origin
// (examples/webapp/operator buildMux), and it answers a cross-site form
// post: any page the operator's user opens can make the operator commit
// downstream resyncs (a plain <form method=post> needs no CORS preflight),
// as often as it likes. Nothing checks Origin, a token or the content type.
func TestAdvAnotherSiteCannotWriteThroughTheDashboardsListener(t *testing.T) {
	f := newFixture(t)
	f.put(t, "db/a", "v")
	d, err := dashboard.New(dashboard.Options{Scheduler: f.s, Loop: f.loop})
	if err != nil {
		t.Fatal(err)
	}
	// The listener as the example operator builds it.
	mux := http.NewServeMux()
	d.Mount(mux)
	mux.Handle("/scheduler/", schedulerhttp.New(f.s))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	before := len(f.s.TransactionHistory(zeroTime, zeroTime))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/scheduler/downstream-resync", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	// What a browser sends for a form on http://attacker.example.
	req.Header.Set("Origin", "http://attacker.example")
	req.Header.Set("Referer", "http://attacker.example/")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	recs := f.s.TransactionHistory(zeroTime, zeroTime)
	if len(recs) > before {
		last := recs[len(recs)-1]
		t.Errorf("a cross-site POST got %s and committed transaction #%d (%s %s)", resp.Status, last.SeqNum, last.Type, last.Resync)
	}
}
