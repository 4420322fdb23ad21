package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStandbyDashboardReloadsItself: the dashboard's URL is printed before
// the operator runs; a browser opened then gets a page that reloads itself
// until it does (and says why it waits), not a dead end.
func TestStandbyDashboardReloadsItself(t *testing.T) {
	h := &swappable{}
	h.standby("not started <yet>")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, `http-equiv="refresh"`) ||
		!strings.Contains(body, "not started &lt;yet&gt;") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Errorf("standby /ui/: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/scheduler/status", nil))
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), "refresh") {
		t.Errorf("standby /scheduler/status: %d %q", rec.Code, rec.Body.String())
	}
}
