package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// sseMsg is one Server-Sent Event.
type sseMsg struct{ event, data string }

// readSSE reads events from r until stop returns true for one of them or r
// ends, and returns them all.
func readSSE(r io.Reader, stop func(sseMsg) bool) []sseMsg {
	var out []sseMsg
	var cur sseMsg
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.event != "":
			out = append(out, cur)
			if stop(cur) {
				return out
			}
			cur = sseMsg{}
		}
	}
	return out
}

// newScheduler returns a scheduler with a "db/" descriptor backed by kvtest.
func newScheduler(t *testing.T, opts kvscheduler.Options) *kvscheduler.Scheduler {
	t.Helper()
	return quietScheduler(t, opts, kvtest.New().Descriptor("db", "db/"))
}

func commit(t *testing.T, s *kvscheduler.Scheduler, key string) uint64 {
	t.Helper()
	rec, err := s.StartNBTransaction().SetValue(key, "v").Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rec.SeqNum
}

// firstFlushBlocks is a browser whose connection is slow to open: the
// first Flush (right after the headers) blocks until released; everything
// after goes through.
type firstFlushBlocks struct {
	header   http.Header
	released chan struct{}
	once     sync.Once
	mu       sync.Mutex
	out      strings.Builder
}

func (w *firstFlushBlocks) Header() http.Header { return w.header }
func (w *firstFlushBlocks) WriteHeader(int)     {}
func (w *firstFlushBlocks) Flush()              { w.once.Do(func() { <-w.released }) }
func (w *firstFlushBlocks) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(b)
}
func (w *firstFlushBlocks) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestAdvHelloIsNeverDropped: the stream's first message is "hello" (the
// page's only signal that it is live, and where it detects a restarted
// operator, docs/dashboard.md). But hello goes into the same drop-oldest
// ring as the backlog, before the history reader fills it: a page that
// reconnects behind more transactions than its buffer holds (here 4) gets
// "dropped" and the backlog, never "hello", and shows "reconnecting"
// forever while it is live (stats.connected stays false).
func TestAdvHelloIsNeverDropped(t *testing.T) {
	s := newScheduler(t, kvscheduler.Options{})
	first := commit(t, s, "db/0")
	var last uint64
	for i := 1; i <= 10; i++ {
		last = commit(t, s, "db/"+itoa(uint64(i)))
	}
	d, err := dashboard.New(dashboard.Options{Scheduler: s, StreamBuffer: 4})
	if err != nil {
		t.Fatal(err)
	}
	w := &firstFlushBlocks{header: http.Header{}, released: make(chan struct{})}
	req := httptest.NewRequest(http.MethodGet, "/ui/api/stream?txn="+itoa(first), nil)
	req.Host = "localhost" // the dashboard answers its own names only
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); d.ServeHTTP(w, req.WithContext(ctx)) }()
	// The reader pushes the 10 newer transactions into the buffer of 4
	// (hello is not buffered): 6 are dropped once all are read.
	controlplanetest.Eventually(t, time.Minute, "the backlog to be read", func() bool { return d.Dropped() >= 6 })
	close(w.released)
	want := "\"seq\":" + itoa(last) + ","
	controlplanetest.Eventually(t, time.Minute, "the newest transaction on the stream", func() bool {
		return strings.Contains(w.String(), want)
	})
	cancel()
	<-done
	msgs := readSSE(strings.NewReader(w.String()), func(sseMsg) bool { return false })
	var names []string
	for _, m := range msgs {
		names = append(names, m.event)
	}
	if len(msgs) == 0 || msgs[0].event != "hello" {
		t.Errorf("the stream does not start with hello: events %v", names)
	}
}

// gatedScheduler delays its history reads while closed, as a stream
// client's reader that the Go scheduler does not run for a while (a loaded
// machine) does.
type gatedScheduler struct {
	*kvscheduler.Scheduler
	mu      sync.Mutex
	gate    chan struct{}
	waiting int // readers held at the gate now
}

func (g *gatedScheduler) TransactionHistory(since, until time.Time) []*kvscheduler.TxnRecord {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		g.mu.Lock()
		g.waiting++
		g.mu.Unlock()
		<-gate
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}
	return g.Scheduler.TransactionHistory(since, until)
}

func (g *gatedScheduler) close() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedScheduler) open() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

// TestAdvTrimmedTransactionsAreCountedAsDropped: the stream promises that
// what a client gets and what its drop markers count add up to everything
// that happened, and the page reloads its graph only on a marker. Records
// the scheduler trims (HistoryMaxCount, HistoryMaxAge) before the client's
// reader reads them vanish without a marker: here the transaction that
// created db/x is trimmed, the stream goes on with later ones, and the
// page's live graph never learns that db/x exists (CONFIGURED in the
// scheduler).
func TestAdvTrimmedTransactionsAreCountedAsDropped(t *testing.T) {
	g := &gatedScheduler{Scheduler: newScheduler(t, kvscheduler.Options{HistoryMaxCount: 5})}
	commit(t, g.Scheduler, "db/start")
	resp := streamAtTheGate(t, g, dashboard.Options{})
	created := commit(t, g.Scheduler, "db/x")
	for i := range 10 {
		commit(t, g.Scheduler, "db/filler-"+itoa(uint64(i)))
	}
	end := commit(t, g.Scheduler, "db/end")
	g.open()
	msgs := readSSE(resp.Body, func(m sseMsg) bool {
		return m.event == "txn" && strings.Contains(m.data, "\"seq\":"+itoa(end)+",")
	})
	var sawX, marker bool
	var got []string
	for _, m := range msgs {
		got = append(got, m.event+" "+m.data[:min(len(m.data), 40)])
		marker = marker || m.event == "dropped"
		sawX = sawX || m.event == "txn" && strings.Contains(m.data, "\"key\":\"db/x\"")
	}
	if !sawX && !marker {
		t.Errorf("transaction #%d (db/x created), and the fillers after it up to the first sent, were neither sent nor counted in a dropped marker; "+
			"the scheduler has db/x %s, the page never hears of it; the stream sent:\n%s",
			created, g.GetValueStatus("db/x").State, strings.Join(got, "\n"))
	}
}

// TestAdvEventsTheLoopForgotAreCountedAsDropped is the events' side of
// TestAdvTrimmedTransactionsAreCountedAsDropped: when fewer events are new
// than the client's buffer holds, the reader copies what the loop's
// history still has after the last one it sent and counts nothing for
// those the history no longer holds (Config.EventHistoryMaxRecords below
// StreamBuffer, or the age limit). 30 events happen between two reads, the
// history keeps 10, the stream sends 10 and no marker.
func TestAdvEventsTheLoopForgotAreCountedAsDropped(t *testing.T) {
	cfg := eventloop.DefaultConfig()
	cfg.EventHistoryMaxRecords = 10
	cfg.PermanentlyRecordedInitPeriod = eventloop.Minutes{}
	s := newScheduler(t, kvscheduler.Options{})
	loop := startLoop(t, s, &cfg, putter{})
	f := &fixture{s: s, loop: loop}
	g := &gatedScheduler{Scheduler: s}
	resp := streamAtTheGate(t, g, dashboard.Options{Loop: loop})
	for i := range 30 {
		f.push(t, eventlooptest.NewUpdate("put db/e"+itoa(uint64(i))))
	}
	g.open()
	msgs := readSSE(resp.Body, func(m sseMsg) bool { return m.event == "event" && strings.Contains(m.data, "put db/e29") })
	events, marker := 0, false
	for _, m := range msgs {
		marker = marker || m.event == "dropped"
		if m.event == "event" {
			events++
		}
	}
	if events < 30 && !marker {
		t.Errorf("30 events happened; the stream sent %d and no dropped marker", events)
	}
}

// streamAtTheGate serves a dashboard over g with opts (polling every 10 ms),
// opens its stream, and, once the client is live (hello), closes g and
// waits until the stream's reader is held at it, before it reads anything
// newer. It returns the stream's response, closed with the test.
func streamAtTheGate(t *testing.T, g *gatedScheduler, opts dashboard.Options) *http.Response {
	t.Helper()
	opts.Scheduler, opts.PollInterval = g, 10*time.Millisecond
	srv := serveDashboard(t, opts)
	resp, err := http.Get(srv.URL + "/ui/api/stream")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	readSSE(resp.Body, func(m sseMsg) bool { return m.event == "hello" })
	g.close() // the reader stops after its events, before its next round
	controlplanetest.Eventually(t, time.Minute, "the stream's reader at the gate", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.waiting > 0
	})
	return resp
}
