package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// TestProtectRefusesOtherHostsOnTheWholeListener: the listener the example
// operator builds serves the scheduler's reads next to the dashboard;
// Protect refuses a rebound name on all of them, and serves IP addresses,
// localhost and the allowed names.
func TestProtectRefusesOtherHostsOnTheWholeListener(t *testing.T) {
	f := newFixture(t)
	f.put(t, "db/a", "v")
	d, err := dashboard.New(dashboard.Options{Scheduler: f.s, AllowedHosts: []string{"ops.example"}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Mount(mux)
	mux.Handle("/scheduler/", schedulerhttp.New(f.s))
	srv := httptest.NewServer(dashboard.Protect(mux, []string{"ops.example"}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, c := range []struct {
		host, path string
		want       int
	}{
		{"attacker.example" + port, "/scheduler/status", http.StatusForbidden},
		{"attacker.example" + port, "/ui/api/graph", http.StatusForbidden},
		{"localhost" + port, "/scheduler/status", http.StatusOK},
		{"127.0.0.1" + port, "/ui/api/graph", http.StatusOK},
		{"[::1]" + port, "/ui/api/graph", http.StatusOK},
		{"ops.example", "/ui/api/graph", http.StatusOK},
		{"ops.example" + port, "/scheduler/status", http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = c.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s with Host %s: %s, want %d", c.path, c.host, resp.Status, c.want)
		}
	}
}

// TestDashboardDoesNotListItsDirectoriesNorLetOthersFrameIt: /ui/vendor/
// is not listed, and every answer forbids framing.
func TestDashboardDoesNotListItsDirectoriesNorLetOthersFrameIt(t *testing.T) {
	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{})
	for path, want := range map[string]int{"/ui/vendor/": http.StatusNotFound, "/ui/": http.StatusOK} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %s, want %d", path, resp.Status, want)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("GET %s: X-Frame-Options %q, CSP %q: framing is not forbidden", path, resp.Header.Get("X-Frame-Options"), resp.Header.Get("Content-Security-Policy"))
		}
	}
}
