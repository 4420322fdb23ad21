package dashboard_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// TestAdvALocalhostDashboardIsNotReadByAnotherSite: the dashboard relies on
// binding to localhost (docs/dashboard.md "Where it listens") to keep what
// it shows (keys, errors, desired objects of every unmarked kind, events)
// on the machine. But it answers any Host: a web page the operator's user
// visits can point its own name at 127.0.0.1 (DNS rebinding) and then
// read /ui/api/* as same-origin requests, since the browser sends
// "Host: attacker.example:8089". Nothing checks the Host (or Origin)
// against the names of the listener.
func TestAdvALocalhostDashboardIsNotReadByAnotherSite(t *testing.T) {
	f := newFixture(t)
	f.put(t, "db/orders", map[string]string{"dsn": "postgres://app@db/orders"})
	_, srv := f.dashboard(t, dashboard.Options{})
	for _, path := range []string{"/ui/api/graph", "/ui/api/value?key=db/orders", "/ui/api/stream"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		// What a browser sends after attacker.example was rebound to the
		// listener's address.
		req.Host = "attacker.example" + srv.URL[strings.LastIndex(srv.URL, ":"):]
		req.Header.Set("Origin", "http://"+req.Host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 300)
		n, _ := io.ReadAtLeast(resp.Body, body, 1)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s with Host %s: %s, served: %s", path, req.Host, resp.Status, body[:n])
		}
	}
}
