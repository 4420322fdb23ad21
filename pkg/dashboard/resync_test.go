package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// requestedResyncs counts the resyncs requested over HTTP that the loop
// processed.
func requestedResyncs(l *eventloop.Loop) int {
	n := 0
	for _, r := range l.History().Records() {
		if r.Name == (&eventloop.RequestedResync{}).GetName() {
			n++
		}
	}
	return n
}

func post(t *testing.T, url string, header http.Header) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestResyncNeedsTheExplicitFlag: the dashboard's one write action, a
// resync request, exists only with Options.AllowResync (405 without it, as
// every write); with it, a request from the page or a tool is queued (202)
// and the loop processes it, while one a page of another site sent is
// refused (403) and requests nothing. AllowResync without a loop that can
// resync is an error.
func TestResyncNeedsTheExplicitFlag(t *testing.T) {
	f := newFixture(t)
	_, readOnly := f.dashboard(t, dashboard.Options{})
	if code := post(t, readOnly.URL+"/ui/api/resync", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/api/resync without AllowResync: %d, want 405", code)
	}
	var info dashboard.Info
	get(t, readOnly.URL+"/ui/api/info", &info)
	if info.Resync {
		t.Error("info offers the resync without AllowResync")
	}

	_, srv := f.dashboard(t, dashboard.Options{AllowResync: true})
	get(t, srv.URL+"/ui/api/info", &info)
	if !info.Resync {
		t.Error("info does not offer the resync with AllowResync")
	}
	if code := post(t, srv.URL+"/ui/api/resync", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}}); code != http.StatusForbidden {
		t.Errorf("a cross-site POST /ui/api/resync: %d, want 403", code)
	}
	if code := post(t, srv.URL+"/ui/api/graph", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/api/graph with AllowResync: %d, want 405 (only the resync is writable)", code)
	}
	if code := post(t, srv.URL+"/ui/api/resync", http.Header{"Sec-Fetch-Site": {"same-origin"}}); code != http.StatusAccepted {
		t.Fatalf("a same-origin POST /ui/api/resync: %d, want 202", code)
	}
	// Events are processed in order: had the cross-site request been
	// queued, it would be recorded before the accepted one.
	controlplanetest.Eventually(t, time.Minute, "the requested resync processed", func() bool { return requestedResyncs(f.loop) > 0 })
	if n := requestedResyncs(f.loop); n != 1 {
		t.Errorf("%d requested resyncs processed, want the one accepted", n)
	}
	resp, err := http.Get(srv.URL + "/ui/api/resync")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /ui/api/resync: %s, want 404 (a GET requests nothing)", resp.Status)
	}
	if n := requestedResyncs(f.loop); n != 1 {
		t.Errorf("%d requested resyncs processed after a GET, want 1", n)
	}

	if _, err := dashboard.New(dashboard.Options{Scheduler: f.s, AllowResync: true}); err == nil || !strings.Contains(err.Error(), "AllowResync") {
		t.Errorf("AllowResync without a loop: %v, want an error naming it", err)
	}
}

// TestResyncButtonInABrowser: the page shows the resync button only when
// the operator allows it, and a click requests a resync that the loop
// processes and the events view shows.
func TestResyncButtonInABrowser(t *testing.T) {
	f := newFixture(t)
	_, readOnly := f.dashboard(t, dashboard.Options{})
	_, srv := f.dashboard(t, dashboard.Options{AllowResync: true})
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(readOnly.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the read-only page to load", `document.getElementById("live").className === "on"`)
	if !browsertest.Eval[bool](t, page, `document.getElementById("resync-bar").hidden`) {
		t.Error("the read-only dashboard shows the resync button")
	}
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the resync button", `!document.getElementById("resync-bar").hidden`)
	if err := chromedp.Do(page,
		chromedp.Click(chromedp.CSS(`#tabs button[data-tab="controllers"]`)),
		chromedp.Click(chromedp.CSS(`#resync`))); err != nil {
		t.Fatal(err)
	}
	status := browsertest.Wait[string](t, page, "the request's answer", `(s => s.startsWith("resync requested") && s)(document.getElementById("resync-status").textContent)`)
	controlplanetest.Eventually(t, time.Minute, "the requested resync processed", func() bool { return requestedResyncs(f.loop) == 1 })
	browsertest.Wait[bool](t, page, "the resync in the events view", `[...document.querySelectorAll("#events li")].some((l) => l.textContent.includes("Requested Resync"))`)
	t.Logf("the page says %q", status)
}
