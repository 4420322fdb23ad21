package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// openStream opens the dashboard's stream and returns the response and a
// function that closes it.
func openStream(t *testing.T, url string) (*http.Response, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/ui/api/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return resp, func() { resp.Body.Close(); cancel() }
}

// TestStreamClientsAreCapped: with MaxStreamClients 2, two pages are
// live; a third is refused with 503, a Retry-After and a message that
// names the cap, and holds no slot; once a page closes, a new one is
// served again.
func TestStreamClientsAreCapped(t *testing.T) {
	f := newFixture(t)
	d, srv := f.dashboard(t, dashboard.Options{MaxStreamClients: 2})
	var closers []func()
	for i := range 2 {
		resp, closeIt := openStream(t, srv.URL)
		closers = append(closers, closeIt)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %s", i, resp.Status)
		}
		buf := make([]byte, 4096)
		if n, err := readUntil(resp.Body, buf, "event: hello"); !strings.Contains(string(buf[:n]), "event: hello") {
			t.Fatalf("stream %d: no hello: %q %v", i, buf[:n], err)
		}
	}
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	if got := d.Clients(); got != 2 {
		t.Fatalf("%d clients counted, want 2", got)
	}
	for range 3 {
		resp, closeIt := openStream(t, srv.URL)
		body, _ := io.ReadAll(resp.Body)
		closeIt()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(string(body), "at most 2 live streams") {
			t.Fatalf("a stream over the cap: %s, Retry-After %q, %q", resp.Status, resp.Header.Get("Retry-After"), body)
		}
	}
	if got := d.Clients(); got != 2 {
		t.Fatalf("%d clients counted after refusals, want 2", got)
	}
	var info dashboard.Info
	get(t, srv.URL+"/ui/api/info", &info)
	if info.Streams != 2 || info.MaxStreams != 2 {
		t.Errorf("info says %d of %d streams, want 2 of 2", info.Streams, info.MaxStreams)
	}
	closers[0]()
	controlplanetest.Eventually(t, time.Minute, "the closed stream to be uncounted", func() bool { return d.Clients() == 1 })
	resp, closeIt := openStream(t, srv.URL)
	closers = append(closers, closeIt)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a stream after one closed: %s", resp.Status)
	}
}

// TestStreamClientsCapDefault: the zero options cap the streams at
// DefaultMaxStreamClients.
func TestStreamClientsCapDefault(t *testing.T) {
	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{})
	var info dashboard.Info
	get(t, srv.URL+"/ui/api/info", &info)
	if info.MaxStreams != dashboard.DefaultMaxStreamClients {
		t.Errorf("max streams %d, want the default %d", info.MaxStreams, dashboard.DefaultMaxStreamClients)
	}
}
