package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// fixture is a scheduler with two descriptors, "app/" values depending on
// "db/" values of the same name, behind an event loop whose events put the
// value their name says.
type fixture struct {
	s    *kvscheduler.Scheduler
	loop *eventloop.Loop
	sb   *kvtest.Southbound
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	sb := kvtest.New()
	apps := sb.Descriptor("app", "app/")
	apps.Dependencies = func(key string, _ any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Label: "database", Key: "db/" + strings.TrimPrefix(key, "app/")}}
	}
	s := quietScheduler(t, kvscheduler.Options{}, sb.Descriptor("db", "db/"), apps)
	cfg := eventloop.DefaultConfig()
	cfg.EventLogLevel = logrus.DebugLevel
	f := &fixture{s: s, loop: startLoop(t, s, &cfg, putter{}), sb: sb}
	return f
}

// putter puts the key its event names ("put KEY") with the value "v".
type putter struct{}

func (putter) String() string                    { return "putter" }
func (putter) HandlesEvent(eventloop.Event) bool { return true }
func (putter) Revert(eventloop.Event) error      { return nil }
func (putter) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}
func (putter) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	key := strings.TrimPrefix(ev.GetName(), "put ")
	txn.Put(key, "v")
	return "put " + key, nil
}

func (f *fixture) dashboard(t testing.TB, opts dashboard.Options) (*dashboard.Dashboard, *httptest.Server) {
	t.Helper()
	opts.Scheduler, opts.Loop = f.s, f.loop
	d, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return d, srv
}

// push pushes ev as a blocking event and waits for it.
func (f *fixture) push(t testing.TB, ev *eventlooptest.Event) {
	t.Helper()
	ev.Blocking = true
	if err := f.loop.PushEvent(ev); err != nil {
		t.Fatal(err)
	}
	if err := ev.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) put(t *testing.T, key string, value any) {
	t.Helper()
	if _, err := f.s.StartNBTransaction().SetValue(key, value).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string, into any) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, body)
		}
	}
	return string(body)
}

var zeroTime time.Time

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// readUntil reads r into buf until buf holds want or r ends.
func readUntil(r io.Reader, buf []byte, want string) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if strings.Contains(string(buf[:n]), want) || err != nil {
			return n, err
		}
	}
	return n, nil
}
