package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestAllowedHostsFlag: --allowed-hosts takes comma-separated names, with
// or without a port, and refuses URLs (TestMakeRun checks that the
// listener then answers those names and refuses others).
func TestAllowedHostsFlag(t *testing.T) {
	hosts, err := parseHosts(" dash.example.test, proxy.example.test:8443 ,,")
	if err != nil || !slices.Equal(hosts, []string{"dash.example.test", "proxy.example.test:8443"}) {
		t.Errorf("parseHosts: %q, %v", hosts, err)
	}
	if _, err := parseHosts("https://dash.example.test/"); err == nil || !strings.Contains(err.Error(), "--allowed-hosts") {
		t.Errorf("parseHosts of a URL: %v, want an error naming the flag", err)
	}
}
