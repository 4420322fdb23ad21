package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
)

// heldAnswer delays the delivery of the first answer to a request that
// held picks: the answer is made when the request arrives (the state as it
// is then) and reaches the browser only when released, as a large answer
// (a graph of 10,000 values, some MB of JSON) does over a slow link while
// the stream goes on.
type heldAnswer struct {
	next     http.Handler
	held     func(*http.Request) bool
	once     sync.Once
	captured chan struct{}
	release  chan struct{}
}

func newHeldAnswer(next http.Handler, held func(*http.Request) bool) *heldAnswer {
	return &heldAnswer{next: next, held: held, captured: make(chan struct{}), release: make(chan struct{})}
}

// serveHeld serves the fixture's dashboard (mounted, with the loop) through
// a heldAnswer that holds the first request matching held, released at the
// latest when the test ends.
func (f *fixture) serveHeld(t *testing.T, held func(*http.Request) bool) (*heldAnswer, *httptest.Server) {
	t.Helper()
	d, err := dashboard.New(dashboard.Options{Scheduler: f.s, Loop: f.loop})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Mount(mux)
	slow := newHeldAnswer(mux, held)
	srv := httptest.NewServer(slow)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-slow.release:
		default:
			close(slow.release)
		}
	})
	return slow, srv
}

func (s *heldAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	held := false
	if s.held(r) {
		s.once.Do(func() { held = true })
	}
	if !held {
		s.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	close(s.captured)
	select {
	case <-s.release:
	case <-r.Context().Done():
		return
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// TestAdvAGraphLoadDoesNotUndoNewerStatuses: the page applies each
// transaction's statuses from the stream to its live graph, and on hello
// (and after a drop marker) loads the whole graph, replacing everything it
// holds (live.clear()). The graph's answer carries no transaction number,
// so an answer made before a transaction that reaches the page after that
// transaction's statuses undoes them: here app/a turns CONFIGURED on the
// stream, then the older graph arrives and the page shows it PENDING, for
// good (nothing else changes), while the scheduler has it CONFIGURED.
func TestAdvAGraphLoadDoesNotUndoNewerStatuses(t *testing.T) {
	f := newFixture(t)
	f.put(t, "app/a", "v")                                   // waits for db/a
	slow, srv := f.serveHeld(t, func(r *http.Request) bool { // the first whole graph
		return r.URL.Path == dashboard.Path+"api/graph" && !r.URL.Query().Has("seq")
	})

	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow.captured: // the page asked for the graph (on hello); app/a is PENDING in it
	case <-time.After(2 * time.Minute):
		t.Fatal("the page never loaded the graph")
	}
	f.put(t, "db/a", "v") // app/a is created: CONFIGURED
	row := `(r => r && r.dataset.state)(document.querySelector('#attention .row[data-key="app/a"]'))`
	browsertest.Wait[string](t, page, "app/a CONFIGURED from the stream", `(s => s === "CONFIGURED" && s)(`+row+`)`)
	close(slow.release)
	browsertest.Wait[bool](t, page, "the graph loaded", `window.lariatDashboard.graphLoads >= 1`)
	shown := browsertest.Eval[string](t, page, row)
	want := f.s.GetValueStatus("app/a").State.String()
	if shown != want {
		t.Errorf("after the graph loaded the page shows app/a %s; the scheduler has it %s", shown, want)
	}
}
