package dashboard_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// quietLogger returns a logger that writes nowhere.
func quietLogger() *logrus.Logger {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	return quiet
}

// quietScheduler returns a scheduler built with opts that logs nowhere,
// closed with the test, with descs registered.
func quietScheduler(t testing.TB, opts kvscheduler.Options, descs ...*kvscheduler.Descriptor) *kvscheduler.Scheduler {
	t.Helper()
	opts.Logger = quietLogger()
	s, err := kvscheduler.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, d := range descs {
		if err := s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// adv2Scheduler is a scheduler with one kvtest descriptor per prefix.
func adv2Scheduler(t *testing.T, prefixes ...string) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	sb := kvtest.New()
	descs := make([]*kvscheduler.Descriptor, 0, len(prefixes))
	for i, p := range prefixes {
		descs = append(descs, sb.Descriptor("d"+itoa(uint64(i)), p))
	}
	return quietScheduler(t, kvscheduler.Options{}, descs...), sb
}

// startLoop starts an event loop that commits to s, with cfg and handlers,
// logging nowhere and closed with the test, and waits for its startup
// resync: the loop handles updates only once that ran.
func startLoop(t testing.TB, s *kvscheduler.Scheduler, cfg *eventloop.Config, handlers ...eventloop.EventHandler) *eventloop.Loop {
	t.Helper()
	loop, err := eventloop.New(eventloop.Options{Config: cfg, Handlers: handlers,
		Committer: loopcommit.New(s), Logger: logrus.NewEntry(quietLogger())})
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = loop.Close() })
	startup := eventlooptest.NewResync("startup")
	startup.Blocking = true
	if err := loop.PushEvent(startup); err != nil {
		t.Fatal(err)
	}
	if err := startup.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return loop
}

// serveDashboard serves a dashboard built with opts, closed with the test.
func serveDashboard(t testing.TB, opts dashboard.Options) *httptest.Server {
	t.Helper()
	d, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return srv
}

// serveValues commits each of values under its key to a scheduler with one
// descriptor for "held/", and serves a dashboard over it.
func serveValues(t *testing.T, values map[string]any) *httptest.Server {
	t.Helper()
	s, _ := adv2Scheduler(t, "held/")
	for key, v := range values {
		if _, err := s.StartNBTransaction().SetValue(key, v).Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return serveDashboard(t, dashboard.Options{Scheduler: s})
}

// checkValuesHide reports each key of values whose detail
// (/ui/api/value) shows any of secrets; it returns the details by key.
func checkValuesHide(t *testing.T, srv *httptest.Server, values map[string]any, secrets ...string) map[string]string {
	t.Helper()
	bodies := make(map[string]string, len(values))
	for key := range values {
		body := get(t, srv.URL+"/ui/api/value?key="+key, nil)
		bodies[key] = body
		for _, secret := range secrets {
			if strings.Contains(body, secret) {
				t.Errorf("GET /ui/api/value?key=%s shows the Secret's data: %s", key, body[:min(len(body), 500)])
				break
			}
		}
	}
	return bodies
}

// checkViewsHide reports each view of key's value (the graph, the value's
// detail, the transactions) that shows secret, which is what.
func checkViewsHide(t *testing.T, srv *httptest.Server, key, secret, what string) {
	t.Helper()
	for _, path := range []string{"/ui/api/graph", "/ui/api/value?key=" + key, "/ui/api/txns"} {
		if body := get(t, srv.URL+path, nil); strings.Contains(body, secret) {
			i := strings.Index(body, secret)
			t.Errorf("GET %s shows %s: ...%s...", path, what, body[max(0, i-200):min(len(body), i+100)])
		}
	}
}
