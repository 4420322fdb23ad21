package schedulerhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
// route/r2 via the missing eth9 in transaction #0.
func newFixture(t *testing.T, opts ...schedulerhttp.Option) *fixture {
	t.Helper()
	ctx := context.Background()
	s, sb := newScheduler(t)
	routes := sb.Descriptor("route", "route/")
	routes.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		via, _ := v.(string)
		return []kvscheduler.Dependency{{Key: "link/" + via}}
	}
	register(t, s, sb.Descriptor("link", "link/"), routes)
	if _, err := s.StartNBTransaction().SetValue("link/eth0", "up").SetValue("route/r1", "eth0").
		SetValue("route/r2", "eth9").WithDescription("setup").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return serve(t, s, sb, opts...)
}

// newScheduler starts a scheduler, closed when the test ends, and an
// in-memory southbound for its descriptors.
func newScheduler(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, kvtest.New()
}

// register registers descs with s.
func register(t *testing.T, s *kvscheduler.Scheduler, descs ...*kvscheduler.Descriptor) {
	t.Helper()
	for _, d := range descs {
		if err := s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
}

// serve serves s's API on a test server, closed when the test ends.
func serve(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound, opts ...schedulerhttp.Option) *fixture {
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

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValuesThatDoNotMarshal(t *testing.T) {
	ctx := context.Background()
	s, sb := newScheduler(t)
	register(t, s, sb.Descriptor("ch", "ch/"))
	if _, err := s.StartNBTransaction().SetValue("ch/1", make(chan int)).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := serve(t, s, sb)
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history", 200, &all)
	if v, ok := all[0].Values[0].Value.(string); !ok || !strings.HasPrefix(v, "0x") {
		t.Errorf("channel value = %#v", all[0].Values[0].Value)
	}
}

func TestNilScheduler(t *testing.T) {
	srv := httptest.NewServer(schedulerhttp.Handler(nil))
	defer srv.Close()
	f := &fixture{srv: srv}
	f.wantError(t, "GET", "/scheduler/status", 503, "no KV scheduler")
}
