package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestAPageFollowsARestartedOperator: a page open while the operator is
// replaced by a new one (a new term of leadership numbers its events and
// transactions from 0 again) reconnects and shows the new operator's
// events and values, not only those numbered above the old one's.
func TestAPageFollowsARestartedOperator(t *testing.T) {
	srv, serve := swappableServer(t)
	old := newFixture(t)
	for i := range 5 {
		old.push(t, eventlooptest.NewUpdate(fmt.Sprintf("put db/old-%d", i)))
	}
	serve(old)
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the old operator's values", `!!document.querySelector('#graph g.node[data-key="db/old-4"]')`)

	restarted := newFixture(t)
	serve(restarted)
	srv.CloseClientConnections()
	browsertest.Wait[bool](t, page, "the new operator's (empty) graph", `document.querySelectorAll("#graph g.node").length === 0`)
	restarted.push(t, eventlooptest.NewUpdate("put db/new"))
	browsertest.Wait[bool](t, page, "the new operator's value, live", `!!document.querySelector('#graph g.node[data-key="db/new"]')`)
	browsertest.Wait[bool](t, page, "the new operator's event", `[...document.querySelectorAll("#events li")].some(e => e.textContent.includes("put db/new"))`)
}

// swappableServer serves the dashboard of the fixture last given to serve,
// so that a test can replace the operator behind a page left open, as a
// new term of leadership does.
func swappableServer(t *testing.T) (srv *httptest.Server, serve func(*fixture)) {
	t.Helper()
	var current atomic.Pointer[dashboard.Dashboard]
	serve = func(f *fixture) {
		d, err := dashboard.New(dashboard.Options{Scheduler: f.s, Loop: f.loop})
		if err != nil {
			t.Fatal(err)
		}
		current.Store(d)
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { current.Load().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	return srv, serve
}
